"""``CrafterTextEnv``: crafter's real engine behind the TextEnv contract.

Actions are readable names with an optional repeat count (``"move_west 3"``).
A repeated action is that many engine steps; it stops early when a move is
blocked, the player falls asleep, dies or the episode ends, and the
observation says which. An unknown action costs a turn as ``noop`` (time
passes in crafter whatever the agent types) and is reported as invalid.
``reset(seed=s)`` gives exactly the world and episode of
``crafter.Env(seed=s).reset()``. ``observation="detailed"`` adds the four
cells next to the player and two things of each kind in view (what AgentKit's
Crafter agent reads; :func:`~lorekit.envs.crafter.textobs.describe`).
``area=256`` plays a 256x256 world (crafter's default is 64x64) and
``length=0`` lets an episode end only on death: AgentKit's
``crafter.Env(area=(256, 256))`` with no step limit; ``reset(seed=s)`` then
gives the world of ``crafter.Env(area=(256, 256), seed=s)``.
"""

from __future__ import annotations

import re
from typing import Any

from lorekit.envs.base import Observation, Step, Task, TextEnv, pick_task
from lorekit.envs.crafter.core import ACHIEVEMENTS, CrafterCore, world_seed
from lorekit.envs.crafter.data import data, text
from lorekit.envs.crafter.expanded import DO_TARGETS, to_standard
from lorekit.envs.crafter.tasks import SPLITS, build_tasks
from lorekit.envs.crafter.textobs import OBSERVATIONS, canonical_actions, describe, faced

_ACTION = re.compile(r"^\s*([a-z_][a-z_ \-]*?)(?:\s+([+-]?\d+))?\s*$")
MAX_ACTION_CHARS = 200
NO_LIMIT_STEPS = 1_000_000
"""``max_steps`` of an env made with ``length=0``: the episode ends only on death
(AgentKit's setting), so the harness is given a bound that is never the limit."""
TASK_KINDS = ("all", "achievement", "score")
"""``tasks=``: every task, only the achievement tasks, or only the score episodes."""


