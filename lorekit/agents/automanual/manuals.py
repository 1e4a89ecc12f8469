"""The manual: what the Formulator makes of a build's rules, and where it is kept.

A :class:`Manual` is the Markdown text a test-time planner reads, plus the
structure it was rendered from (title, overview, groups with their
introductions and rule ids, the rules themselves), so it can be shown,
diffed against another version, or rendered again.

Manuals are stored per build in ``automanual_manuals``: each formulation
adds a version (1, 2, ...), and the rules version it was made from is kept
with it, so one can tell which rule set a manual describes.
"""

from __future__ import annotations

import ast
import json
import re
import sqlite3
import textwrap
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lorekit.agents.automanual.core import Rule
from lorekit.textsafe import storable_row


@dataclass(frozen=True, slots=True)
class ManualGroup:
    """One ``##`` section of the manual: a scenario, its introduction, its rules (in order)."""

    title: str
    intro: str
    rule_ids: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"title": self.title, "intro": self.intro, "rule_ids": list(self.rule_ids)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ManualGroup:
        return cls(str(d["title"]), str(d.get("intro", "")), tuple(map(str, d["rule_ids"])))


@dataclass(slots=True)
class Manual:
    """A formulated manual.

    ``markdown`` is what the planner reads. ``rules`` are the rules it was
    made from (without validation logs, which the planner never sees),
    ``rules_version`` the rule system's version at that time. ``calls`` is
    how many model calls formulating took; ``understanding`` is the
    Formulator's own summary (kept for people, not shown to the planner);
    ``notes`` say what was dropped from the model's answer and why. ``source``
    says where a manual not formulated here came from (a published run).
    """

    markdown: str
    groups: list[ManualGroup]
    rules_version: int
    calls: int = 0
    title: str = "Manual"
    overview: str = ""
    rules: list[Rule] = field(default_factory=list)
    understanding: str = ""
    notes: list[str] = field(default_factory=list)
    source: str = ""

    def render(self, *, level: int = 1) -> str:
        """The manual again, its title at heading ``level`` (``markdown`` is level 1).

        A planner prompt that shows the manual under ``## Manual`` asks for
        ``level=3``, so the manual's groups do not read as prompt sections.
        A manual without its structure (stored as Markdown only) is returned as is.
        """
        if not self.groups or not self.rules:
            return self.markdown
        return render_manual(self.title, self.overview, self.groups, self.rules, level=level)

    def meta(self) -> dict[str, Any]:
        """Everything but the Markdown and the rules version, as plain data."""
        return {
            "title": self.title,
            "overview": self.overview,
            "groups": [g.to_dict() for g in self.groups],
            "rules": [r.to_dict() for r in self.rules],
            "calls": self.calls,
            "understanding": self.understanding,
            "notes": list(self.notes),
            **({"source": self.source} if self.source else {}),
        }

    def to_dict(self) -> dict[str, Any]:
        return {"markdown": self.markdown, "rules_version": self.rules_version, **self.meta()}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Manual:
        return cls(
            markdown=str(d["markdown"]),
            groups=[ManualGroup.from_dict(g) for g in d.get("groups", [])],
            rules_version=int(d["rules_version"]),
            calls=int(d.get("calls", 0)),
            title=str(d.get("title", "Manual")),
            overview=str(d.get("overview", "")),
            rules=[Rule.from_dict(r) for r in d.get("rules", [])],
            understanding=str(d.get("understanding", "")),
            notes=[str(n) for n in d.get("notes", [])],
            source=str(d.get("source", "")),
        )


