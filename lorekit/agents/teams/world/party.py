"""``CrafterParty``: K players in one crafter world, for teams of agents.

Every player has its own inventory, view and text observation; a step takes
one action per player (``"p1: move_west 3; p2: do"``) and may carry messages
(``"p1 say: found iron"``, ``"p1 tell p2: come north"``) that the others read
in their next observation. Tasks are collective: gather N of an item between
all players, wall in a given point with stone, or build the paper's staged
shelter (foundation, then walls, then roof; :mod:`.shelter`), checked on the
world map.
Time is counted both in environment ticks and in wall-clock seconds.

``peaceful=True`` makes a world without zombies or skeletons (see
:class:`~lorekit.envs.crafter.core.CrafterCore`): for studies of how a team
organizes and schedules its work, where players standing still while their
agents think would otherwise be killed at night. The default is crafter's
hostile world.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from lorekit import yamlio
from lorekit.agents.teams.world.shelter import StagedShelter, house_stages
from lorekit.envs.base import Observation, Step, Task, TextEnv, pick_task
from lorekit.envs.crafter.core import CrafterCore, world_seed
from lorekit.envs.crafter.data import data
from lorekit.envs.crafter.textobs import canonical_actions, describe

SPLITS: tuple[str, ...] = ("test", "dev")
_PART = re.compile(
    r"^\s*+(p\d++)(?:\s*+:\s*(.*?)|\s++say\s*+:\s*(.*?)|\s++tell\s++(p\d++)\s*+:\s*(.*?))\s*$"
)
_COMMAND = re.compile(r"^([a-z_]+)(?:\s+(\d+))?$")
_COLLECT_ACHIEVEMENT = {"drink": "collect_drink"}


PARTY_FILE = Path(__file__).with_name("party.yaml")


@functools.cache
def _settings() -> Mapping[str, Any]:
    """The party's texts and task settings (``party.yaml``), read once per process."""
    with PARTY_FILE.open(encoding="utf-8") as fh:
        loaded: dict[str, Any] = yamlio.safe_load(fh)
    return loaded


def build_party_tasks(split: str) -> list[Task]:
    """Collection and shelter tasks for each seed of ``split``."""
    settings = _settings()
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; known splits: {', '.join(SPLITS)}")
    first, last = settings["seeds"][split]
    tasks: list[Task] = []
    for seed in range(first, last):
        for item, amount in settings["collect"]:
            goal = str(settings["collect_goal"]).format(amount=amount, item=item)
            tasks.append(
                Task(f"collect-{amount}-{item}/seed-{seed}", goal, "collect",
                     {"kind": "collect", "item": item, "amount": amount, "seed": seed})
            )  # fmt: skip
        for dx, dy in settings["shelter"]:
            goal = str(settings["shelter_goal"]).format(where=_where(dx, dy), x=32 + dx, y=32 + dy)
            tasks.append(
                Task(f"shelter-{dx}_{dy}/seed-{seed}", goal, "shelter",
                     {"kind": "shelter", "offset": [dx, dy], "seed": seed})
            )  # fmt: skip
        tasks += _house_tasks(settings, seed)
    return tasks


def _where(dx: int, dy: int) -> str:
    """``3 north, 4 west``: an offset from the spawn point in words."""
    parts = (
        f"{abs(dy)} {'north' if dy < 0 else 'south'}" if dy else "",
        f"{abs(dx)} {'west' if dx < 0 else 'east'}" if dx else "",
    )
    return ", ".join(part for part in parts if part)


def _house_tasks(settings: Mapping[str, Any], seed: int) -> list[Task]:
    """The staged shelters of one seed: each stage's cells named in the goal."""
    tasks = []
    for dx, dy in settings["house"]:
        x, y = 32 + dx, 32 + dy
        stages = "; then ".join(
            str(settings["house_stage"]).format(
                name=s.name, item=s.item, cells=" ".join(f"{cx},{cy}" for cx, cy in s.cells)
            )
            for s in house_stages((x, y), settings["house_stages"])
        )
        goal = str(settings["house_goal"]).format(x=x, y=y, where=_where(dx, dy), stages=stages)
        tasks.append(
            Task(f"house-{dx}_{dy}/seed-{seed}", goal, "house",
                 {"kind": "house", "offset": [dx, dy], "seed": seed})
        )  # fmt: skip
    return tasks


