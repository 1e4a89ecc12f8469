"""The experience: what an agent knows of crafter's laws, one law per achievement.

Every source of laws (an LLM reading records, the symbolic learner, the
ground truth, a hand-written file) produces the same :class:`Experience`, so
scoring, prompting and reward generation never care where the laws came
from. A law says what the achievement's action needs (inventory, stations in
the 3x3 area, the faced thing, upper bounds such as "energy below 9"), what
a success consumes and yields, and what the faced cell becomes ("collecting
stone leaves a path").
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from crafter import constants

from lorekit import jsonscan
from lorekit.envs.crafter.core import ACHIEVEMENTS
from lorekit.envs.crafter.expanded import DO_TARGETS
from lorekit.envs.crafter.rules import CrafterRules

_MAKE_PLACE = tuple(a for a in ACHIEVEMENTS if a.startswith(("make_", "place_")))
LAW_ACTIONS: dict[str, str] = {
    **{a: a for a in DO_TARGETS},
    **{a: a for a in _MAKE_PLACE},
    "wake_up": "sleep",
}
"""Achievement -> the 27-action name whose success earns it."""
ACHIEVEMENT_OF_ACTION: dict[str, str] = {v: k for k, v in LAW_ACTIONS.items()}

_LAW_KEYS = ("achievement", "action", "requires", "nearby", "faced", "costs", "gains")
_OPTIONAL_KEYS = {"text", "confidence", "evidence", "below", "leaves"}


ITEM_NAMES: frozenset[str] = frozenset(constants.items)
"""What ``requires``, ``below``, ``costs`` and ``gains`` may name: crafter's
inventory (vitals, materials, tools)."""
_CREATURES = ("cow", "zombie", "skeleton", "plant", "ripe plant", "arrow")
THING_NAMES: frozenset[str] = frozenset(
    [*constants.materials, *_CREATURES, "edge", "the edge of the world"]
)
"""What ``faced``, ``nearby`` and ``leaves`` may name: crafter's materials, its
creatures (a ripe plant apart), the world's edge (as records and states name it)."""
CAP = max(int(info["max"]) for info in constants.items.values())
"""Crafter's cap on every count (9)."""

MAX_EXPERIENCE_BYTES = 64 * 1024**2
"""An experience is a page of laws; a file far larger is not one."""


class ExperienceError(ValueError):
    """An experience file or object that does not follow the format."""


