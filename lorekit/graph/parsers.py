"""Answer parsers: text in, a value out, or an :class:`AfterQueryError` that says
what to fix. Their messages are written for the model, which reads them on the
retry, so they state what was expected and what came back.

``validate_schema`` (:mod:`lorekit.graph.schema`, re-exported here) checks the
subset of JSON Schema that node outputs use (type, properties, required,
items, enum, minItems, maxItems, additionalProperties): enough for agents'
structured answers, with no dependency on a schema library.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from lorekit import jsonscan
from lorekit.graph.errors import AfterQueryError, GraphError
from lorekit.graph.node import Node, Parser
from lorekit.graph.schema import check_schema as check_schema
from lorekit.graph.schema import validate_schema as validate_schema

_FENCE = re.compile(r"```(?:json)?+(.*?)```", re.DOTALL | re.IGNORECASE)  # linear


def text_parser(answer: str) -> str:
    """The answer, stripped; an empty answer is refused."""
    text = answer.strip()
    if not text:
        raise AfterQueryError("The answer was empty.")
    return text


def json_parser(schema: Mapping[str, Any] | None = None, *, take: str = "whole") -> Parser:
    """Parse JSON (a fenced block or the outermost braces are accepted, since models
    wrap JSON in prose) and validate it against ``schema``.

    ``take="last"`` is for answers that reason in steps and hold several JSON
    values (drafts, then the answer): the last JSON object or array wins, as in
    AgentKit's JSON after-query."""
    if schema is not None:
        check_schema(schema)
    if take not in ("whole", "last"):
        raise GraphError(f"json_parser: take must be 'whole' or 'last', got {take!r}")

    def parse(answer: str) -> Any:
        text = answer.strip()
        if take == "last":
            value = last_json(text)
        else:
            fenced = _FENCE.search(text)
            if fenced:
                text = fenced.group(1).strip()
            try:
                value = jsonscan.loads(text)
            except json.JSONDecodeError:
                value = _outermost_json(text)
        if schema is not None:
            problems = validate_schema(value, schema)
            if problems:
                raise AfterQueryError(
                    "The JSON does not match the expected shape: " + "; ".join(problems[:5])
                )
        return value

    return parse


def last_json(text: str) -> Any:
    """The last top-level JSON object or array in ``text`` (prose between is ignored).

    One linear scan (:func:`lorekit.jsonscan.values`): decoding from every
    ``{`` took seconds on an answer of many braces."""
    try:
        found = [value for _, _, value in jsonscan.values(text)]
    except json.JSONDecodeError as exc:
        raise AfterQueryError(f"The answer's JSON cannot be read: {exc.msg}.") from None
    if not found:
        raise AfterQueryError(
            "The answer holds no valid JSON object. End it with the answer as one JSON value."
        )
    return found[-1]


def _outermost_json(text: str) -> Any:
    for opener, closer in (("{", "}"), ("[", "]")):
        start, end = text.find(opener), text.rfind(closer)
        if 0 <= start < end:
            try:
                return jsonscan.loads(text[start : end + 1])
            except json.JSONDecodeError:
                continue
    raise AfterQueryError("The answer is not valid JSON. Reply with one JSON value only.")


def choice_parser(choices: Sequence[str]) -> Parser:
    """Accept one of ``choices`` (case-insensitive; trailing punctuation and a
    one-word preamble such as 'Answer:' are tolerated). Returns the choice as declared."""
    if not choices:
        raise GraphError("a choice parser needs at least one choice")
    table = {_norm(c): c for c in choices}

    def parse(answer: str) -> str:
        text = answer.strip()
        candidates = [text]
        head = text.splitlines()[0] if text else ""
        if ":" in head:  # "Answer: yes"
            candidates.append(text.split(":", 1)[1])
        for candidate in candidates:
            norm = _norm(candidate)
            if norm in table:
                return table[norm]
            words = norm.split()
            if words and _norm(words[0]) in table:  # "yes, because ..."
                return table[_norm(words[0])]
        raise AfterQueryError(
            f"Answer with exactly one of: {', '.join(choices)}. Got: {text[:80]!r}."
        )

    return parse


def _norm(text: str) -> str:
    return text.strip().strip(" .,;!?\"'`*").lower()


def regex_parser(pattern: str) -> Parser:
    """Search the answer with ``pattern``: named groups give a dict, one group gives
    its text, no group gives the whole match."""
    rx = re.compile(pattern, re.MULTILINE)

    def parse(answer: str) -> Any:
        m = rx.search(answer)
        if m is None:
            raise AfterQueryError(f"The answer must match the format {pattern!r}.")
        named = m.groupdict()
        if named:
            return {k: (v.strip() if isinstance(v, str) else v) for k, v in named.items()}
        if rx.groups >= 1:
            return (m.group(1) or "").strip()
        return m.group(0).strip()

    return parse


def parser_for(node: Node) -> Parser:
    """The parser a node uses: its own, or the one its ``output`` kind implies."""
    if node.parser is not None:
        return node.parser
    if node.output == "json":
        return json_parser(node.schema, take=node.json_take)
    if node.output == "choice":
        return choice_parser(node.choices)
    if node.output == "regex":
        assert node.pattern is not None  # checked by Node
        return regex_parser(node.pattern)
    return text_parser