class CrafterParty(TextEnv):
    """Several players in one world; see the module docstring."""

    name = "crafter-party"
    execution = "inline"  # same engine as CrafterTextEnv: sub-millisecond steps

    def __init__(self, players: int = 2, *, length: int = 2_000, peaceful: bool = False) -> None:
        if players < 2:
            raise ValueError(f"a party needs at least 2 players, got {players}")
        if not isinstance(peaceful, bool):  # "maybe" from a command line is not True
            raise ValueError(f"peaceful must be true or false, got {peaceful!r}")
        if isinstance(length, bool) or not isinstance(length, int) or length < 1:
            raise ValueError(f"length must be a whole number of ticks above 0, got {length!r}")
        self.max_steps = length
        self.peaceful = peaceful
        # Tasks name map cells relative to the centre of crafter's 64x64 area.
        self.core = CrafterCore(length=length, players=players, peaceful=self.peaceful)
        self.names = [f"p{i + 1}" for i in range(players)]
        self._actions = canonical_actions()
        self._aliases: dict[str, str] = dict(data()["aliases"])
        self._tasks = {split: build_party_tasks(split) for split in SPLITS}
        self._by_id = {t.id: t for tasks in self._tasks.values() for t in tasks}
        self._task: Task | None = None
        self.shelter: StagedShelter | None = None  # the staged shelter of a house task
        self._done = False
        self._success = False
        self._inbox: list[list[str]] = [[] for _ in self.names]
        self._started = 0.0
        self.messages: list[dict[str, Any]] = []

    def tasks(self, split: str = "test") -> list[Task]:
        if split not in self._tasks:
            raise ValueError(f"unknown split {split!r}; known splits: {', '.join(SPLITS)}")
        return list(self._tasks[split])

    def splits(self) -> tuple[str, ...]:
        return SPLITS

    def action_forms(self) -> list[str]:
        forms = [f"p1: {name} <count>" for name in self._actions]
        return [*forms, "p1 say: <text>", "p1 tell p2: <text>"]

    def manual(self) -> str:
        text = str(_settings()["manual"]).format(players=len(self.names))
        return text + str(_settings()["peaceful_note"]) if self.peaceful else text

    def candidate_actions(self) -> list[str]:
        return ["; ".join(f"{p}: {a}" for p in self.names) for a in self._actions]

    # -- episode -----------------------------------------------------------------

    def reset(self, task: Task | str | None = None, seed: int | None = None) -> Observation:
        chosen = self._pick(task, seed)
        episode_seed = int(seed if seed is not None else chosen.data.get("seed", 0))
        self.core.reset(world_seed(episode_seed))
        self._task = chosen
        self.shelter = None
        if chosen.data["kind"] == "house":
            layout = _settings()["house_stages"]
            self.shelter = StagedShelter(house_stages(self.shelter_point(chosen), layout))
            self.shelter.clear_site(self.core.world)
        self._done = self._success = False
        self._inbox = [[] for _ in self.names]
        self.messages = []
        self._started = time.perf_counter()
        return Observation(self._observe([]), {"task_id": chosen.id, "seed": episode_seed})

    def _pick(self, task: Task | str | None, seed: int | None) -> Task:
        return pick_task(
            task,
            seed,
            self._tasks["test"],
            self._by_id,
            "unknown party task {task!r}; ids look like 'collect-20-wood/seed-0'",
        )

    def shelter_point(self, task: Task) -> tuple[int, int]:
        dx, dy = task.data["offset"]
        return 32 + int(dx), 32 + int(dy)

    def step(self, action: str) -> Step:
        if self._task is None:
            return Step("No episode is running: call reset first.", 0.0, True,
                        {"valid": False, "success": False})  # fmt: skip
        if self._done:
            return Step("The episode is over; call reset.", 0.0, True,
                        {"valid": False, "success": self._success})  # fmt: skip
        plan, errors = self._parse(action if isinstance(action, str) else str(action))
        ticks = max((count for _, count in plan.values()), default=1)
        rewards = [0.0] * len(self.names)
        for tick in range(ticks):
            joint = [
                plan[i][0] if i in plan and tick < plan[i][1] else "noop"
                for i in range(len(self.names))
            ]
            for i, gained in enumerate(self.tick(joint)):
                rewards[i] += gained
            if self._done:
                break
        info: dict[str, Any] = {
            "valid": not errors,
            "success": self._success,
            "ticks": self.core.step_count,
            "wall_s": time.perf_counter() - self._started,
            "progress": self.progress(),
            "rewards": rewards,
            "observations": [describe(self.core, i) for i in range(len(self.names))],
        }
        return Step(self._observe(errors), self.task_reward(), self._done, info)

    def tick(self, joint: Sequence[str]) -> list[float]:
        """Advance the world one tick with one crafter action per player (``"noop"``
        to wait); returns each player's reward. For drivers that schedule players
        themselves (the team world); ``step`` is the text interface over it."""
        if self._task is None or self._done:
            raise RuntimeError("no episode is running: call reset before tick")
        rewards = self.core.step(joint)
        if self.shelter is not None:
            self.shelter.check(self.core.world, self.core.step_count)
        self._update_done()
        return rewards

    def task_reward(self) -> float:
        """The env's reward for the task as it stands: 1.0 once it is complete."""
        return 1.0 if self._success else 0.0

    @property
    def task(self) -> Task | None:
        """The running episode's task (None before reset)."""
        return self._task

    @property
    def done(self) -> bool:
        return self._done

    @property
    def success(self) -> bool:
        return self._success

    def progress_fraction(self) -> float:
        """How far the team is, from 0 to 1 (what ``progress()`` states in words)."""
        if self._task is None:
            return 0.0
        if self._task.data["kind"] == "collect":
            amount = int(self._task.data["amount"])
            return min(self.collected(self._task.data["item"]), amount) / amount
        if self.shelter is not None:
            return self.shelter.fraction(self.core.world)
        return (8 - len(self.missing_walls())) / 8

    def _parse(self, text: str) -> tuple[dict[int, tuple[str, int]], list[str]]:
        plan: dict[int, tuple[str, int]] = {}
        errors: list[str] = []
        settings = _settings()
        for part in (p for p in re.split(r"[;\n]", text[:2000]) if p.strip()):
            match = _PART.match(part.lower())
            shown = part.strip()[:60]
            if match is None:
                errors.append(str(settings["parse_error"]).format(part=shown))
                continue
            who = match.group(1)
            if who not in self.names:
                errors.append(str(settings["unknown_player"]).format(
                    name=who, names=", ".join(self.names)))  # fmt: skip
                continue
            sender = self.names.index(who)
            if match.group(3) is not None or match.group(5) is not None:
                self._send(sender, match.group(4), (match.group(3) or match.group(5) or "").strip())
                continue
            command = _COMMAND.match(re.sub(r"\s+", " ", match.group(2) or "").strip())
            name = self._aliases.get(command.group(1), command.group(1)) if command else ""
            count = int(command.group(2) or 1) if command else 0
            if name not in self._actions or not 1 <= count <= 20:
                errors.append(str(settings["parse_error"]).format(part=shown))
                continue
            plan[sender] = (self._actions[name], count)
        return plan, errors

    def _send(self, sender: int, to: str | None, body: str) -> None:
        if not body:
            return
        body = body[:500]
        targets = [self.names.index(to)] if to in self.names else range(len(self.names))
        for target in targets:
            if target != sender:
                self._inbox[target].append(f"{self.names[sender]}: {body}")
        self.messages.append({"tick": self.core.step_count, "from": self.names[sender],
                              "to": to or "all", "text": body})  # fmt: skip

    def _observe(self, errors: Sequence[str]) -> str:
        settings = _settings()
        lines = list(errors)
        for i, name in enumerate(self.names):
            lines.append(str(settings["header"]).format(name=name))
            lines.append(describe(self.core, i))
            inbox = self._inbox[i]
            lines.append(
                str(settings["inbox"]).format(messages=" | ".join(inbox))
                if inbox
                else str(settings["no_messages"])
            )
            self._inbox[i] = []
        if self._task is not None:
            lines.append(f"Goal: {self._task.goal}")
            lines.append(str(settings["progress"]).format(progress=self.progress()))
        return "\n".join(lines)

    # -- tasks -------------------------------------------------------------------

    def progress(self) -> str:
        """A short statement of how far the team is."""
        if self._task is None:
            return "no task"
        if self._task.data["kind"] == "collect":
            item, amount = self._task.data["item"], self._task.data["amount"]
            return f"{min(self.collected(item), amount)}/{amount} {item}"
        if self.shelter is not None:
            return self.shelter.progress(self.core.world)
        return f"{8 - len(self.missing_walls())}/8 wall cells"

    def collected(self, item: str) -> int:
        achievement = _COLLECT_ACHIEVEMENT.get(item, f"collect_{item}")
        return sum(int(p.achievements.get(achievement, 0)) for p in self.core.players)

    def missing_walls(self) -> list[tuple[int, int]]:
        """Cells around the shelter point that are not stone yet."""
        assert self._task is not None
        x, y = self.shelter_point(self._task)
        cells = [(x + dx, y + dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1) if dx or dy]
        return [c for c in cells if self.core.world[c][0] != "stone"]

    def _update_done(self) -> None:
        assert self._task is not None
        if self._task.data["kind"] == "collect":
            self._success = self.collected(self._task.data["item"]) >= self._task.data["amount"]
        elif self.shelter is not None:
            self._success = self.shelter.complete(self.core.world)
        else:
            self._success = not self.missing_walls()
        wiped = all(not self.core.alive(p) for p in self.core.players)
        self._done = self._success or wiped or self.core.over
