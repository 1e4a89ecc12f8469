"""Tool calls written by a model as Python, parsed with ``ast`` and never run.

AutoManual's builder and consolidator answer with code such as
``rule_system.write_rule(rule="...", type="Special Mechanism")``. The paper's
code ``exec``s that; here the text is only parsed: each statement must be one
call of a known function, on the receiver or bare, with literal arguments
(``ast.literal_eval`` on each argument). Everything else is refused, and every
refused statement is reported at once with its line and reason, so that a
single retry can fix them all. A refusal applies nothing: either every call
of the answer is accepted or none is.
"""

from __future__ import annotations

import ast
import re
import textwrap
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lorekit.llm.ask import ParseError
from lorekit.textsafe import has_lone_surrogate

__all__ = [
    "MAX_TEXT_CHARS",
    "ToolCall",
    "ToolCallError",
    "ToolSpec",
    "code_blocks",
    "parse_tool_calls",
    "quiet_parse",
]

MAX_TEXT_CHARS = 100_000
"""Longest answer parsed (characters); rules are short, so more is a runaway model."""
_MAX_LISTED = 20  # refusals listed in one message; the rest are counted


@dataclass(frozen=True)
class ToolSpec:
    """A function a model may call: its parameter names in positional order."""

    name: str
    params: tuple[str, ...]
    required: tuple[str, ...] = ()


@dataclass(frozen=True)
class ToolCall:
    """One accepted call: the function, its arguments by name, where it was."""

    name: str
    kwargs: Mapping[str, Any]
    line: int
    source: str


class ToolCallError(ParseError):
    """The answer's calls cannot be accepted; the message is meant for the model.

    ``problems`` holds ``(line, reason)`` for every refused statement (line 0
    when the problem is the answer as a whole).
    """

    def __init__(self, message: str, problems: list[tuple[int, str]] | None = None) -> None:
        super().__init__(message)
        self.problems = list(problems or [])


_FENCE = re.compile(r"^[ \t]*+(`{3,}+|~{3,}+)[ \t]*+([\w+-]*+)[^\n`]*+$")  # linear: possessive
_ALIASES = {"python": {"python", "py", "python3"}}


def code_blocks(text: str, lang: str = "python") -> list[str]:
    """The bodies of the fenced blocks tagged ``lang`` (case-insensitive), in order.

    A fence closes on a line of the same character, at least as long. A block
    left open at the end (an answer cut off by the token limit) runs to the
    end of the text. Bodies are dedented, for blocks inside list items.
    """
    wanted = _ALIASES.get(lang.lower(), {lang.lower()})
    blocks: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, tag = m.group(1), m.group(2).lower()
        body: list[str] = []
        looks = 3  # fence lines checked for being inside a string (bounds the work)
        i += 1
        while i < len(lines):
            stripped = lines[i].strip()
            closes = stripped and set(stripped) == {fence[0]} and len(stripped) >= len(fence)
            # a fence line inside a triple-quoted string (a rule's example) does not close
            if closes:
                looks -= 1
                if looks < 0 or tag not in _ALIASES["python"] or not _in_open_string(body):
                    break
            body.append(lines[i])
            i += 1
        i += 1
        if tag in wanted:
            blocks.append(textwrap.dedent("\n".join(body)))
    return blocks


def _in_open_string(body: list[str]) -> bool:
    """True when the code so far stops inside a triple-quoted string."""
    try:
        quiet_parse(textwrap.dedent("\n".join(body)))
    except SyntaxError as exc:
        return "triple-quoted" in str(exc.msg)
    except (ValueError, RecursionError, MemoryError):
        return False
    return False


