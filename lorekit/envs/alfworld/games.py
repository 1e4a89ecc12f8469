"""Where ALFWorld games come from: LoreKit's generated splits, a directory of
games, or ALFWorld's official download.

All three end as :class:`GameRef` records; :func:`load_game` turns one into
the ``game.tw-pddl`` mapping the engine plays and the ``traj_data.json``
mapping that says what the task is. A reference is plain data (no open
files), so it crosses to a process env inside a :class:`~lorekit.envs.Task`.

- ``generated``: the fixed ``dev`` and ``test`` splits of ``data.yaml``,
  made in memory by the generator (about 2 ms a game) the first time a split
  is asked for; ``splits.sha256`` pins their bytes.
- a directory (``lorekit alfworld generate --out DIR``, or any folder of
  games): each sub-folder holding games is a split (``DIR/train/...``,
  ``DIR/test/...``); games and task folders (named ``<task type>-...``)
  directly under it form the split ``all``.
- ``official``: ALFWorld's data (``json_2.1.1/{train,valid_seen,valid_unseen}``,
  found by :func:`lorekit.envs.alfworld.variants.locate`: the release, or
  AutoManual's edit of it), read the way ``AlfredTWEnv`` reads it: games
  marked unsolvable, sliced or movable-receptacle games and task types other
  than the six are skipped. ``dev`` and ``test`` name ``valid_seen`` and
  ``valid_unseen``, the splits the papers report.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lorekit.envs.alfworld.variants import GameSourceError, game_variant, title
from lorekit.envs.alfworld.world import TASK_TYPES

__all__ = ["GameRef", "GameSourceError", "load_game", "scan"]

OFFICIAL_SPLITS = ("train", "valid_seen", "valid_unseen")
OFFICIAL_ALIASES = {"dev": "valid_seen", "test": "valid_unseen"}
GENERATED_SPLITS = ("dev", "test")
ALL_SPLIT = "all"
"""The split of the games right under a games directory (not in a split folder)."""
_TASK_LINE = re.compile(r'"rhs": "Your task is to: (.*?)"')


@dataclass(frozen=True)
class GameRef:
    """One game: its id within its split, what it asks, and where it lives.

    Exactly one of ``path`` (a game directory) and ``generated`` (the
    generator's arguments: seed, label, task type, index) is set.
    ``variant`` is what the game is (:func:`~lorekit.envs.alfworld.variants.game_variant`):
    ``release``, ``automanual``, ``release-2.1.3``, ``generated`` or ``unknown``.
    """

    id: str
    task_type: str
    goal_text: str
    split: str
    path: str | None = None
    generated: tuple[int, str, str, int] | None = None
    variant: str = "generated"

    def as_data(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "task_type": self.task_type,
            "goal_text": self.goal_text,
            "split": self.split,
            "path": self.path,
            "generated": list(self.generated) if self.generated else None,
            "variant": self.variant,
        }

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> GameRef:
        gen = data.get("generated")
        return cls(
            str(data["id"]),
            str(data["task_type"]),
            str(data["goal_text"]),
            str(data["split"]),
            str(data["path"]) if data.get("path") else None,
            (int(gen[0]), str(gen[1]), str(gen[2]), int(gen[3])) if gen else None,
            str(data.get("variant") or ("generated" if gen else "unknown")),
        )


# -- generated splits --------------------------------------------------------------


@functools.cache
def generated_split(split: str, syntax: str) -> tuple[Any, ...]:
    """The shipped split ``split`` as :class:`GeneratedGame` objects (cached per process)."""
    from lorekit.envs.alfworld import rules
    from lorekit.envs.alfworld.generate import generate_games

    specs = rules.settings()["splits"]
    if split not in specs:
        raise GameSourceError(f"unknown generated split {split!r}; known: {', '.join(specs)}")
    spec = specs[split]
    plans = split_floor_plans(int(spec["floor_plan_parity"]))
    counts = {str(t): int(n) for t, n in spec["task_counts"].items()}
    games = generate_games(
        sum(counts.values()),
        int(spec["seed"]),
        task_types=task_sequence(counts),
        syntax=syntax,  # type: ignore[arg-type]
        floor_plans=plans,
        label=split,
    )
    return tuple(games)


def task_sequence(counts: Mapping[str, int]) -> list[str]:
    """One task type per game: round-robin in ALFWorld's order while each type
    has games left, so any first part of a split mixes every type."""
    left = {t: counts.get(t, 0) for t in TASK_TYPES}
    unknown = set(counts) - set(TASK_TYPES)
    if unknown:
        raise GameSourceError(f"unknown task types {sorted(unknown)} in a split's task_counts")
    out: list[str] = []
    while any(left.values()):
        for task_type in TASK_TYPES:
            if left[task_type] > 0:
                out.append(task_type)
                left[task_type] -= 1
    return out


def split_floor_plans(parity: int) -> list[int]:
    """Floor plans whose position in their room type's sorted list has ``parity``."""
    from lorekit.envs.alfworld import rules

    out: list[int] = []
    by_room: dict[str, list[int]] = {}
    for plan in rules.floor_plans():
        by_room.setdefault(plan.room, []).append(plan.number)
    for numbers in by_room.values():
        out += [n for i, n in enumerate(sorted(numbers)) if i % 2 == parity]
    return sorted(out)


def generated_refs(split: str, syntax: str) -> list[GameRef]:
    refs = []
    for game in generated_split(split, syntax):
        meta = game.traj_data["lorekit"]
        refs.append(
            GameRef(
                game.path,
                str(game.traj_data["task_type"]),
                str(meta["goal_text"]),
                split,
                generated=(
                    int(meta["seed"]),
                    str(meta["split_label"]),
                    str(game.traj_data["task_type"]),
                    int(meta["index"]),
                ),
            )
        )
    return refs


# -- directories -------------------------------------------------------------------


def directory_splits(root: Path, official: bool) -> dict[str, Path]:
    """Split name -> folder, for a games directory."""
    if not root.is_dir():
        raise GameSourceError(f"games directory {root} does not exist")
    found: dict[str, Path] = {}
    if official:
        found = {s: root / s for s in OFFICIAL_SPLITS if (root / s).is_dir()}
        for alias, real in OFFICIAL_ALIASES.items():
            if real in found:
                found[alias] = found[real]
        return found
    direct = False
    for child in sorted(p for p in root.iterdir() if p.is_dir()):
        if _is_direct(child):
            direct = True
        elif _holds_games(child, depth=3):
            found[child.name] = child
    if direct:
        if ALL_SPLIT in found:
            raise GameSourceError(
                f"{root}: games right under it form the split {ALL_SPLIT!r}, and so does its "
                f"folder {ALL_SPLIT!r}; rename that folder"
            )
        found[ALL_SPLIT] = root
    if not found:
        raise GameSourceError(
            f"{root} holds no ALFWorld games (folders with traj_data.json and game.tw-pddl)"
        )
    return found


def _is_direct(child: Path) -> bool:
    """A game folder, or a task folder (``pick_and_place_simple-Mug-None-Desk-301``),
    right under a games directory: its games belong to the split ``all``."""
    task_type = child.name.split("-", 1)[0]
    return _is_game_dir(child) or (task_type in TASK_TYPES and _holds_games(child, depth=1))


def _is_game_dir(path: Path) -> bool:
    return (path / "traj_data.json").is_file() and (path / "game.tw-pddl").is_file()


def _holds_games(path: Path, depth: int) -> bool:
    if depth <= 0:
        return False
    return any(_is_game_dir(p) or _holds_games(p, depth - 1) for p in path.iterdir() if p.is_dir())


def scan(folder: Path, split: str, variant: str | None = None) -> list[GameRef]:
    """Every playable game under ``folder``, in path order (AlfredTWEnv's filters).

    For the split ``all`` only the games and task folders right under
    ``folder`` count: its other sub-folders are splits of their own. With
    ``variant``, every game must be of that kind (``release``, ``automanual``,
    ...): one that is not is an error naming it, so a folder never passes
    for a variant it only partly is."""
    refs = []
    for traj_file in sorted(folder.rglob("traj_data.json")):
        game_dir = traj_file.parent
        rel = game_dir.relative_to(folder).as_posix()
        if split == ALL_SPLIT and not _is_direct(folder / rel.split("/", 1)[0]):
            continue
        if "movable" in rel or "Sliced" in rel or not (game_dir / "game.tw-pddl").is_file():
            continue
        traj = _read_json(traj_file)
        task_type = str(traj.get("task_type", ""))
        if task_type not in TASK_TYPES:
            continue
        if traj.get("pddl_params", {}).get("object_sliced"):
            continue
        game = _read_json(game_dir / "game.tw-pddl")
        if not game.get("solvable", False):
            continue
        kind = game_variant(str(game.get("grammar", "")), traj)
        if variant is not None and kind != variant:
            what = "a game of an unknown kind" if kind == "unknown" else f"one of {title(kind)}"
            raise GameSourceError(
                f"{game_dir}: {what}, among games played as {title(variant)}; "
                "a folder must hold one kind of game"
            )
        goal = goal_text(game, traj)
        refs.append(GameRef(rel, task_type, goal, split, path=str(game_dir), variant=kind))
    return refs


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise GameSourceError(f"{path}: not readable JSON ({error})") from error
    if not isinstance(data, dict):
        raise GameSourceError(f"{path}: expected a JSON object")
    return data


def goal_text(game: Mapping[str, Any], traj: Mapping[str, Any]) -> str:
    """The task sentence: baked into the grammar, else from ALFWorld's first template."""
    match = _TASK_LINE.search(str(game.get("grammar", "")))
    if match and "UNKNOWN GOAL" not in match.group(1):
        return match.group(1).rstrip(".")
    from lorekit.envs.alfworld import rules

    params = traj.get("pddl_params", {})
    template = rules.goal_templates(str(traj["task_type"]))[0]
    return template.format(
        obj=str(params.get("object_target", "")).lower(),
        recep=str(params.get("parent_target", "")).lower(),
        toggle=str(params.get("toggle_target", "")).lower(),
        mrecep=str(params.get("mrecep_target", "")).lower(),
    )


def load_game(ref: GameRef, syntax: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(game.tw-pddl, traj_data.json) of ``ref``, the grammar in ``syntax`` and with its goal."""
    from lorekit.envs.alfworld.text import grammar_for_syntax

    if ref.generated is not None:
        label = ref.generated[1]
        for game in generated_split(label, syntax):
            if game.path == ref.id:
                return dict(game.game), dict(game.traj_data)
        raise GameSourceError(f"generated split {label!r} has no game {ref.id!r}")
    assert ref.path is not None
    folder = Path(ref.path)
    data = _read_json(folder / "game.tw-pddl")
    traj = _read_json(folder / "traj_data.json")
    grammar = str(data["grammar"])
    if "UNKNOWN GOAL" in grammar:
        grammar = grammar.replace("UNKNOWN GOAL", ref.goal_text)
    data["grammar"] = grammar_for_syntax(grammar, syntax)  # type: ignore[arg-type]
    return data, traj
