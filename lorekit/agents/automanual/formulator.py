"""The Formulator: from a build's rules to a Markdown manual (AutoManual, section 3.4).

The model is shown the rules (ids, types, descriptions, examples; never the
validation logs) and asked for its understanding of them, a grouping by the
situations they apply to, and a manual in a ```markdown block: a title and
overview, then one ``##`` section per group with an introduction and the
group's rules listed as ``**rule_N**``.

The answer is checked before it is used: the block must be there, every
current rule must be listed in exactly one group, and no unknown id may
appear. A failed check is fed back to the model and it answers again (a
bounded number of times), then :class:`FormulatorError` is raised.

**What the manual contains.** The model decides the structure and writes the
overview and introductions, but the rules themselves are rendered from the
rule system: each listed id is replaced by that rule's actual description and
example. A model asked to copy a dozen rules tends to shorten or reword them,
and the details it drops (an object id, an error-prone step) are the reason
the rules exist; so whatever the model wrote about a rule is not kept, and
the prompt tells it not to bother. Sections that list no rule are dropped
(and noted in ``Manual.notes``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lorekit.agents.automanual import texts
from lorekit.agents.automanual.core import Rule
from lorekit.agents.automanual.manuals import Manual, ManualGroup, fence, render_manual
from lorekit.llm.ask import ParseError, ask
from lorekit.llm.base import LLM, Completion, Message, RequestParams

__all__ = ["Formulator", "FormulatorError", "Manual", "ManualGroup", "parse_manual", "prompts"]


class FormulatorError(RuntimeError):
    """The model gave no usable manual within the allowed answers, or there is nothing to do."""


class ManualProblems(ParseError):
    """An answer whose manual cannot be used; ``problems`` lists why, one item each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def prompts() -> dict[str, str]:
    """The templates in ``lorekit/agents/automanual/prompts/formulator.yaml``."""
    return texts.templates("formulator")


def fill(name: str, **values: Any) -> str:
    return texts.fill("formulator", name, **values)


def render_rules(rules: Sequence[Rule]) -> str:
    """The rules as the Formulator sees them: no validation logs."""
    parts = []
    for rule in rules:
        text = f"### {rule.rule_id}\nType: {rule.type.value}\nRule: {rule.content.strip()}"
        if rule.example.strip():
            text += "\nExample:\n" + fence(rule.example.strip("\n"))
        parts.append(text)
    return "\n\n".join(parts)


# ---------------------------------------------------------------------- parsing
# Possessive quantifiers and no neighbouring quantifiers over the same
# characters: each pattern is linear in the line, whatever the model wrote.
_OPEN = re.compile(r"^\s*+(`{3,}+)\s*+(?:markdown|md)\s*+$", re.IGNORECASE)
_FENCE = re.compile(r"^\s*+(`{3,}+)\s*+(\S*+)\s*+$")
_H1 = re.compile(r"^#\s++(.*)$")  # the title is group 1 less closing hashes: see _title
_H2 = re.compile(r"^##\s++(.*)$")
_ANY_ID = re.compile(r"\brule_(\d+)\b", re.IGNORECASE)
_BOLD_ID = re.compile(r"\*\*\s*rule_(\d+)\b[^*\n]{0,80}\*\*", re.IGNORECASE)
_RULE_LINE = re.compile(
    r"^\s*+(?:(?:[-*+]|\d++[.)])\s*+)?(?:#++\s*+)?\*\*\s*+rule_\d", re.IGNORECASE
)
_LABEL = re.compile(r"^[\s*_#>-]*+[\w ()/-]{0,60}:?[\s*_]*+$")
_INTRO_PREFIX = re.compile(r"^[\s*_]*+introduction[\s*_]*+:[\s*_]*+", re.IGNORECASE)


def _title(heading: re.Match[str]) -> str:
    """A heading's text without the optional closing hashes (``## Title ##``)."""
    return heading.group(1).rstrip().rstrip("#").strip()


