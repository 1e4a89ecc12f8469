"""Reward predicates: one ``valid(state, target) -> bool`` per achievement.

The paper's law-based reward pays an action when its preconditions hold, so
each achievement's law becomes a small function over a
:class:`~lorekit.laws.state_api.LawState`. A predicate is kept as source text
and compiled with :func:`lorekit.sandbox.compile_predicate` (never ``exec``),
so a set of them can be saved as JSON, sent to env worker processes, checked
on records and compared, whoever wrote it:

- :func:`law_source` writes it from a :class:`~lorekit.laws.experience.Law`
  (the oracle, the symbolic learner, any experience): the law as code;
- :mod:`lorekit.laws.rewarder` has a model write it (the paper's Algorithm 1).

Each entry also carries the *penalty* predicate, true when at least one of the
law's preconditions holds; the wrapper charges the paper's -0.5 when it is
false. It always comes from the law's structure, since a model-written
``valid`` says only whether all preconditions hold.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from lorekit.laws.experience import LAW_ACTIONS, Experience, Law
from lorekit.laws.record_format import LawRecord
from lorekit.laws.state_api import LawState, state_from_record
from lorekit.sandbox import PredicateError, compile_predicate

FORMAT = "lorekit.laws.predicates/1"
Predicate = Callable[[LawState, str], Any]


def _faced_names(law: Law) -> list[str]:
    # Crafter lets only a ripe plant be eaten; a law saying "faces a plant"
    # (crafter's own data does) means the ripe one the state calls "ripe plant".
    if law.achievement == "eat_plant":
        return sorted({"ripe plant" if f == "plant" else f for f in law.faced})
    return [str(f) for f in law.faced]


def _conditions(law: Law) -> list[str]:
    """Each precondition of ``law`` as a Python expression over the state."""
    tests = []
    for item, count in sorted(law.requires.items()):
        if not isinstance(item, str) or isinstance(count, bool) or not isinstance(count, int):
            raise ValueError(f"law {law.achievement!r}: requires must map names to counts")
        tests.append(f"state.inventory.get({item!r}, 0) >= {count}")
    for item, bound in sorted(law.below.items()):
        if not isinstance(item, str) or isinstance(bound, bool) or not isinstance(bound, int):
            raise ValueError(f"law {law.achievement!r}: below must map names to bounds")
        tests.append(f"state.inventory.get({item!r}, 0) < {bound}")
    for name in law.nearby:
        tests.append(f"{str(name)!r} in state.nearby")
    faced = _faced_names(law)
    if faced:
        tests.append(f"target in {tuple(faced)!r}")
    return tests


def law_source(law: Law) -> str:
    """``def valid(state, target)``: true when every precondition of ``law`` holds."""
    lines = [
        "def valid(state, target):",
        f"    {law.achievement + ': all preconditions of its law.'!r}",
    ]
    lines += [f"    if not ({test}):\n        return False" for test in _conditions(law)]
    lines.append("    return True")
    return "\n".join(lines) + "\n"


def penalty_source(law: Law) -> str:
    """``def partly(state, target)``: true when at least one precondition holds
    (always, for a law without preconditions: such an action is never a
    poor choice)."""
    tests = _conditions(law)
    body = " or ".join(f"({t})" for t in tests) if tests else "True"
    return (
        "def partly(state, target):\n"
        f"    {law.achievement + ': some precondition of its law holds.'!r}\n"
        f"    return {body}\n"
    )


@dataclass(frozen=True)
class Mistake:
    """A record the predicate judged wrongly (or crashed on)."""

    state: LawState
    expected: bool
    got: bool | None
    error: str | None = None


@dataclass(frozen=True)
class Check:
    """How a predicate fared on the records of one achievement."""

    successes: int
    failures: int
    right_on_successes: int
    right_on_failures: int
    errors: int
    mistakes: tuple[Mistake, ...] = ()

    @property
    def total(self) -> int:
        return self.successes + self.failures

    @property
    def correct(self) -> int:
        return self.right_on_successes + self.right_on_failures

    @property
    def accuracy(self) -> float | None:
        """Share of records judged right; None when there were none."""
        return self.correct / self.total if self.total else None


def check_predicate(
    predicate: Predicate, records: Iterable[LawRecord], achievement: str, *, keep: int = 5
) -> Check:
    """Run ``predicate`` on the ``before`` state of each record of ``achievement``:
    it should say True on successes and False on failures. Keeps up to
    ``keep`` mistakes (crashes first) for feedback."""
    counts = {True: 0, False: 0}
    right = {True: 0, False: 0}
    errors = 0
    crashes: list[Mistake] = []
    wrong: list[Mistake] = []
    for record in records:
        if record.achievement != achievement:
            continue
        state = state_from_record(record.before)
        counts[record.success] += 1
        try:
            got = bool(predicate(state, state.faced))
        except PredicateError as exc:
            errors += 1
            crashes.append(Mistake(state, record.success, None, str(exc)))
            continue
        if got == record.success:
            right[record.success] += 1
        else:
            wrong.append(Mistake(state, record.success, got))
    mistakes = tuple((crashes + wrong)[:keep])
    return Check(counts[True], counts[False], right[True], right[False], errors, mistakes)


@dataclass
class PredicateEntry:
    """One achievement's reward predicate and what is known of its quality."""

    achievement: str
    action: str
    source: str
    penalty_source: str | None = None
    origin: str = ""
    accuracy: float | None = None
    checked: int = 0
    attempts: int = 0
    notes: list[str] = field(default_factory=list)


