"""The rules the scripted AutoManual models understand: task types, scopes, key phrases.

Shared by the scripted planner (:mod:`lorekit.agents.automanual.simulation`)
and the scripted builder, consolidator and formulator
(:mod:`lorekit.agents.automanual.simulation_builder`).

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

A rule applies to a task type when its text names the type's id
(``pick_two_obj_and_place``) or says ``all task types``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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
    """What the rules in a prompt tell the planner about one task type (rule ids per point)."""

    two_apart: tuple[str, ...] = ()
    transform: tuple[str, ...] = ()

    @property
    def used(self) -> list[str]:
        return sorted(set(self.two_apart) | set(self.transform), key=_number)


def recognise(rules_text: str, task_type: str) -> Knowledge:
    """The rules of ``rules_text`` that apply to ``task_type`` and carry a key phrase."""
    two: list[str] = []
    change: list[str] = []
    key = TRANSFORM.get(task_type)
    for chunk in rule_chunks(rules_text):
        if not chunk.applies_to(task_type):
            continue
        low = chunk.text.lower()
        if task_type == TWO_TYPE and TWO_APART in low:
            two.append(chunk.rule_id)
        if key is not None and key in low:
            change.append(chunk.rule_id)
    return Knowledge(tuple(two), tuple(change))
