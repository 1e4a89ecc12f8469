"""The rule system's history as data: events, replay, diffs and the prompt rendering.

Kept apart from :mod:`.rules` because none of it needs the database: the
lead's ``lorekit show`` and the formulator can replay, diff and render rules
from events or rule lists alone.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from lorekit.agents.automanual.core import Rule, RuleType
from lorekit.agents.automanual.toolcalls import quiet_parse

__all__ = [
    "RuleChange",
    "RuleDiff",
    "RuleEvent",
    "copy_rule",
    "diff_fields",
    "diff_rules",
    "ordered",
    "render_rules",
    "replay",
    "rule_from_json",
    "rule_json",
    "rule_number",
]

_FIELDS = ("type", "content", "example", "logs")
_ID = re.compile(r"^(?:rule)?[\s_-]*+(\d++)$", re.IGNORECASE)


@dataclass(frozen=True)
class RuleEvent:
    """One change: after it the rule system is at ``version``.

    ``op`` is write / update / delete / restore; ``before`` is None for a new
    rule, ``after`` None for a removed one.
    """

    version: int
    episode_id: str | None
    actor: str
    op: str
    rule_id: str
    before: Rule | None
    after: Rule | None
    at: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "episode_id": self.episode_id,
            "actor": self.actor,
            "op": self.op,
            "rule_id": self.rule_id,
            "before": None if self.before is None else self.before.to_dict(),
            "after": None if self.after is None else self.after.to_dict(),
            "at": self.at,
        }

    def same_change(self, other: RuleEvent) -> bool:
        """Equal apart from the time: what "the same history" means on resume."""
        return self.to_dict() | {"at": 0} == other.to_dict() | {"at": 0}


@dataclass(frozen=True)
class RuleChange:
    """A rule present at both versions whose fields differ: name -> (before, after)."""

    rule_id: str
    fields: Mapping[str, tuple[Any, Any]]


@dataclass(frozen=True)
class RuleDiff:
    """What changed from version ``a`` to version ``b``."""

    a: int
    b: int
    added: list[Rule] = field(default_factory=list)
    removed: list[Rule] = field(default_factory=list)
    changed: list[RuleChange] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed)

    def render(self) -> str:
        """A readable summary: ``+`` added, ``-`` removed, ``~`` changed field by field."""
        head = (
            f"rules v{self.a} -> v{self.b}: {len(self.added)} added, "
            f"{len(self.removed)} removed, {len(self.changed)} changed"
        )
        lines = [head]
        for r in self.added:
            lines.append(f"+ {r.rule_id} ({r.type.value}): {_one_line(r.content)}")
        for r in self.removed:
            lines.append(f"- {r.rule_id} ({r.type.value}): {_one_line(r.content)}")
        for c in self.changed:
            lines.append(f"~ {c.rule_id}")
            for name, (before, after) in c.fields.items():
                if name == "logs":
                    new = [x for x in after if x not in before]
                    lines.append(f"    logs: +{len(new)} entr{'y' if len(new) == 1 else 'ies'}")
                    lines.extend(f"      + {_one_line(x)}" for x in new)
                    continue
                lines.append(f"    {name} before: {_one_line(str(before))}")
                lines.append(f"    {name} after:  {_one_line(str(after))}")
        return "\n".join(lines)


def replay(events: Iterable[RuleEvent]) -> dict[str, Rule]:
    """The rules after ``events``, by id."""
    rules: dict[str, Rule] = {}
    for e in events:
        if e.after is None:
            rules.pop(e.rule_id, None)
        else:
            rules[e.rule_id] = e.after
    return rules


def diff_rules(a: int, rules_a: Iterable[Rule], b: int, rules_b: Iterable[Rule]) -> RuleDiff:
    """Field-level differences between two rule lists (ids identify rules)."""
    old = {r.rule_id: r for r in rules_a}
    new = {r.rule_id: r for r in rules_b}
    changed: list[RuleChange] = []
    for rid, before in old.items():
        after = new.get(rid)
        if after is None:
            continue
        fields = diff_fields(before, after)
        if fields:
            changed.append(RuleChange(rid, fields))
    return RuleDiff(
        a,
        b,
        added=[r for rid, r in new.items() if rid not in old],
        removed=[r for rid, r in old.items() if rid not in new],
        changed=changed,
    )


def render_rules(rules: Iterable[Rule], *, logs: bool = False) -> str:
    """``rule_3 (Success Process): <content>`` then the example as a fenced block.

    The planner sees rules without logs (as in the paper); the builder and
    consolidator see the logs, which name the episodes to look up.
    """
    parts: list[str] = []
    for r in rules:
        lines = [f"{r.rule_id} ({r.type.value}): {r.content}"]
        if r.example:
            lines.append(_fenced(r.example))
        if logs and r.logs:
            lines.append("Validation logs:")
            lines.extend(f"- {entry}" for entry in r.logs)
        parts.append("\n".join(lines))
    return "\n\n".join(parts) if parts else "(no rules yet)"


def _fenced(text: str) -> str:
    """A fence longer than any backtick run inside, tagged python when it parses."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    try:
        quiet_parse(text)
        lang = "python"
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        lang = ""
    return f"{fence}{lang}\n{text}\n{fence}"


def _value(rule: Rule, name: str) -> Any:
    value = getattr(rule, name)
    if isinstance(value, RuleType):
        return value.value
    return list(value) if isinstance(value, list) else value


def _one_line(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def diff_fields(before: Rule, after: Rule) -> dict[str, tuple[Any, Any]]:
    """The fields (type, content, example, logs) that differ: name -> (before, after)."""
    return {
        name: (_value(before, name), _value(after, name))
        for name in _FIELDS
        if _value(before, name) != _value(after, name)
    }


def rule_number(rule_id: str) -> int:
    """``n`` of ``rule_n`` (also ``"n"``, ``"Rule n"``); -1 for anything else
    (including a number too long to be an id: ``int()`` refuses 4,300 digits)."""
    m = _ID.match(str(rule_id).strip())
    return int(m.group(1)) if m and len(m.group(1)) <= 9 else -1


def ordered(rules: Iterable[Rule] | Mapping[str, Rule]) -> list[Rule]:
    """Copies of ``rules`` sorted by id number (``rule_10`` after ``rule_9``)."""
    items = rules.values() if isinstance(rules, Mapping) else rules
    return [
        Rule.from_dict(r.to_dict()) for r in sorted(items, key=lambda r: rule_number(r.rule_id))
    ]


def copy_rule(rule: Rule | None) -> Rule | None:
    return None if rule is None else Rule.from_dict(rule.to_dict())


def rule_json(rule: Rule | None) -> str | None:
    """How an event's rule is stored (NULL for none)."""
    return None if rule is None else json.dumps(rule.to_dict(), ensure_ascii=False)


def rule_from_json(text: str | None) -> Rule | None:
    return None if text is None else Rule.from_dict(json.loads(text))