@dataclass(slots=True)
class ParsedManual:
    """The parts of a model's answer the manual is made from, and what is wrong with it."""

    understanding: str = ""
    title: str = ""
    overview: str = ""
    groups: list[ManualGroup] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _markdown_block(text: str) -> tuple[str, str, bool] | None:
    """(text before the block, the block's content, closed?) of the first ```markdown block.

    Fences with a language inside the block open nested code blocks; a bare
    fence closes the innermost open one, the last of them the block itself.
    """
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if _OPEN.match(line)), None)
    if start is None:
        return None
    depth = 0
    for end in range(start + 1, len(lines)):
        m = _FENCE.match(lines[end])
        if m is None:
            continue
        if m.group(2):
            depth += 1
        elif depth:
            depth -= 1
        else:
            return "\n".join(lines[:start]), "\n".join(lines[start + 1 : end]), True
    return "\n".join(lines[:start]), "\n".join(lines[start + 1 :]), False


def _intro(lines: list[str]) -> str:
    """A section's introduction: its text before the first listed rule, labels trimmed."""
    cut = next((i for i, line in enumerate(lines) if _RULE_LINE.match(line)), None)
    if cut is None:
        cut = next((i for i, line in enumerate(lines) if _BOLD_ID.search(line)), len(lines))
    body = lines[:cut]
    while body and (not body[-1].strip() or body[-1].lstrip().startswith("#")):
        body.pop()
    while body and _LABEL.match(body[-1]) and body[-1].rstrip(" *_").endswith(":"):
        body.pop()
        while body and not body[-1].strip():
            body.pop()
    while body and (not body[0].strip() or body[0].lstrip().startswith("#")):
        body.pop(0)
    if body:
        body[0] = _INTRO_PREFIX.sub("", body[0])
    return "\n".join(body).strip()


def parse_manual(answer: str, rule_ids: Sequence[str], *, cut_off: bool = False) -> ParsedManual:
    """Read the Formulator's answer and check it against the current ``rule_ids``.

    ``cut_off`` says the answer stopped at the token limit, which explains a
    block without its closing fence. The result's ``problems`` are empty
    when the answer can be used.
    """
    out = ParsedManual()
    found = _markdown_block(answer)
    if found is None:
        out.problems.append("there is no ```markdown block with the manual in your answer")
        return out
    out.understanding, block, closed = found
    out.understanding = out.understanding.strip()
    if not closed and cut_off:
        out.problems.append(
            "your answer was cut off before the ```markdown block ended; keep it shorter"
            " (list each rule by its id only, its text is added automatically)"
        )
        return out
    known = {rid.lower(): rid for rid in rule_ids}
    unknown = sorted(
        {f"rule_{n}" for n in _ANY_ID.findall(block)} - set(known),
        key=lambda r: (len(r), r),  # numeric order, without int() of a huge number
    )
    if unknown:
        out.problems.append(
            f"the manual mentions {', '.join(unknown)}, which do not exist;"
            f" the rules are {', '.join(rule_ids)}"
        )
    sections: list[tuple[str, list[str]]] = []
    head: list[str] = []
    in_code = False  # a "## ..." line inside a code block is code, not a section
    for line in block.splitlines():
        if _FENCE.match(line):
            in_code = not in_code
        h2 = None if in_code else _H2.match(line)
        if h2:
            sections.append((_title(h2), []))
        elif sections:
            sections[-1][1].append(line)
        else:
            head.append(line)
    for i, line in enumerate(head):
        h1 = _H1.match(line)
        if h1 and not out.title and not any(_FENCE.match(x) for x in head[:i]):
            out.title = _title(h1)
            head[i] = ""
    out.overview = "\n".join(head).strip()
    where: dict[str, list[str]] = {}
    for title, lines in sections:
        ids: list[str] = []
        for line in lines:
            for n in _BOLD_ID.findall(line):
                rid = known.get(f"rule_{n}")
                if rid is not None and rid not in ids:
                    ids.append(rid)
        if not ids:
            out.notes.append(f"dropped the section {title!r}: it lists no rule")
            continue
        for rid in ids:
            where.setdefault(rid, []).append(title)
        out.groups.append(ManualGroup(title or "Rules", _intro(lines), tuple(ids)))
    if not out.groups:
        out.problems.append("the manual has no ## group section listing rules as **rule_N**")
    twice = [
        f"{rid} ({', '.join(repr(t) for t in ts)})" for rid, ts in where.items() if len(ts) > 1
    ]
    if twice:
        out.problems.append(
            "each rule must be listed in exactly one group, but these are listed in several: "
            + "; ".join(twice)
            + " (mention a rule elsewhere without the asterisks)"
        )
    missing = [rid for rid in rule_ids if rid not in where]
    if missing and out.groups:
        out.problems.append(
            f"these rules are in no group: {', '.join(missing)}; list each as **rule_N** in a group"
        )
    return out


