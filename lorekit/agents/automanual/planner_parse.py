"""Reading the planner's answers, and picking safe function definitions out of code.

Models drift from a requested format: headings at another level or in bold,
other words ("Rules to consider", "Overall plan"), a code block without a
language tag. The parser accepts all of that; what it cannot do without is
a code block, which is the part that acts.

:func:`definitions` is how earlier code is carried into a later run: only
``def`` statements, rebuilt from the syntax tree, and only ones that run
nothing when defined (no decorators, literal defaults, annotations dropped).
Re-running anything else would repeat actions in the environment.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from lorekit.llm.ask import ParseError

#: Section names the planner may use, mapped to the answer part they fill.
_SECTIONS = {
    "analysis": "analysis",
    "understanding": "analysis",
    "understanding of the observation": "analysis",
    "thoughts": "analysis",
    "related rules": "rules",
    "rules": "rules",
    "rules to consider": "rules",
    "relevant rules": "rules",
    "plan": "plan",
    "overall plan": "plan",
    "plan for the task": "plan",
    "code": "code",
    "mistakes": "mistakes",
    "misunderstandings and mistakes": "mistakes",
    "reflection": "reflection",
    "skill": "code",
}
#: A heading line: "### Plan", "## Plan:", "**Plan**", "**Plan:** text", "### Plan: text".
#: Possessive quantifiers keep it linear in the line (``h`` keeps its spaces; callers split it).
_HEADING = re.compile(
    r"^[ \t]*+(?:#{1,6}+(?P<h>[^\n#]++)#*+"
    r"|\*\*(?P<b>[^*\n]++)\*\*(?P<after>[^\n]*+))[ \t]*+$",
    re.MULTILINE,
)
_FENCE = re.compile(
    r"^[ \t]*+```[ \t]*+(?P<lang>[\w+-]*+)[^\n]*+\n(?P<body>.*?)^[ \t]*+```",
    re.MULTILINE | re.DOTALL,
)
_RULE_ID = re.compile(r"\brule[_ ]?(\d+)\b", re.IGNORECASE)


class AnswerFormatError(ParseError):
    """The answer lacks a part the planner needs (its message is fed back to the model)."""


@dataclass(frozen=True)
class PlannerAnswer:
    """The four parts of one planner answer."""

    analysis: str
    related_rules: list[str]
    plan: str
    code: str


@dataclass(frozen=True)
class Conclusion:
    """The planner's closing answer: a cleaned skill (success) or a reflection (failure)."""

    skill_code: str = ""
    mistakes: str = ""
    reflection: str = ""
    sections: dict[str, str] = field(default_factory=dict)


def sections(text: str) -> dict[str, str]:
    """The answer's text under each known heading (unknown headings stay in the text)."""
    found: dict[str, str] = {}
    marks = []
    for match in _HEADING.finditer(_without_fences(text)):
        line = (match.group("h") or match.group("b") or "") + (match.group("after") or "")
        title, colon, inline = line.partition(":")
        key = _SECTIONS.get(" ".join(title.replace("*", "").lower().split()))
        if key is not None and (colon or not inline):
            marks.append((match.start(), match.end(), key, inline.replace("**", "").strip()))
    for i, (_, end, key, inline) in enumerate(marks):
        stop = marks[i + 1][0] if i + 1 < len(marks) else len(text)
        body = f"{inline}\n{text[end:stop].strip()}".strip()
        found[key] = f"{found[key]}\n{body}".strip() if key in found else body
    return found


def _without_fences(text: str) -> str:
    """``text`` with code blocks blanked out (same length), so a ``# comment`` is no heading."""
    return _FENCE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def code_blocks(text: str) -> list[str]:
    """The bodies of the fenced blocks tagged python (or untagged), in order."""
    return [
        m.group("body").rstrip()
        for m in _FENCE.finditer(text)
        if m.group("lang").lower() in ("python", "py", "python3", "")
    ]


def parse_answer(text: str) -> PlannerAnswer:
    """The four parts of a planner answer; :class:`AnswerFormatError` if it has no code block."""
    parts = sections(text)
    blocks = code_blocks(parts["code"]) if "code" in parts else []
    if not blocks:
        blocks = code_blocks(text)
    code = "\n\n".join(b for b in blocks if b.strip())
    if not code.strip():
        raise AnswerFormatError(
            "the answer has no ```python code block; write the code that acts inside "
            "```python and ```, after the Analysis, Related rules and Plan parts"
        )
    rules_text = parts.get("rules", "")
    related = list(dict.fromkeys(f"rule_{n}" for n in _RULE_ID.findall(rules_text)))
    return PlannerAnswer(
        analysis=parts.get("analysis", ""),
        related_rules=related,
        plan=parts.get("plan", ""),
        code=code,
    )


def parse_conclusion(text: str, *, succeeded: bool) -> Conclusion:
    """The skill (success) or reflection (failure) in a closing answer.

    A success without a code block raises :class:`AnswerFormatError`; a
    failure's reflection is its Reflection section, else the whole answer.
    """
    parts = sections(text)
    if succeeded:
        blocks = code_blocks(parts["code"]) if "code" in parts else []
        if not blocks:
            blocks = code_blocks(text)
        skill = "\n\n".join(b for b in blocks if b.strip())
        if not skill.strip():
            raise AnswerFormatError(
                "the conclusion has no ```python code block; put the organised code of the "
                "successful episode inside ```python and ```"
            )
        return Conclusion(skill_code=skill, mistakes=parts.get("mistakes", ""), sections=parts)
    reflection = parts.get("reflection") or text.strip()
    return Conclusion(reflection=reflection, sections=parts)


def definitions(source: str) -> str:
    """The function definitions in ``source`` that are safe to define again, as code.

    See :func:`defined_functions`; this joins them into one piece of source.
    """
    return "\n\n\n".join(defined_functions(source).values())


def defined_functions(source: str) -> dict[str, str]:
    """The safe function definitions in ``source``, by name (a later one of a name wins).

    Only top-level ``def`` statements; anything else (calls, assignments,
    loops, classes, imports) is left out, because it would run again. A
    definition is left out too if defining it runs code: decorators, or
    default values that are not literals; and so is a stub (a body of only
    a docstring, ``pass`` or ``...``), which would shadow a working helper of
    the same name, e.g. one the env profile predefines. Annotations are
    dropped (they are evaluated when the function is defined). Source that
    does not parse gives none. The result is rebuilt from the tree (comments
    are lost).
    """
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    kept: dict[str, str] = {}
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef) or node.decorator_list or _stub(node):
            continue
        args = node.args
        defaults = [*args.defaults, *(d for d in args.kw_defaults if d is not None)]
        if not all(_literal(d) for d in defaults):
            continue
        for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
            if arg is not None:
                arg.annotation = None
        node.returns = None
        kept.pop(node.name, None)  # keep definition order: the latest last
        kept[node.name] = ast.unparse(node)
    return kept


def _stub(node: ast.FunctionDef) -> bool:
    return all(
        isinstance(s, ast.Pass) or (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
        for s in node.body
    )


def _literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True