def parse_tool_calls(
    text: str,
    tools: Mapping[str, ToolSpec],
    *,
    receiver: str = "rule_system",
    max_calls: int = 40,
    max_chars: int = MAX_TEXT_CHARS,
) -> list[ToolCall]:
    """The calls in ``text``'s ```python blocks, or raise :class:`ToolCallError`.

    Without a ```python block, the whole text counts as code only when it
    parses and holds nothing but calls. An answer with no call at all is an
    error too (ending the turn is a call: ``stop_generating()``), so a model
    that forgot the code is told so rather than silently doing nothing.
    """
    if len(text) > max_chars:
        raise ToolCallError(
            f"the answer has {len(text)} characters, more than the {max_chars} accepted; "
            "answer again with shorter rules and examples",
            [(0, "too long")],
        )
    blocks = code_blocks(text)
    if not blocks:
        try:
            tree = quiet_parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            tree = None
        only_calls = tree is not None and all(_is_call_statement(s) for s in tree.body)
        if tree is None or not tree.body or not only_calls:
            raise _no_calls(tools, receiver)
        blocks = [text]
    calls: list[ToolCall] = []
    problems: list[tuple[int, str]] = []
    labels: list[str] = []
    for k, code in enumerate(blocks, start=1):
        where = f"block {k}, " if len(blocks) > 1 else ""
        for line, reason, call in _parse_block(code, tools, receiver, max_calls):
            if call is not None:
                calls.append(call)
            else:
                problems.append((line, reason))
                labels.append(f"- {where}line {line}: {reason}")
    if len(calls) > max_calls:
        problems.append((0, "too many calls"))
        labels.append(f"- {len(calls)} calls, more than the {max_calls} allowed in one answer")
    if problems:
        if len(labels) > _MAX_LISTED:
            labels[_MAX_LISTED:] = [f"- ... and {len(labels) - _MAX_LISTED} more"]
        raise ToolCallError(
            f"refused {len(problems)} statement(s); nothing was applied:\n"
            + "\n".join(labels)
            + f"\nUse only {receiver}.NAME(...) calls with literal arguments (strings, numbers, "
            "lists, True/False/None), one call per statement, and answer again.",
            problems,
        )
    if not calls:
        raise _no_calls(tools, receiver)
    return calls


def _no_calls(tools: Mapping[str, ToolSpec], receiver: str) -> ToolCallError:
    names = ", ".join(f"{receiver}.{n}(...)" for n in tools)
    return ToolCallError(
        f"no ```python block with calls; put your calls ({names}) in one ```python block",
        [(0, "no calls")],
    )


