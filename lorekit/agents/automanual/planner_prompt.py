"""The planner's prompts: templates, the episode's first message, what is predefined.

Kept apart from :mod:`.planner` (which re-exports these names) so the turn loop
stays one module. The first message is the rules or manual (a manual's headings
nested under ``## Manual``), what the libraries gave (a skill, on ALFWorld with
where its task began, as the authors' skill bank shows ``init_obs``; a
reflection), then the task.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any, Literal, Protocol

from lorekit.agents.automanual import texts
from lorekit.agents.automanual.core import Rule


def prompts() -> dict[str, str]:
    """The templates in ``lorekit/agents/automanual/prompts/planner.yaml``."""
    return texts.templates("planner")


def fill(name: str, **values: Any) -> str:
    return texts.fill("planner", name, **values)


class Retrieved(Protocol):
    """A skill or reflection from the libraries, as the planner shows it."""

    @property
    def kind(self) -> str: ...  # "skill" or "reflection"

    @property
    def task_type(self) -> str: ...

    @property
    def goal(self) -> str: ...

    @property
    def text(self) -> str: ...


def first_message(
    opening: str,
    *,
    rules_text: str,
    rules_heading: Literal["Rules", "Manual"] = "Rules",
    retrieved: Retrieved | Sequence[Retrieved] | None = None,
    skill_opening: bool = False,
) -> str:
    """The episode's first user message: rules (or manual), what the libraries gave
    (a skill, a reflection, or both, in that order), the task. ``skill_opening``:
    show where a skill's task began, when the library kept it."""
    shown_rules = rules_text.strip() or fill("no_rules")
    if rules_heading == "Manual":
        shown_rules = nest_headings(shown_rules)
    parts = [fill("rules_section", heading=rules_heading, text=shown_rules)]
    for item in items(retrieved):
        if item.kind == "skill":
            began = str(getattr(item, "opening", "") or "").strip()
            where = fill("skill_opening", opening=began) + "\n" if began and skill_opening else ""
            section = fill(
                "skill_section",
                task_type=item.task_type,
                goal=item.goal,
                text=item.text.strip(),
                opening=where,
            )
        else:
            section = fill(
                "reflection_section",
                task_type=item.task_type,
                goal=item.goal,
                text=item.text.strip(),
            )
        parts.append(section)
    parts.append(fill("task_section", opening=opening.strip()))
    return "\n\n".join(parts)


def items(retrieved: Retrieved | Sequence[Retrieved] | None) -> list[Retrieved]:
    """What the libraries gave, as a list without empty entries."""
    if retrieved is None:
        return []
    many = [retrieved] if not isinstance(retrieved, Sequence) else list(retrieved)
    return [r for r in many if r.text.strip()]


def nest_headings(markdown: str, levels: int = 2) -> str:
    """``markdown`` with its headings ``levels`` deeper (outside code blocks).

    A manual's ``# Title`` / ``## pick_and_place`` would otherwise read as
    sections of the planner prompt itself, beside ``## Manual`` and ``## Task``.
    """
    out, fenced = [], False
    for line in markdown.split("\n"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"#{1,6} ", line):
            line = "#" * levels + line
        out.append(line)
    return "\n".join(out)


def helper_examples(rules: Iterable[Rule]) -> list[str]:
    """Every rule's example: ``Planner.play``'s ``helper_sources``.

    As in the authors' code, the functions of any rule's example are defined
    before the planner's code runs, whatever the rule's type (a Success Process
    example may define a helper too); an example that does not parse as Python
    (one wrapped in a Markdown fence, say) defines nothing.
    """
    return [r.example for r in rules if r.example.strip()]
