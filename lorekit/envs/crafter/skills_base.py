"""Types and data shared by the skill API (``skills``) and the controllers
(``skills_library``): calls, results, the error, and ``skills.yaml``."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from lorekit import yamlio

SKILLS_FILE = Path(__file__).with_name("skills.yaml")
VITALS = ("health", "food", "drink", "energy")


class SkillError(ValueError):
    """A skill call that cannot be run (bad syntax, name or arguments)."""


@dataclass(frozen=True)
class SkillCall:
    """A parsed call: the skill's canonical name and its arguments."""

    name: str
    args: tuple[str | int, ...] = ()

    def __str__(self) -> str:
        return f"{self.name}({', '.join(str(a) for a in self.args)})"


@dataclass(frozen=True)
class SkillResult:
    """How a skill ended: ``reason`` says why, ``ticks`` counts the actions it gave."""

    success: bool
    reason: str
    ticks: int


class Skill(Protocol):
    """One running skill of one player.

    Call :meth:`next_action` once per tick, apply the action, and call it
    again after the world has stepped; None means the skill has ended and
    :attr:`result` says how.
    """

    name: str
    call: SkillCall
    player: int

    def next_action(self) -> str | None:
        """The next crafter action for the player, or None once finished."""
        ...

    @property
    def result(self) -> SkillResult | None:
        """Set once the skill has finished (success or failure)."""
        ...


@dataclass(frozen=True)
class SkillSpec:
    """A skill as described to a model: ``name(params): summary``."""

    name: str
    params: str
    summary: str

    def line(self) -> str:
        return f"{self.name}({self.params}): {self.summary}"


@functools.cache
def skill_data() -> Mapping[str, Any]:
    """The parsed ``skills.yaml``."""
    with SKILLS_FILE.open(encoding="utf-8") as fh:
        loaded: dict[str, Any] = yamlio.safe_load(fh)
    return loaded


def error(key: str, **fields: Any) -> SkillError:
    """A :class:`SkillError` with the ``errors`` message ``key`` filled in."""
    return SkillError(str(skill_data()["errors"][key]).format(**fields))


def message(key: str, **fields: Any) -> str:
    """The ``messages`` text ``key`` filled in (a skill's reason)."""
    return str(skill_data()["messages"][key]).format(**fields)


def canonical_item(word: str | int) -> str:
    """An argument word with item aliases resolved (``water`` -> ``drink``)."""
    text = str(word).lower()
    return str(skill_data()["aliases"]["items"].get(text, text))


def inventory_text(inventory: Mapping[str, int]) -> str:
    """Items held, vitals left out: ``"wood 3, stone 1"``."""
    items = [f"{k} {v}" for k, v in inventory.items() if k not in VITALS and v > 0]
    return ", ".join(items) or message("inventory_empty")