def quiet_parse(code: str) -> ast.Module:
    """``ast.parse`` without the warnings model text triggers (``"\\d"``, ``1if``)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(code)


def _is_call_statement(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)


def _parse_block(
    code: str, tools: Mapping[str, ToolSpec], receiver: str, max_calls: int
) -> list[tuple[int, str, ToolCall | None]]:
    """One entry per statement: (line, reason, None) when refused, else the call."""
    try:
        tree = quiet_parse(code)
    except SyntaxError as exc:
        return [(exc.lineno or 0, f"syntax error: {exc.msg}", None)]
    except UnicodeEncodeError:
        return [(0, "the code holds a lone surrogate (half of an emoji); leave it out", None)]
    except (ValueError, RecursionError, MemoryError) as exc:
        return [(0, f"cannot parse the code ({type(exc).__name__}): too deeply nested?", None)]
    if len(tree.body) > max_calls:  # refuse before any per-statement work
        reason = f"{len(tree.body)} statements, more than the {max_calls} calls allowed"
        return [(tree.body[max_calls].lineno, reason, None)]
    lines = code.splitlines()
    out: list[tuple[int, str, ToolCall | None]] = []
    for stmt in tree.body:
        source = _segment(lines, stmt)
        try:
            call = _accept(stmt, tools, receiver, source)
        except _Refused as exc:
            snippet = " ".join(source.split())
            snippet = snippet if len(snippet) <= 60 else snippet[:57] + "..."
            out.append((stmt.lineno, f"`{snippet}`: {exc}", None))
        else:
            out.append((stmt.lineno, "", call))
    return out


def _segment(lines: list[str], node: ast.stmt) -> str:
    """The source of ``node`` (``ast.get_source_segment`` re-splits the code every call)."""
    end = node.end_lineno or node.lineno
    chunk = [ln.encode() for ln in lines[node.lineno - 1 : end]]
    if not chunk:
        return ""
    if node.end_col_offset is not None:
        chunk[-1] = chunk[-1][: node.end_col_offset]
    chunk[0] = chunk[0][node.col_offset :]
    return "\n".join(b.decode(errors="replace") for b in chunk)


class _Refused(Exception):
    """Why one statement is refused (internal)."""


_STATEMENT_REASONS: tuple[tuple[type[ast.AST] | tuple[type[ast.AST], ...], str], ...] = (
    ((ast.Import, ast.ImportFrom), "imports are not allowed"),
    (
        (ast.Assign, ast.AugAssign, ast.AnnAssign),
        "assignments are not allowed; pass the values inside the call",
    ),
    ((ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef), "definitions are not allowed"),
    (
        (ast.For, ast.AsyncFor, ast.While, ast.If, ast.With, ast.AsyncWith, ast.Try, ast.Match),
        "control flow is not allowed; write one plain call per statement",
    ),
    ((ast.Delete, ast.Global, ast.Nonlocal, ast.Raise, ast.Assert), "only calls are allowed"),
    ((ast.Return, ast.Pass, ast.Break, ast.Continue), "only calls are allowed"),
)

_VALUE_REASONS: tuple[tuple[type[ast.AST] | tuple[type[ast.AST], ...], str], ...] = (
    (ast.Call, "nested calls are not allowed; pass literal values"),
    (ast.JoinedStr, "f-strings are not allowed; write a plain string"),
    (ast.Lambda, "lambdas are not allowed"),
    ((ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp), "comprehensions are not allowed"),
    (ast.NamedExpr, "assignment expressions (:=) are not allowed"),
    (ast.Starred, "*-unpacking is not allowed"),
    (ast.Attribute, "attribute access is not allowed in arguments"),
    (ast.Subscript, "subscripts are not allowed in arguments"),
    ((ast.Await, ast.Yield, ast.YieldFrom), "await/yield are not allowed"),
    ((ast.IfExp, ast.BoolOp, ast.Compare), "expressions are not allowed; pass literal values"),
)


def _accept(stmt: ast.stmt, tools: Mapping[str, ToolSpec], receiver: str, source: str) -> ToolCall:
    for kinds, reason in _STATEMENT_REASONS:
        if isinstance(stmt, kinds):
            raise _Refused(reason)
    if not isinstance(stmt, ast.Expr):
        raise _Refused("only calls are allowed")
    node = stmt.value
    if isinstance(node, ast.Await):
        raise _Refused("await is not allowed; write the plain call")
    if not isinstance(node, ast.Call):
        raise _Refused(f"only calls are allowed, not a {type(node).__name__} expression")
    spec = _resolve(node.func, tools, receiver)
    kwargs: dict[str, Any] = {}
    for i, arg in enumerate(node.args):
        if isinstance(arg, ast.Starred):
            raise _Refused("*args are not allowed; name each argument")
        if i >= len(spec.params):
            raise _Refused(
                f"{spec.name} takes at most {len(spec.params)} positional argument(s) "
                f"({', '.join(spec.params) or 'none'}), got {len(node.args)}"
            )
        kwargs[spec.params[i]] = _literal(arg, spec.params[i])
    for kw in node.keywords:
        if kw.arg is None:
            raise _Refused("**kwargs are not allowed; name each argument")
        if kw.arg not in spec.params:
            accepted = ", ".join(spec.params) or "no arguments"
            raise _Refused(f"{spec.name} has no argument {kw.arg!r}; it accepts {accepted}")
        if kw.arg in kwargs:
            raise _Refused(f"argument {kw.arg!r} of {spec.name} is given twice")
        kwargs[kw.arg] = _literal(kw.value, kw.arg)
    missing = [p for p in spec.required if p not in kwargs]
    if missing:
        raise _Refused(f"{spec.name} is missing required argument(s): {', '.join(missing)}")
    return ToolCall(name=spec.name, kwargs=kwargs, line=stmt.lineno, source=source)


def _resolve(func: ast.expr, tools: Mapping[str, ToolSpec], receiver: str) -> ToolSpec:
    allowed = ", ".join(tools) or "none"
    if isinstance(func, ast.Name):
        if func.id in tools:
            return tools[func.id]
        raise _Refused(f"unknown function {func.id!r}; allowed: {allowed}")
    if isinstance(func, ast.Attribute):
        owner = func.value
        if isinstance(owner, ast.Name) and owner.id == receiver:
            if func.attr in tools:
                return tools[func.attr]
            raise _Refused(f"{receiver} has no function {func.attr!r}; allowed: {allowed}")
        if isinstance(owner, ast.Name):
            raise _Refused(f"unknown receiver {owner.id!r}; call {receiver}.NAME(...)")
        raise _Refused(f"attribute chains are not allowed; call {receiver}.NAME(...) directly")
    raise _Refused(f"the function must be named directly, as {receiver}.NAME(...)")


def _literal(node: ast.expr, name: str) -> Any:
    """The value of one argument, refused with a specific reason unless it is a literal."""
    for sub in ast.walk(node):
        for kinds, reason in _VALUE_REASONS:
            if isinstance(sub, kinds):
                raise _Refused(f"argument {name!r}: {reason}")
        if isinstance(sub, ast.Name):
            raise _Refused(
                f"argument {name!r}: names/variables are not allowed ({sub.id!r}); "
                "pass a literal value"
            )
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        raise _Refused(
            f"argument {name!r}: only literal values are allowed (strings, numbers, "
            "lists, dicts, True/False/None), not operators"
        ) from None
    if any(
        isinstance(sub, ast.Constant)
        and isinstance(sub.value, str)
        and has_lone_surrogate(sub.value)
        for sub in ast.walk(node)
    ):  # e.g. "\ud83d", half of an emoji: it cannot be stored (UTF-8), so ask again
        raise _Refused(
            f"argument {name!r}: a string holds a lone surrogate escape (such as \\ud83d, "
            "half of an emoji); write the character itself or leave it out"
        )
    return value