@dataclass
class PredicateSet:
    """Predicates by achievement; saved as JSON (source code and accuracy)."""

    entries: dict[str, PredicateEntry]
    meta: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "meta": self.meta,
            "entries": {k: asdict(v) for k, v in sorted(self.entries.items())},
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: str = "predicate set") -> PredicateSet:
        if not isinstance(data, Mapping) or data.get("format") != FORMAT:
            raise ValueError(f"{where} is not a predicate set (expected format {FORMAT!r})")
        entries = {}
        known = set(PredicateEntry.__dataclass_fields__)
        for name, raw in dict(data.get("entries", {})).items():
            if not isinstance(raw, Mapping) or not {"achievement", "action", "source"} <= set(raw):
                raise ValueError(f"{where}: entry {name!r} needs achievement, action and source")
            extra = set(raw) - known
            if extra:
                raise ValueError(f"{where}: entry {name!r} has unknown fields {sorted(extra)}")
            entries[str(name)] = PredicateEntry(**dict(raw))
        return cls(entries, dict(data.get("meta", {})))

    def save(self, path: str | Path) -> None:
        text = json.dumps(self.to_json(), indent=1, sort_keys=True)
        Path(path).write_text(text + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> PredicateSet:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise ValueError(f"cannot read predicate set {path}: {exc}") from None
        return cls.from_json(data, where=str(path))

    def summary(self) -> list[dict[str, Any]]:
        """One row per achievement: origin, accuracy, records checked, attempts."""
        return [
            {
                "achievement": e.achievement,
                "origin": e.origin,
                "accuracy": e.accuracy,
                "checked": e.checked,
                "attempts": e.attempts,
            }
            for _, e in sorted(self.entries.items())
        ]


def predicates_from_experience(
    experience: Experience, records: Sequence[LawRecord] | None = None
) -> PredicateSet:
    """Every law of ``experience`` as code; with ``records``, each checked on
    them (accuracy on that achievement's successes and failures)."""
    entries = {}
    for achievement, law in sorted(experience.laws.items()):
        entry = PredicateEntry(
            achievement=achievement,
            action=law.action or LAW_ACTIONS[achievement],
            source=law_source(law),
            penalty_source=penalty_source(law),
            origin=f"law:{experience.source}",
        )
        if records is not None:
            check = check_predicate(compile_predicate(entry.source), records, achievement)
            entry.accuracy, entry.checked = check.accuracy, check.total
        entries[achievement] = entry
    return PredicateSet(entries, {"experience": experience.source})


@dataclass(frozen=True)
class ActionRule:
    """What the reward wrapper needs for one action, compiled."""

    achievement: str
    valid: Predicate
    partly: Predicate | None


def compile_set(predicates: PredicateSet) -> dict[str, ActionRule]:
    """The set's predicates compiled and keyed by action name.

    Raises ``ValueError`` if two entries claim one action or a source does
    not compile (a saved set is expected to hold only checked sources).
    """
    rules: dict[str, ActionRule] = {}
    for achievement, entry in sorted(predicates.entries.items()):
        if entry.action in rules:
            raise ValueError(
                f"predicates for {rules[entry.action].achievement!r} and {achievement!r} "
                f"both reward action {entry.action!r}; keep one"
            )
        try:
            valid = compile_predicate(entry.source)
            partly = compile_predicate(entry.penalty_source) if entry.penalty_source else None
        except Exception as exc:
            raise ValueError(f"the predicate for {achievement!r} does not compile: {exc}") from None
        rules[entry.action] = ActionRule(achievement, valid, partly)
    return rules
