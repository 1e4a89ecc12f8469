"""First observations read from a published ADaPT TextCraft result file.

The original environment printed its crafting commands as
``list(tree_lines_set) + sample(list(distractor_set), 10)``, shuffled. What
goes into those sets is deterministic (the goal's recipe tree, and candidates
drawn with ``random.seed(episode)`` from recipe lists that grew over the run's
sequential resets; see docs/textcraft.md), but the order in which Python
iterated the two sets came from per-process string hashing, whose key is
random per process and was never recorded. So neither the order of the lines
nor which 10 candidates were picked can be recomputed; the published result
file holds them (``env_<i>.commands``). This module reads them at run time,
from the file the user names (nothing of it is copied into LoreKit), and
checks each episode's lines against the original's recipe model before use:
every line of the goal's recipe tree must be there, and every other line must
be a recipe that uses one of the tree's ingredients (what a distractor is).
A file that fails the check is refused, naming the file, the episode and the
line.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

from lorekit.envs.textcraft.original import NS, Episode, OriginalBook

HEADER = "Crafting commands:"


class PublishedOpeningError(ValueError):
    """A published result file that cannot give an episode's first observation."""


def _read(path: Path) -> Mapping[int, tuple[str, tuple[str, ...]]]:
    """The file's episodes, read once per version of the file (its size and time)."""
    try:
        stat = path.stat()
    except OSError as exc:
        raise PublishedOpeningError(f"{path}: cannot read a JSON result file ({exc})") from None
    return _parse(path, stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=8)
def _parse(path: Path, _mtime_ns: int, _size: int) -> Mapping[int, tuple[str, tuple[str, ...]]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise PublishedOpeningError(f"{path}: cannot read a JSON result file ({exc})") from None
    if not isinstance(data, Mapping):
        raise PublishedOpeningError(f"{path}: expected a JSON object of env_<i> episodes")
    episodes: dict[int, tuple[str, tuple[str, ...]]] = {}
    for key, entry in data.items():
        if not (isinstance(key, str) and key.startswith("env_") and key[4:].isdigit()):
            continue
        if not isinstance(entry, Mapping) or not isinstance(entry.get("commands"), str):
            raise PublishedOpeningError(f"{path}: {key}.commands: expected a string")
        text = str(entry["commands"])
        if not text.startswith(HEADER):
            raise PublishedOpeningError(f"{path}: {key}.commands: expected {HEADER!r} first")
        lines = tuple(line for line in text[len(HEADER) :].splitlines() if line.strip())
        episodes[int(key[4:])] = (str(entry.get("problem", "")), lines)
    if not episodes:
        raise PublishedOpeningError(f"{path}: no env_<i> episodes with commands")
    return MappingProxyType(episodes)


def published_lines(path: Path, seed: int, book: OriginalBook, episode: Episode) -> tuple[str, ...]:
    """The crafting-command lines the published run showed for episode ``seed``, checked.

    ``episode`` is the original's walk of this episode's goal: its tree lines
    must all be shown, and every other shown line must use an ingredient of
    the tree. The goal named by the file must be the episode's goal.
    """
    episodes = _read(path.resolve())
    found = episodes.get(seed)
    if found is None:
        raise PublishedOpeningError(f"{path}: no episode env_{seed} (the task's seed)")
    problem, lines = found
    goal = episode.goal[len(NS) :].replace("_", " ")
    if problem and problem.strip().rstrip(".") != f"craft {goal}":
        raise PublishedOpeningError(
            f"{path}: env_{seed}.problem is {problem!r}, but this episode's goal is {goal!r}"
        )
    tree = {r.line for r in episode.walked}
    missing = sorted(tree - set(lines))
    if missing:
        raise PublishedOpeningError(
            f"{path}: env_{seed}.commands lacks the recipe-tree line {missing[0]!r}"
        )
    ingredients = {p.name for r in episode.walked for p in r.parts}
    uses = {r.line for name in ingredients for r in book.uses.get(name, ())}
    for line in lines:
        if line not in tree and line not in uses:
            raise PublishedOpeningError(
                f"{path}: env_{seed}.commands line {line!r} is neither in the goal's recipe "
                "tree nor a use of one of its ingredients"
            )
    return lines