# ------------------------------------------------------------------ the agent
class Formulator:
    """Asks ``roles[role]`` for a manual of the given rules, checking and retrying.

    ``world`` describes the environment and its code API in a few lines
    (the paper's formulator sees the action API); ``max_retries`` is how many
    more answers are asked for after the first unusable one.
    """

    def __init__(
        self,
        roles: Mapping[str, LLM],
        *,
        role: str = "formulator",
        world: str = "",
        max_retries: int = 2,
        max_tokens: int | None = 4096,
        temperature: float = 0.0,
    ) -> None:
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        self.roles = roles
        self.role = role
        self.world = world.strip() or "(no description given; the rules say what is known)"
        self.max_retries = max_retries
        self.max_tokens = max_tokens
        self.temperature = temperature

    def messages(self, rules: Sequence[Rule]) -> list[Message]:
        """The first request: the instructions and the rules."""
        ids = ", ".join(r.rule_id for r in rules)
        return [
            Message("system", fill("system", world=self.world)),
            Message("user", fill("user", count=len(rules), ids=ids, rules=render_rules(rules))),
        ]

    async def formulate(self, rules: Sequence[Rule], *, rules_version: int) -> Manual:
        """The manual for ``rules`` (the rule system at ``rules_version``)."""
        if not rules:
            raise FormulatorError(
                "there are no rules to formulate into a manual; build first (the build must"
                " end with at least one rule)"
            )
        rule_ids = [r.rule_id for r in rules]
        if len(set(rule_ids)) != len(rule_ids):
            raise FormulatorError(f"rule ids are not unique: {', '.join(rule_ids)}")

        def read(reply: Completion) -> ParsedManual:
            parsed = parse_manual(reply.text, rule_ids, cut_off=reply.finish_reason == "length")
            if parsed.problems:
                raise ManualProblems(parsed.problems)
            return parsed

        def retry(exc: ParseError) -> str:
            problems = exc.problems if isinstance(exc, ManualProblems) else [exc.feedback]
            return fill(
                "retry", problems="\n".join(f"- {p}" for p in problems), ids=", ".join(rule_ids)
            )

        answer = await ask(
            self.roles[self.role],
            self.messages(rules),
            read,
            params=RequestParams(temperature=self.temperature, max_tokens=self.max_tokens),
            attempts=self.max_retries + 1,
            feedback=retry,
        )
        calls = len(answer.attempts)
        if not answer.ok:
            problems = answer.error.problems if isinstance(answer.error, ManualProblems) else []
            raise FormulatorError(
                f"the {self.role!r} model gave no usable manual in {calls} answers;"
                f" last problems: {' | '.join(problems)}"
            )
        parsed = answer.value
        clean = [Rule(r.rule_id, r.type, r.content, r.example) for r in rules]
        title = parsed.title or "Manual"
        return Manual(
            markdown=render_manual(title, parsed.overview, parsed.groups, clean),
            groups=parsed.groups,
            rules_version=rules_version,
            calls=calls,
            title=title,
            overview=parsed.overview,
            rules=clean,
            understanding=parsed.understanding,
            notes=parsed.notes,
        )
