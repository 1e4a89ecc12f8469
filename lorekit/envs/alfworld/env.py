"""``make("alfworld")``: ALFWorld's household games on its real engine.

Observations, admissible commands and the ``won`` signal are the engine's
(:mod:`lorekit.envs.alfworld.engine`); this class adds the TextEnv contract
around them: a task catalogue by split (group = task type), a step cap, the
expert, and the papers' text conventions as options:

- ``syntax="move"`` (ALFWorld 0.4.x: ``move X to Y``) or ``"put"`` (0.3.x and
  the papers: ``put X in/on Y``);
- ``strip_arrival``: drop the "You arrive at fridge 1." sentence, as the
  papers' prompts do;
- ``object_ids``: AutoManual's form for code, ``fridge_1`` without articles,
  in observations and accepted in commands;
- ``banner=False``: drop the "-= Welcome to TextWorld, ALFRED! =-" line.

Commands are matched after normalising case, spaces and a trailing period;
anything not admissible gets the engine's "Nothing happens." with
``valid=False``.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lorekit import yamlio
from lorekit.envs.alfworld import games as game_sources
from lorekit.envs.alfworld.engine import AlfredEngine
from lorekit.envs.alfworld.games import GameRef, GameSourceError
from lorekit.envs.alfworld.planner import Unsolvable, next_act
from lorekit.envs.alfworld.text import (
    SYNTAXES,
    Syntax,
    from_object_ids,
    normalize_command,
    render,
    strip_arrival,
    to_object_ids,
)
from lorekit.envs.alfworld.world import Goal, World, world_from_facts
from lorekit.envs.base import Observation, Step, Task, TextEnv
from lorekit.envs.steplimit import UNCAPPED, check_max_steps, manual_with_limit

MESSAGES_FILE = Path(__file__).with_name("messages.yaml")
MAX_ACTION_CHARS = 200
_BANNER = "-= Welcome to TextWorld, ALFRED! =-"


@functools.cache
def messages() -> Mapping[str, Any]:
    data: dict[str, Any] = yamlio.safe_load(
        MESSAGES_FILE.read_text(encoding="utf-8"), source=str(MESSAGES_FILE)
    )
    return data


class AlfWorldEnv(TextEnv):
    """ALFWorld on TextWorld's PDDL engine; see the module docstring."""

    name = "alfworld"
    execution = "process"  # the engine is CPU-bound Python: a process per env runs in parallel

    def __init__(
        self,
        source: str | Path = "generated",
        *,
        split: str | None = None,
        data_dir: str | Path | None = None,
        syntax: Syntax = "move",
        strip_arrival: bool = False,
        object_ids: bool = False,
        banner: bool = True,
        max_steps: int | None = 50,
    ) -> None:
        if syntax not in SYNTAXES:
            raise ValueError(f"syntax must be one of {', '.join(SYNTAXES)}, got {syntax!r}")
        check_max_steps(max_steps)
        self.syntax: Syntax = syntax
        self.strip_arrival = strip_arrival
        self.object_ids = object_ids
        self.banner = banner
        self.step_limit = max_steps
        self.max_steps = max_steps if max_steps is not None else UNCAPPED
        self.source = str(source)
        self._folders: dict[str, Path] = {}
        if self.source == "generated":
            self._split_names: tuple[str, ...] = game_sources.GENERATED_SPLITS
        else:
            official = self.source == "official"
            root = game_sources.official_root(data_dir) if official else Path(source).expanduser()
            self._folders = game_sources.directory_splits(root, official)
            self._split_names = tuple(self._folders)
            if not self._split_names:
                raise GameSourceError(f"{root} holds no ALFWorld split")
        if split is None:
            split = "test" if "test" in self._split_names else self._split_names[0]
        if split not in self._split_names:
            raise ValueError(
                f"unknown split {split!r}; this source has: {', '.join(self._split_names)}"
            )
        self.default_split = split
        """The split ``reset(None)`` picks from."""
        self._refs: dict[str, list[GameRef]] = {}
        self._engine: AlfredEngine | None = None
        self._ref: GameRef | None = None
        self._goal: Goal | None = None
        self._walkthrough: list[str] = []
        self._actions: list[str] = []
        self._admissible: list[str] = []
        self._steps = 0
        self._done = False
        self._success = False

    # -- catalogue ---------------------------------------------------------------------

    def splits(self) -> tuple[str, ...]:
        return self._split_names

    def _split_refs(self, split: str) -> list[GameRef]:
        if self.source == "official":
            split = game_sources.OFFICIAL_ALIASES.get(split, split)
        if split not in self._split_names:
            raise ValueError(
                f"unknown split {split!r}; this source has: {', '.join(self._split_names)}"
            )
        if split not in self._refs:
            if self.source == "generated":
                self._refs[split] = game_sources.generated_refs(split, self.syntax)
            else:
                self._refs[split] = game_sources.scan(self._folders[split], split)
        return self._refs[split]

    def tasks(self, split: str = "test") -> list[Task]:
        return [
            Task(ref.id, ref.goal_text, ref.task_type, ref.as_data())
            for ref in self._split_refs(split)
        ]

    def describe_split(self, split: str) -> str:
        count = len(self._split_refs(split))
        if self.source == "generated":
            return (
                f"{count} generated games (LoreKit's {split!r} split, made from the alfworld "
                "wheel's floor plans and rules; not ALFWorld's official games)"
            )
        if self.source == "official":
            return f"{count} of ALFWorld's official games ({split}, from {self._folders[split]})"
        return f"{count} games from {self._folders[split]} ({split})"

    def action_forms(self) -> list[str]:
        text = messages()
        place = str(text["place"][self.syntax])
        return [str(form).replace("{place}", place) for form in text["action_forms"]]

    def manual(self) -> str:
        return manual_with_limit(messages(), self.step_limit)

    # -- episode -----------------------------------------------------------------------

    def reset(self, task: Task | str | None = None, seed: int | None = None) -> Observation:
        ref = self._pick(task, seed)
        game, traj = game_sources.load_game(ref, self.syntax)
        if self._engine is None:
            self._engine = AlfredEngine()
        self._engine.load(game)
        state = self._engine.reset()
        self._ref = ref
        self._goal = Goal.from_params(str(traj["task_type"]), traj.get("pddl_params", {}))
        walkthrough = game.get("walkthrough") or []
        self._walkthrough = [str(c) for c in walkthrough]
        self._actions = []
        self._steps = 0
        self._done = False
        self._success = False
        self._admissible = list(state["admissible_commands"])
        text = str(state.feedback)
        if not self.banner:
            text = text.replace(_BANNER, "", 1).lstrip("\n")
        info = {
            "task_id": ref.id,
            "task_type": ref.task_type,
            "goal": ref.goal_text,
            "split": ref.split,
            "generated": ref.generated is not None,
        }
        return Observation(self._show(text), info)

    def _pick(self, task: Task | str | None, seed: int | None) -> GameRef:
        if isinstance(task, Task):
            if "id" in task.data and "split" in task.data:
                return GameRef.from_data(task.data)
            task = task.id
        if task is None:
            pool = self._split_refs(self.default_split)
            return pool[random.Random(seed if seed is not None else 0).randrange(len(pool))]
        for split in (self.default_split, *self._split_names):
            for ref in self._split_refs(split):
                if ref.id == task:
                    return ref
        raise KeyError(f"unknown ALFWorld task {task!r}; task ids look like '<task dir>/<trial>'")

    def step(self, action: str) -> Step:
        text = messages()
        if self._engine is None or self._goal is None:
            return Step(str(text["not_started"]), 0.0, True, {"valid": False, "success": False})
        if self._done:
            info = {"valid": False, "success": self._success, "steps": self._steps}
            return Step(str(text["finished"]), 0.0, True, info)
        self._steps += 1
        raw = action if isinstance(action, str) else str(action)
        if len(raw) > MAX_ACTION_CHARS:
            observation, valid = str(text["too_long"]).format(chars=len(raw)), False
        else:
            command = normalize_command(raw)
            if self.object_ids:
                command = from_object_ids(command)
            valid = command in self._admissible
            state, _, _ = self._engine.step(command if valid else "nothing happens")
            self._admissible = list(state["admissible_commands"])
            observation = str(state.feedback)
            if valid:
                self._actions.append(command)
            self._success = bool(state["won"])
        truncated = (
            not self._success and self.step_limit is not None and self._steps >= self.step_limit
        )
        if truncated:
            observation += str(text["step_limit"]).format(limit=self.step_limit)
        self._done = self._success or truncated
        info = {
            "valid": valid,
            "success": self._success,
            "won": self._success,
            "steps": self._steps,
            "truncated": truncated,
        }
        return Step(self._show(observation), 1.0 if self._success else 0.0, self._done, info)

    def _show(self, text: str) -> str:
        if self.strip_arrival:
            text = strip_arrival(text)
        return to_object_ids(text) if self.object_ids else text

    # -- expert and candidates -----------------------------------------------------------

    def expert_action(self) -> str | None:
        """The walkthrough's next command while the episode follows it; from any
        other state, the planner's next command from the engine's facts."""
        if self._engine is None or self._goal is None or self._done:
            return None
        command = self._walkthrough_next()
        if command is None:
            try:
                act = next_act(self.world(), self._goal)
            except Unsolvable:
                return None
            if act is None:
                return None
            command = render(act, self.syntax)
        return to_object_ids(command) if self.object_ids else command

    def _walkthrough_next(self) -> str | None:
        done = len(self._actions)
        if done >= len(self._walkthrough) or self._walkthrough[:done] != self._actions:
            return None
        command = self._walkthrough[done]
        return command if command in self._admissible else None

    def candidate_actions(self) -> list[str]:
        """The engine's admissible commands now (in the env's text form)."""
        if self.object_ids:
            return [to_object_ids(c) for c in self._admissible]
        return list(self._admissible)

    # -- state, for bridges and the code API -------------------------------------------------

    def world(self) -> World:
        """The current state as a :class:`World` (read from the engine's facts)."""
        if self._engine is None:
            raise RuntimeError("no episode: call reset() first")
        return world_from_facts(self._engine.named_facts())

    @property
    def goal(self) -> Goal | None:
        return self._goal

    @property
    def done(self) -> bool:
        return self._done

    @property
    def won(self) -> bool:
        """Whether the engine reported this episode's task done (its ``won`` signal)."""
        return self._success

    def close(self) -> None:
        self._engine = None