@dataclass
class Law:
    """Preconditions and effects of one achievement's action."""

    achievement: str
    action: str
    requires: dict[str, int]
    nearby: list[str]
    faced: list[str]
    costs: dict[str, int]
    gains: dict[str, int]
    text: str = ""
    confidence: float | None = None
    evidence: dict[str, Any] = field(default_factory=dict)
    below: dict[str, int] = field(default_factory=dict)
    """Upper bounds: ``{"energy": 9}`` means the action needs energy < 9
    (crafter's sleep does nothing at full energy). Optional in files."""
    leaves: str | None = None
    """What the faced cell holds after a success (``path`` once stone is mined,
    ``table`` once one is placed); None: unknown or unchanged. Optional in files
    (files written before the field load as None)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "achievement": self.achievement,
            "action": self.action,
            "requires": dict(self.requires),
            "nearby": list(self.nearby),
            "faced": list(self.faced),
            "below": dict(self.below),
            "costs": dict(self.costs),
            "gains": dict(self.gains),
            "leaves": self.leaves,
            "text": self.text,
            "confidence": self.confidence,
            "evidence": dict(self.evidence),
        }

    @classmethod
    def from_json(cls, data: Any, where: str = "law") -> Law:
        """Parse strictly: every field checked, errors name the field."""
        if not isinstance(data, Mapping):
            raise ExperienceError(f"{where}: expected an object, got {type(data).__name__}")
        missing = [k for k in _LAW_KEYS if k not in data]
        if missing:
            raise ExperienceError(f"{where}: missing field(s) {', '.join(missing)}")
        unknown = sorted(set(data) - set(_LAW_KEYS) - _OPTIONAL_KEYS)
        if unknown:
            raise ExperienceError(f"{where}: unknown field(s) {', '.join(unknown)}")
        achievement = _string(data["achievement"], f"{where}.achievement")
        if achievement not in LAW_ACTIONS:
            raise ExperienceError(
                f"{where}.achievement: {achievement!r} is not one of crafter's 22 achievements"
            )
        action = _string(data["action"], f"{where}.action")
        if action != LAW_ACTIONS[achievement]:
            raise ExperienceError(
                f"{where}.action: {achievement} is earned by {LAW_ACTIONS[achievement]!r},"
                f" not {action!r}"
            )
        confidence = data.get("confidence")
        if confidence is not None and (
            isinstance(confidence, bool) or not isinstance(confidence, (int, float))
        ):
            raise ExperienceError(f"{where}.confidence: expected a number or null")
        leaves = data.get("leaves")
        if leaves is not None:
            leaves = _string(leaves, f"{where}.leaves").strip() or None
            _known_things([leaves] if leaves else [], f"{where}.leaves")
        evidence = data.get("evidence", {})
        if not isinstance(evidence, Mapping):
            raise ExperienceError(f"{where}.evidence: expected an object")
        requires = _items(data["requires"], f"{where}.requires")
        below = _bounds(data.get("below", {}), f"{where}.below")
        problems = precondition_problems(requires, below)
        if problems:
            raise ExperienceError(f"{where}.{problems[0]}")
        return cls(
            achievement=achievement,
            action=action,
            requires=requires,
            nearby=_known_things(_names(data["nearby"], f"{where}.nearby"), f"{where}.nearby"),
            faced=_known_things(_names(data["faced"], f"{where}.faced"), f"{where}.faced"),
            below=below,
            costs=_items(data["costs"], f"{where}.costs"),
            gains=_items(data["gains"], f"{where}.gains"),
            leaves=leaves,
            text=_string(data.get("text", ""), f"{where}.text"),
            confidence=None if confidence is None else float(confidence),
            evidence=dict(evidence),
        )

    def describe(self) -> str:
        """The law in one short paragraph (used when ``text`` is empty)."""
        needs = [f"{n} {item}" for item, n in sorted(self.requires.items())]
        needs += [f"{item} below {n}" for item, n in sorted(self.below.items())]
        needs += [f"a {name} nearby" for name in self.nearby]
        if self.faced:
            needs.append("facing " + " or ".join(self.faced))
        head = (
            self.action
            if self.action == self.achievement
            else (f"{self.action} (unlocks {self.achievement})")
        )
        parts = [head + ":"]
        parts.append("needs " + (", ".join(needs) if needs else "nothing special") + ";")
        parts.append("consumes " + (_listed(self.costs) or "nothing") + ";")
        gives = "gives " + (_listed(self.gains) or "nothing")
        if self.leaves:
            gives += f"; the faced cell is then {self.leaves}"
        parts.append(gives + ".")
        return " ".join(parts)


@dataclass
class Experience:
    """Laws by achievement, with where they came from."""

    laws: dict[str, Law]
    source: str
    meta: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "meta": dict(self.meta),
            "laws": {name: law.to_json() for name, law in sorted(self.laws.items())},
        }

    @classmethod
    def from_json(cls, data: Any) -> Experience:
        if not isinstance(data, Mapping):
            raise ExperienceError(f"experience: expected an object, got {type(data).__name__}")
        for key in ("source", "laws"):
            if key not in data:
                raise ExperienceError(f"experience: missing field {key!r}")
        source = _string(data["source"], "experience.source")
        meta = data.get("meta", {})
        if not isinstance(meta, Mapping):
            raise ExperienceError("experience.meta: expected an object")
        raw_laws = data["laws"]
        if not isinstance(raw_laws, Mapping):
            raise ExperienceError("experience.laws: expected an object keyed by achievement")
        laws: dict[str, Law] = {}
        for name, raw in raw_laws.items():
            law = Law.from_json(raw, f"laws.{name}")
            if law.achievement != name:
                raise ExperienceError(
                    f"laws.{name}.achievement: is {law.achievement!r}, expected the key {name!r}"
                )
            laws[name] = law
        return cls(laws=laws, source=source, meta=dict(meta))

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> Experience:
        """Read a JSON experience file; any defect is one ExperienceError naming it."""
        file = Path(path)
        try:
            if file.is_file() and file.stat().st_size > MAX_EXPERIENCE_BYTES:
                raise ExperienceError(
                    f"{file}: larger than an experience file can be "
                    f"({MAX_EXPERIENCE_BYTES:,} bytes at most)"
                )
            data = jsonscan.loads(file.read_text(encoding="utf-8"))  # numbers too long, too
        except FileNotFoundError:
            raise ExperienceError(f"{file}: no such experience file") from None
        except json.JSONDecodeError as exc:
            raise ExperienceError(f"{file}: not valid JSON ({exc})") from None
        except UnicodeDecodeError:
            raise ExperienceError(f"{file}: not a text (UTF-8) file") from None
        except RecursionError:
            raise ExperienceError(f"{file}: JSON nested too deeply") from None
        except OSError as exc:
            raise ExperienceError(f"{file}: cannot read: {exc.strerror or exc}") from None
        try:
            return cls.from_json(data)
        except ExperienceError as exc:
            raise ExperienceError(f"{file}: {exc}") from None

    def only(self, achievements: Iterable[str]) -> Experience:
        """The laws of ``achievements`` alone, in that order (each must have one)."""
        return Experience({a: self.laws[a] for a in achievements}, self.source, dict(self.meta))

    def render(self) -> str:
        """The experience as text for an LLM agent: one paragraph per action."""
        lines = [f"Experience of the game's laws ({self.source}):"]
        for name in ACHIEVEMENTS:
            law = self.laws.get(name)
            if law is not None:
                lines.append("- " + (law.text.strip() or law.describe()))
        return "\n".join(lines)


def lore_text(path: str) -> str:
    """The laws of the experience file at ``path``, as the text an agent is told
    (registered as the ``experience`` lore: SPRING's ``context=experience:FILE``)."""
    return Experience.load(path).render()


def experience_named(spec: str) -> Experience:
    """What an EXPERIENCE argument names: ``oracle`` (crafter's true laws, from
    :func:`oracle_experience`) or the path of a saved experience file."""
    return oracle_experience() if spec == "oracle" else Experience.load(spec)


def oracle_experience() -> Experience:
    """Crafter's true laws (from :class:`CrafterRules`) as an Experience."""
    rules = CrafterRules()
    laws: dict[str, Law] = {}
    for name in ACHIEVEMENTS:
        rule = rules.for_achievement(name)
        law = Law(
            achievement=name,
            action=LAW_ACTIONS[name],
            requires=dict(rule.requires),
            nearby=list(rule.nearby),
            faced=list(rule.faced),
            below=dict(rule.below),
            costs=dict(rule.costs),
            gains=dict(rule.gains),
            # a cell that stays what it was (water drunk, grass searched) is no change
            leaves=rule.leaves if rule.leaves not in rule.faced else None,
            confidence=1.0,
            # "varies": what the faced cell holds after a success is not a law
            # (a dead creature uncovers its ground), so ``leaves`` is not scored
            evidence={"probability": rule.probability, "cell": rule.cell},
        )
        law.text = law.describe()
        laws[name] = law
    return Experience(laws=laws, source="oracle", meta={"from": "CrafterRules"})


def precondition_problems(requires: Mapping[str, int], below: Mapping[str, int]) -> list[str]:
    """What makes these bounds impossible in crafter, one line each (empty: none).

    A count above crafter's cap of 9 is never held; a bound above 10 says
    nothing; ``requires`` energy >= 5 with ``below`` energy < 3 is met by no
    state. Such a law never holds, so its reward would never pay. The loader
    refuses them, and the extractor feeds them back to the model.
    """
    out = [
        f"requires.{item}: crafter's counts stop at {CAP}, so {count} can never be held"
        for item, count in sorted(requires.items())
        if count > CAP
    ]
    out += [
        f"below.{item}: a bound above {CAP + 1} says nothing "
        f"(crafter's counts stop at {CAP}), got {bound}"
        for item, bound in sorted(below.items())
        if bound > CAP + 1
    ]
    out += [
        f"requires.{item}: {item} >= {requires[item]} but below says {item} < {bound}: "
        "no state has both"
        for item, bound in sorted(below.items())
        if item in requires and requires[item] >= bound
    ]
    return out


def _listed(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{n} {item}" for item, n in sorted(counts.items()))


def _string(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise ExperienceError(f"{where}: expected a string, got {type(value).__name__}")
    return value


def _names(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ExperienceError(f"{where}: expected a list of names")
    return list(value)


def _bounds(value: Any, where: str) -> dict[str, int]:
    """Upper bounds ``item < n``: ``n`` must be at least 1 (nothing is below 0);
    a bound above 10 is refused with the other impossible bounds."""
    out = _items(value, where)
    for item, bound in out.items():
        if bound < 1:
            raise ExperienceError(f"{where}.{item}: expected a bound >= 1, got {bound}")
    return out


def _items(value: Any, where: str) -> dict[str, int]:
    """Counts keyed by crafter's item names; any other name is refused."""
    out = _counts(value, where)
    for item in out:
        if item not in ITEM_NAMES:
            raise ExperienceError(
                f"{where}.{item}: unknown item {item!r} (crafter's items: "
                f"{', '.join(sorted(ITEM_NAMES))})"
            )
    return out


def _known_things(names: list[str], where: str) -> list[str]:
    """``names`` when each is a thing crafter has; else the first unknown one, named."""
    for name in names:
        if name not in THING_NAMES:
            raise ExperienceError(
                f"{where}: unknown thing {name!r} (crafter's: {', '.join(sorted(THING_NAMES))})"
            )
    return names


def _counts(value: Any, where: str) -> dict[str, int]:
    if not isinstance(value, Mapping):
        raise ExperienceError(f"{where}: expected an object of item -> count")
    out: dict[str, int] = {}
    for item, count in value.items():
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ExperienceError(f"{where}.{item}: expected a whole number >= 0, got {count!r}")
        out[str(item)] = count
    return out