class CrafterTextEnv(TextEnv):
    """Crafter for language agents; see the module docstring and ``manual()``."""

    name = "crafter"
    execution = "inline"  # ~0.2 ms a step, a few ms a reset once numba is warm

    def __init__(
        self,
        *,
        length: int = 10_000,
        expanded: bool = False,
        rng_parity: bool = True,
        tasks: str = "all",
        observation: str = "standard",
        area: int = 64,
    ) -> None:
        if length < 0:
            raise ValueError(f"length must be at least 1 (or 0: no limit), got {length}")
        if area < 16:
            raise ValueError(f"area must be at least 16 (cells a side), got {area}")
        if tasks not in TASK_KINDS:
            raise ValueError(f"tasks must be one of {', '.join(TASK_KINDS)}, got {tasks!r}")
        if observation not in OBSERVATIONS:
            raise ValueError(
                f"observation must be one of {', '.join(OBSERVATIONS)}, got {observation!r}"
            )
        self.detailed = observation == "detailed"
        self.max_steps = length or NO_LIMIT_STEPS
        self.expanded = expanded
        self.area = int(area)
        self.core = CrafterCore(
            area=(self.area, self.area), length=length or None, rng_parity=rng_parity
        )
        self._names = canonical_actions()
        if expanded:
            self._names = {k: v for k, v in self._names.items() if v != "do"}
            self._names.update({name: name for name in DO_TARGETS})
        self._aliases: dict[str, str] = {
            a: n for a, n in data()["aliases"].items() if n in self._names
        }
        self._max_repeat = int(data()["tasks"]["max_repeat"])
        every = {split: build_tasks(split) for split in SPLITS}
        self._tasks = {
            split: [t for t in listed if tasks in ("all", t.data["kind"])]
            for split, listed in every.items()
        }
        self._by_id = {t.id: t for listed in every.values() for t in listed}
        self._task: Task | None = None
        self._done = False
        self._success = False
        self.rewards: list[float] = []

    # -- catalogue -------------------------------------------------------------

    def tasks(self, split: str = "test") -> list[Task]:
        if split not in self._tasks:
            raise ValueError(f"unknown split {split!r}; known splits: {', '.join(SPLITS)}")
        return list(self._tasks[split])

    def splits(self) -> tuple[str, ...]:
        return SPLITS

    def action_forms(self) -> list[str]:
        return [f"{name} <count>" for name in self._names]

    def manual(self) -> str:
        return str(data()["manual"])

    def candidate_actions(self) -> list[str]:
        return list(self._names)

    # -- episode ---------------------------------------------------------------

    def reset(self, task: Task | str | None = None, seed: int | None = None) -> Observation:
        chosen = self._pick(task, seed)
        episode_seed = int(seed if seed is not None else chosen.data.get("seed", 0))
        self.core.reset(world_seed(episode_seed))
        self._task = chosen
        self._done = False
        self._success = False
        self.rewards = []
        opening = (
            describe(self.core, detailed=self.detailed)
            + "\n"
            + text("goal").format(goal=chosen.goal)
        )
        return Observation(opening, {"task_id": chosen.id, "seed": episode_seed})

    def _pick(self, task: Task | str | None, seed: int | None) -> Task:
        return pick_task(
            task,
            seed,
            self._tasks["test"],
            self._by_id,
            "unknown Crafter task {task!r}; ids look like 'collect_wood/seed-0'",
        )

    def step(self, action: str) -> Step:
        if self._task is None:
            return Step(text("not_started"), 0.0, True, {"valid": False, "success": False})
        if self._done:
            return Step(text("finished"), 0.0, True, {"valid": False, "success": self._success})
        raw = action if isinstance(action, str) else str(action)
        parsed = self._parse(raw)
        if isinstance(parsed, str):
            return self._advance("noop", 1, False, parsed)
        name, count = parsed
        return self._advance(name, count, True, None)

    def _parse(self, raw: str) -> tuple[str, int] | str:
        """(action name, count) or the error text to show."""
        shown = raw if len(raw) <= 60 else raw[:60] + "..."
        forms = ", ".join(self._names)
        match = _ACTION.match(raw.lower()) if len(raw) <= MAX_ACTION_CHARS else None
        if match is None:
            return text("invalid").format(action=shown, forms=forms)
        name = re.sub(r"[\s\-]+", "_", match.group(1).strip())
        name = self._aliases.get(name, name)
        if name not in self._names:
            return text("invalid").format(action=shown, forms=forms)
        count = int(match.group(2)) if match.group(2) is not None else 1
        if not 1 <= count <= self._max_repeat:
            return text("bad_count").format(action=shown, limit=self._max_repeat)
        return name, count

    def _advance(self, name: str, count: int, valid: bool, error: str | None) -> Step:
        core, player = self.core, self.core.players[0]
        before = {a for a in ACHIEVEMENTS if player.achievements[a] > 0}
        total, done_count, note = 0.0, 0, None
        for _ in range(count):
            engine_action = self._engine_action(name)
            start = (int(player.pos[0]), int(player.pos[1]))
            total += core.step([engine_action])[0]
            done_count += 1
            self._update_done()
            if not core.alive(player):
                note = text("stopped_dead")
                break
            if self._done:
                note = text("stopped_done")
                break
            if player.sleeping and name != "sleep":
                note = text("stopped_asleep")
                break
            moved = (int(player.pos[0]), int(player.pos[1])) != start
            if engine_action.startswith("move_") and not moved:
                direction, thing = faced(core, player)
                note = text("stopped_blocked").replace("{direction}", direction)
                note = note.replace("{thing}", thing)
                break
        lines = [error] if error else []
        fmt = {"action": name, "done": done_count, "asked": count}
        lines.append((note or text("repeated")).format(**fmt) if valid else "")
        new = [a for a in ACHIEVEMENTS if player.achievements[a] > 0 and a not in before]
        if new:
            lines.append(text("new_achievements").format(names=", ".join(new)))
        lines.append(describe(core, detailed=self.detailed))
        self.rewards.append(total)
        reward = self._task_reward(total)
        info: dict[str, Any] = {
            "valid": valid,
            "success": self._success,
            "ticks": core.step_count,
            "repeats": done_count,
            "crafter_reward": total,
            "achievements": dict(player.achievements),
            "inventory": dict(player.inventory),
            "dead": not core.alive(player),
        }
        if self._done and self._success and self._kind() == "achievement":
            lines.append(text("success").format(achievement=self._target()))
        elif self._done and core.over:
            lines.append(text("limit").format(length=self.max_steps))
        return Step("\n".join(line for line in lines if line), reward, self._done, info)

    def _engine_action(self, name: str) -> str:
        if name in DO_TARGETS:
            return to_standard(self.core, name)
        return self._names[name]

    def _kind(self) -> str:
        return str(self._task.data.get("kind", "score")) if self._task else "score"

    def _target(self) -> str:
        return str(self._task.data.get("achievement", "")) if self._task else ""

    def _update_done(self) -> None:
        player = self.core.players[0]
        dead = not self.core.alive(player)
        if self._kind() == "achievement":
            self._success = player.achievements.get(self._target(), 0) > 0
        else:
            self._success = not dead and self.core.over
        self._done = self._success or dead or self.core.over

    def _task_reward(self, crafter_reward: float) -> float:
        if self._kind() == "achievement":
            return 1.0 if self._success else 0.0
        return crafter_reward