def fence(text: str, lang: str = "") -> str:
    """``text`` in a code fence longer than any backtick run inside it (CommonMark)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{text.rstrip()}\n{ticks}"


def code_language(text: str) -> str:
    """``python`` when ``text`` parses as Python (rule examples are mostly code), else ``""``."""
    try:
        ast.parse(textwrap.dedent(text))
    except (SyntaxError, ValueError):
        return ""
    return "python"


def render_rule(rule: Rule) -> str:
    """One rule as the manual shows it: bold id, type, description, then its example."""
    text = f"**{rule.rule_id}** ({rule.type.value}): {rule.content.strip()}"
    if rule.example.strip():
        example = rule.example.strip("\n")
        text += "\n\nExample:\n" + fence(example, code_language(example))
    return text


def render_manual(
    title: str,
    overview: str,
    groups: Sequence[ManualGroup],
    rules: Sequence[Rule],
    *,
    level: int = 1,
) -> str:
    """The manual's Markdown: title, overview, then per group its introduction and rules.

    The title is a heading of ``level`` and the groups one level below, so
    the manual can sit inside another document (a prompt's ``## Manual``).
    """
    if not 1 <= level <= 5:
        raise ValueError(f"heading level must be within 1..5, got {level}")
    by_id = {r.rule_id: r for r in rules}
    parts = [f"{'#' * level} {title.strip() or 'Manual'}"]
    if overview.strip():
        parts.append(overview.strip())
    for group in groups:
        parts.append(f"{'#' * (level + 1)} {group.title.strip()}")
        if group.intro.strip():
            parts.append(group.intro.strip())
        parts.extend(render_rule(by_id[rid]) for rid in group.rule_ids)
    return "\n\n".join(parts) + "\n"


# --------------------------------------------------------------------- storage
@dataclass(frozen=True, slots=True)
class ManualVersion:
    """A stored manual, summarised: which version, from which rules version, when."""

    version: int
    rules_version: int
    at: float
    groups: int
    rules: int


def save_manual(conn: sqlite3.Connection, build_id: str, manual: Manual) -> int:
    """Store ``manual`` as the next version of ``build_id``'s manual; returns that version."""
    row = conn.execute(
        "SELECT COALESCE(MAX(version), 0) + 1 FROM automanual_manuals WHERE build_id = ?",
        (build_id,),
    ).fetchone()
    version = int(row[0])
    conn.execute(
        "INSERT INTO automanual_manuals (build_id, version, rules_version, markdown, meta, at)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        storable_row(
            (
                build_id,
                version,
                manual.rules_version,
                manual.markdown,
                json.dumps(manual.meta()),
                time.time(),
            )
        ),
    )
    if conn.in_transaction:
        conn.commit()
    return version


def load_manual(conn: sqlite3.Connection, build_id: str, version: int) -> Manual | None:
    """Version ``version`` of ``build_id``'s manual, or None if there is no such version."""
    row = conn.execute(
        "SELECT markdown, rules_version, meta FROM automanual_manuals"
        " WHERE build_id = ? AND version = ?",
        (build_id, version),
    ).fetchone()
    return None if row is None else _manual(row)


def latest_manual(conn: sqlite3.Connection, build_id: str) -> Manual | None:
    """The newest manual of ``build_id``, or None if it was never formulated."""
    row = conn.execute(
        "SELECT markdown, rules_version, meta FROM automanual_manuals"
        " WHERE build_id = ? ORDER BY version DESC LIMIT 1",
        (build_id,),
    ).fetchone()
    return None if row is None else _manual(row)


def manual_versions(conn: sqlite3.Connection, build_id: str) -> list[ManualVersion]:
    """Every stored version of ``build_id``'s manual, oldest first."""
    rows = conn.execute(
        "SELECT version, rules_version, at, meta FROM automanual_manuals"
        " WHERE build_id = ? ORDER BY version",
        (build_id,),
    ).fetchall()
    out = []
    for version, rules_version, at, meta in rows:
        data = json.loads(meta) if meta else {}
        out.append(
            ManualVersion(
                int(version),
                int(rules_version),
                float(at),
                len(data.get("groups", [])),
                len(data.get("rules", [])),
            )
        )
    return out


def _manual(row: tuple[Any, ...]) -> Manual:
    markdown, rules_version, meta = row
    data = json.loads(meta) if meta else {}
    return Manual.from_dict({**data, "markdown": markdown, "rules_version": rules_version})
