"""The rules the scripted AutoManual models understand: task types, scopes, key phrases.

Shared by the scripted planner (:mod:`lorekit.agents.automanual.testing.planner`)
and the scripted builder, consolidator and formulator
(:mod:`lorekit.agents.automanual.testing.builder`).

The mechanism under study is controlled through fixed phrases, defined here
once. The scripted planner changes its code when a rule that applies to the
task's type contains one of them; the scripted builder writes exactly these
phrases when the trajectory shows the matching error. So the study shows what
happens *if* a builder finds such a rule and a planner follows it; it does not
show that a real model would find or follow it.

- :data:`TWO_APART`: Put Two objects may lie in different receptacles, so the
  second one must be searched for (not taken from where the first was).
- :data:`TRANSFORM` (per task type): the state change the type needs, such as
  "heat it with the microwave"; a rule containing it means the planner never
  forgets that step.
- :data:`TWO_SAME` and :data:`SKIP_CHANGE`: the *wrong* rules of the study's
  ``wrong`` condition, followed as faithfully: the second object is taken from
  the first one's receptacle; the state change is left out. Rules can hurt.

When rules disagree on a point, the newest rule (highest id) decides, and
within one rule (a merged one) the phrase written last: the planner follows
the latest word, right or wrong.

A rule applies to a task type when its text names the type's id
(``pick_two_obj_and_place``) or says ``all task types``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

TWO_TYPE = "pick_two_obj_and_place"
LOOK_TYPE = "look_at_obj_in_light"
ALL_TYPES = "all task types"
"""A rule containing this phrase applies to every task type."""

TWO_APART = "may be in different receptacles"
"""Key phrase: Put Two's second object must be searched for again."""

TRANSFORM = {
    "pick_clean_then_place_in_recep": "clean it with the sinkbasin",
    "pick_heat_then_place_in_recep": "heat it with the microwave",
    "pick_cool_then_place_in_recep": "cool it with the fridge",
    LOOK_TYPE: "turn on the desklamp",
}
"""Key phrase per task type: the state change that type needs."""

TWO_SAME = "are in the same receptacle"
"""Wrong key phrase: Put Two's second object is taken where the first one was."""

SKIP_CHANGE = {
    "pick_clean_then_place_in_recep": "comes already cleaned",
    "pick_heat_then_place_in_recep": "comes already heated",
    "pick_cool_then_place_in_recep": "comes already cooled",
    LOOK_TYPE: "the lamp is already on",
}
"""Wrong key phrase per task type: the state change is not needed (so it is left out)."""

_RULE_ID = re.compile(r"\brule_\d+\b")


def _number(name: str) -> int:
    tail = name.rsplit("_", 1)[-1]
    return int(tail) if tail.isdigit() else 0


@dataclass(frozen=True)
class RuleChunk:
    """One rule as found in prompt text: its id and everything up to the next id."""

    rule_id: str
    text: str

    def applies_to(self, task_type: str) -> bool:
        low = self.text.lower()
        return task_type in low or ALL_TYPES in low

    @property
    def rule_type(self) -> str:
        """The first rule type the chunk names ("Success Process", ...), or ""."""
        m = re.search(
            r"Special Phenomenon|Special Mechanism|Success Process|Useful Helper Method|"
            r"Corrected Error|Unsolved Error",
            self.text,
        )
        return m.group(0) if m else ""


def rule_chunks(text: str) -> list[RuleChunk]:
    """Split rendered rules (or a manual) at each first mention of a ``rule_N`` id."""
    starts: list[tuple[int, str]] = []
    seen: set[str] = set()
    for m in _RULE_ID.finditer(text):
        if m.group(0) not in seen:
            seen.add(m.group(0))
            starts.append((m.start(), m.group(0)))
    chunks = []
    for i, (pos, rid) in enumerate(starts):
        body = text[pos : starts[i + 1][0] if i + 1 < len(starts) else len(text)]
        # validation logs name episodes (whose ids name task types): not the rule's scope
        chunks.append(RuleChunk(rid, body.split("Validation logs:")[0]))
    return chunks


@dataclass(frozen=True)
class Knowledge:
    """What the rules in a prompt tell the planner about one task type.

    ``two_apart``/``transform`` name the rules with the right phrase,
    ``two_same``/``skip_change`` those with the wrong one; ``second`` (``search``
    or ``same``) and ``change`` (True: do it, False: leave it out) are what the
    newest of them decides (None: no rule says), ``deciders`` the deciding ids.
    """

    two_apart: tuple[str, ...] = ()
    transform: tuple[str, ...] = ()
    two_same: tuple[str, ...] = ()
    skip_change: tuple[str, ...] = ()
    second: str | None = None
    change: bool | None = None
    deciders: dict[str, str] = field(default_factory=dict)

    @property
    def used(self) -> list[str]:
        ids = {*self.two_apart, *self.transform, *self.two_same, *self.skip_change}
        return sorted(ids, key=_number)


def recognise(rules_text: str, task_type: str) -> Knowledge:
    """The rules of ``rules_text`` that apply to ``task_type`` and carry a key phrase."""
    found: dict[str, list[str]] = {"apart": [], "change": [], "same": [], "skip": []}
    latest: dict[str, tuple[int, int, object, str]] = {}
    phrases: list[tuple[str, str, str, object]] = []
    if task_type == TWO_TYPE:
        phrases += [("apart", "second", TWO_APART, "search"), ("same", "second", TWO_SAME, "same")]
    if task_type in TRANSFORM:
        phrases += [
            ("change", "change", TRANSFORM[task_type], True),
            ("skip", "change", SKIP_CHANGE[task_type], False),
        ]
    for chunk in rule_chunks(rules_text):
        if not chunk.applies_to(task_type):
            continue
        low = chunk.text.lower()
        for name, point, phrase, value in phrases:
            at = low.rfind(phrase)
            if at < 0:
                continue
            found[name].append(chunk.rule_id)
            key = (_number(chunk.rule_id), at)
            if point not in latest or key > latest[point][:2]:
                latest[point] = (*key, value, chunk.rule_id)
    second = latest.get("second")
    change = latest.get("change")
    return Knowledge(
        tuple(found["apart"]),
        tuple(found["change"]),
        tuple(found["same"]),
        tuple(found["skip"]),
        second=None if second is None else str(second[2]),
        change=None if change is None else bool(change[2]),
        deciders={point: v[3] for point, v in latest.items()},
    )
