"""``make("alfworld")``: ALFWorld's household games on its real engine.

Observations, admissible commands and the ``won`` signal are the engine's
(:mod:`lorekit.envs.alfworld.engine`); this class adds the TextEnv contract
around them: a task catalogue by split (group = task type), a step cap, the
expert, which games are played, and the papers' text conventions as options:

- ``source``: LoreKit's ``generated`` splits, a folder of games, or
  ``official`` ALFWorld data, whose ``variant`` is ``release`` (ALFWorld's
  2.1.1 release, the default), ``automanual`` (AutoManual's edit of it),
  ``release-2.1.3`` (alfworld 0.4's games) or ``any`` (whatever the folder
  holds); every game must be what the variant says (:mod:`.variants`);
- ``syntax="move"`` (ALFWorld 0.4.x: ``move X to Y``) or ``"put"`` (0.3.x and
  the papers: ``put X in/on Y``); by default the games' own;
- ``arrival``: keep the "You arrive at fridge 1." sentence, ``strip`` it
  (ReAct's prompts; ``strip_arrival=True`` says the same) or write it as
  ADaPT shows it, ``location`` ("You arrive at the location.");
- ``commands="exact"`` (TextWorld's rule: a command is carried out only if it
  is, spaces around it aside, an admissible one) or ``"normalized"`` (case,
  spaces, a final period and a leading ">" forgiven);
- ``object_ids``: AutoManual's form for code, ``fridge_1`` without articles,
  in observations and accepted in commands;
- ``banner=False``: drop the "-= Welcome to TextWorld, ALFRED! =-" line.

Anything not admissible gets the engine's "Nothing happens." with
``valid=False``.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from lorekit import yamlio
from lorekit.envs.alfworld import games as game_sources
from lorekit.envs.alfworld import variants
from lorekit.envs.alfworld.engine import AlfredEngine
from lorekit.envs.alfworld.games import GameRef, GameSourceError
from lorekit.envs.alfworld.planner import Unsolvable, next_act
from lorekit.envs.alfworld.text import (
    ARRIVALS,
    COMMAND_MODES,
    SYNTAXES,
    Arrival,
    Commands,
    Syntax,
    command_text,
    from_object_ids,
    render,
    show_arrival,
    to_object_ids,
)
from lorekit.envs.alfworld.world import Goal, World, world_from_facts
from lorekit.envs.base import Observation, Step, Task, TextEnv
from lorekit.envs.episodes import StepRules
from lorekit.envs.steplimit import manual_with_limit

MESSAGES_FILE = Path(__file__).with_name("messages.yaml")
MAX_ACTION_CHARS = 200
_BANNER = "-= Welcome to TextWorld, ALFRED! =-"
_NOTHING = "Nothing happens."


def _arrival(arrival: Arrival | None, strip: bool) -> Arrival:
    """``arrival``, or what the older ``strip_arrival`` flag says; both must agree."""
    if arrival is None:
        return "strip" if strip else "keep"
    if arrival not in ARRIVALS:
        raise ValueError(f"arrival must be one of {', '.join(ARRIVALS)}, got {arrival!r}")
    if strip and arrival != "strip":
        raise ValueError(f"strip_arrival=True contradicts arrival={arrival!r}: give one")
    return arrival


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
        variant: str | None = None,
        syntax: Syntax | None = None,
        arrival: Arrival | None = None,
        strip_arrival: bool = False,
        commands: Commands = "exact",
        object_ids: bool = False,
        banner: bool = True,
        max_steps: int | None = 50,
    ) -> None:
        self.stepping = StepRules(max_steps)  # the cap and the end: the core's rules
        self.source = str(source)
        self.variant = self._resolve_variant(variant)
        """What the games are: ``generated``, ``directory`` or the official variant."""
        self._folders: dict[str, Path] = {}
        own_syntax = "move"
        if self.source == "generated":
            self._split_names: tuple[str, ...] = game_sources.GENERATED_SPLITS
        else:
            official = self.source == "official"
            root = (
                variants.locate(self.variant, data_dir) if official else Path(source).expanduser()
            )
            self._folders = game_sources.directory_splits(root, official)
            self._split_names = tuple(self._folders)
            if not self._split_names:
                raise GameSourceError(f"{root} holds no ALFWorld split")
            held = variants.folder_variant(root) if official else None
            if held in variants.OFFICIAL_VARIANTS:
                own_syntax = variants.own_syntax(held)
        self.syntax: Syntax = cast(Syntax, own_syntax if syntax is None else syntax)
        if self.syntax not in SYNTAXES:
            raise ValueError(f"syntax must be one of {', '.join(SYNTAXES)}, got {syntax!r}")
        self.arrival: Arrival = _arrival(arrival, strip_arrival)
        self.strip_arrival = self.arrival == "strip"
        if commands not in COMMAND_MODES:
            raise ValueError(
                f"commands must be one of {', '.join(COMMAND_MODES)}, got {commands!r}"
            )
        self.commands: Commands = commands
        self.object_ids = object_ids
        self.banner = banner
        self.step_limit = self.stepping.step_limit
        self.max_steps = self.stepping.max_steps
        if split is None:
            split = "test" if "test" in self._split_names else self._split_names[0]
        if split not in self._split_names:
            raise ValueError(self._unknown_split(split))
        self.default_split = split
        """The split ``reset(None)`` picks from."""
        self._refs: dict[str, list[GameRef]] = {}
        self._engine: AlfredEngine | None = None
        self._ref: GameRef | None = None
        self._goal: Goal | None = None
        self._intro = ""
        self._walkthrough: list[str] = []
        self._actions: list[str] = []
        self._admissible: list[str] = []
        self._won = False

    def _resolve_variant(self, variant: str | None) -> str:
        if self.source != "official":
            if variant is not None:
                raise ValueError(
                    f"variant={variant!r} applies to source='official' only (source is "
                    f"{self.source!r})"
                )
            return "generated" if self.source == "generated" else "directory"
        chosen = "release" if variant is None else str(variant)
        if chosen not in (*variants.OFFICIAL_VARIANTS, variants.ANY):
            known = ", ".join((*variants.OFFICIAL_VARIANTS, variants.ANY))
            raise ValueError(f"variant must be one of {known}, got {variant!r}")
        return chosen

    # -- catalogue ---------------------------------------------------------------------

    def splits(self) -> tuple[str, ...]:
        return self._split_names

    def _split_refs(self, split: str) -> list[GameRef]:
        if self.source == "official":
            split = game_sources.OFFICIAL_ALIASES.get(split, split)
        if split not in self._split_names:
            raise ValueError(self._unknown_split(split))
        if split not in self._refs:
            if self.source == "generated":
                self._refs[split] = game_sources.generated_refs(split, self.syntax)
            else:
                wanted = self.variant if self.variant in variants.OFFICIAL_VARIANTS else None
                self._refs[split] = game_sources.scan(self._folders[split], split, wanted)
        return self._refs[split]

    def _unknown_split(self, split: str) -> str:
        text = f"unknown split {split!r}; this source has: {', '.join(self._split_names)}"
        real = game_sources.OFFICIAL_ALIASES.get(split, split)
        if self.source == "official" and real in game_sources.OFFICIAL_SPLITS:
            text += f" (the full release, `lorekit alfworld fetch-data`, has {real})"
        return text

    def tasks(self, split: str = "test") -> list[Task]:
        return [
            Task(ref.id, ref.goal_text, ref.task_type, ref.as_data())
            for ref in self._split_refs(split)
        ]

    def describe_split(self, split: str) -> str:
        refs = self._split_refs(split)
        if self.source == "generated":
            return (
                f"{len(refs)} generated games (LoreKit's {split!r} split, made from the alfworld "
                "wheel's floor plans and rules; not ALFWorld's official games)"
            )
        official = self.variant if self.source == "official" else None
        kinds = {ref.variant for ref in refs}
        return variants.describe(len(refs), split, self._folders[split], official, kinds)

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
        self._ref = ref
        self._goal = Goal.from_params(str(traj["task_type"]), traj.get("pddl_params", {}))
        walkthrough = game.get("walkthrough") or []
        self._walkthrough = [str(c) for c in walkthrough]
        self._restart()
        info = {
            "task_id": ref.id,
            "task_type": ref.task_type,
            "goal": ref.goal_text,
            "split": ref.split,
            "generated": ref.generated is not None,
            "variant": ref.variant,
        }
        return Observation(self._intro, info)

    def _restart(self) -> None:
        """The loaded game from its first state (the engine keeps its grounding)."""
        assert self._engine is not None
        state = self._engine.reset()
        self._actions = []
        self._won = False
        self.stepping.begin()
        self._admissible = list(state["admissible_commands"])
        text = str(state.feedback)
        if not self.banner:
            text = text.replace(_BANNER, "", 1).lstrip("\n")
        self._intro = self._show(text)

    def restore(self, actions: Sequence[str]) -> Step:
        """Start the game being played again and replay ``actions``, as ADaPT's
        controller does before each sub-task (so a failed sub-task leaves no
        trace). It costs a reset of the engine's state, not a new grounding.

        The replayed actions count towards ``max_steps``, as TextWorld's step
        limit counts every command since the reset. Returns the last action's
        step, or the first observation as a step when ``actions`` is empty.
        """
        if self._engine is None or self._goal is None:
            raise RuntimeError("restore() needs a game: call reset(task) first")
        self._restart()
        last = Step(self._intro, 0.0, False, {"valid": True, "success": False, "steps": 0})
        for action in actions:
            last = self.step(action)
        return last

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
        refused = self.stepping.refuse()
        if refused is not None:
            return refused
        assert self._engine is not None
        raw = action if isinstance(action, str) else str(action)
        if len(raw) > MAX_ACTION_CHARS:
            exact = self.commands == "exact"  # TextWorld has no such message
            observation = _NOTHING if exact else str(text["too_long"]).format(chars=len(raw))
            valid = False
        else:
            command = command_text(raw, self.commands)
            if self.object_ids:
                command = from_object_ids(command)
            valid = command in self._admissible
            state, _, _ = self._engine.step(command if valid else "nothing happens")
            self._admissible = list(state["admissible_commands"])
            observation = str(state.feedback)
            if valid:
                self._actions.append(command)
            self._won = bool(state["won"])
        info = {"valid": valid, "success": self._won, "won": self._won}
        won = 1.0 if self._won else 0.0
        return self.stepping.settle(Step(self._show(observation), won, self._won, info))

    def _show(self, text: str) -> str:
        text = show_arrival(text, self.arrival)
        return to_object_ids(text) if self.object_ids else text

    # -- expert and candidates -----------------------------------------------------------

    def expert_action(self) -> str | None:
        """The walkthrough's next command while the episode follows it; from any
        other state, the planner's next command from the engine's facts."""
        if self._engine is None or self._goal is None or self.stepping.over:
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
        return self.stepping.done

    @property
    def won(self) -> bool:
        """Whether the engine reported this episode's task done (its ``won`` signal)."""
        return self._won

    def close(self) -> None:
        self._engine = None
