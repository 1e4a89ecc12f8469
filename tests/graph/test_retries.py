"""Parsers, retries with feedback, and typed final failures."""

from __future__ import annotations

import json
from typing import Any

import pytest
from graph_helpers import per_node, tagged

from lorekit.graph import (
    AfterQueryError,
    Graph,
    NodeContext,
    NodeFailedError,
    NodeFailure,
    choice_parser,
    json_parser,
    regex_parser,
)
from lorekit.graph.parsers import validate_schema
from lorekit.llm import LLMServerError, ScriptedLLM

SCHEMA = {
    "type": "object",
    "required": ["steps"],
    "properties": {"steps": {"type": "array", "minItems": 1, "items": {"type": "string"}}},
}


def test_json_parser() -> None:
    parse = json_parser(SCHEMA)
    assert parse('{"steps": ["a"]}') == {"steps": ["a"]}
    assert parse('Sure:\n```json\n{"steps": ["a", "b"]}\n```') == {"steps": ["a", "b"]}
    assert parse('Here it is: {"steps": ["x"]} hope it helps') == {"steps": ["x"]}
    with pytest.raises(AfterQueryError, match="not valid JSON"):
        parse("steps: a, b")
    with pytest.raises(AfterQueryError, match=r"\$\.steps should have at least 1"):
        parse('{"steps": []}')
    with pytest.raises(AfterQueryError, match=r"\$\.steps\[1\] should be string"):
        parse('{"steps": ["a", 3]}')
    with pytest.raises(AfterQueryError, match="lacks the required field 'steps'"):
        parse("{}")


def test_schema_bools_are_not_numbers() -> None:
    assert validate_schema(True, {"type": "integer"}) != []
    assert validate_schema(3, {"type": "number"}) == []
    assert validate_schema({"a": 1}, {"type": "object", "additionalProperties": False}) != []


def test_choice_parser() -> None:
    parse = choice_parser(["yes", "no"])
    assert parse("Yes") == "yes"
    assert parse("no.") == "no"
    assert parse("Answer: YES") == "yes"
    assert parse("yes, because the plan is stale") == "yes"
    with pytest.raises(AfterQueryError, match="exactly one of: yes, no"):
        parse("maybe")


def test_regex_parser() -> None:
    assert regex_parser(r"^Action:\s*(?P<cmd>.+)$")("Thought: hm\nAction: get 1 log") == {
        "cmd": "get 1 log"
    }
    assert regex_parser(r"Fact:\s*(.+)")("Fact: logs float ") == "logs float"
    assert regex_parser(r"\d+")("there are 42") == "42"
    with pytest.raises(AfterQueryError, match="format"):
        regex_parser(r"Action: (.+)")("I would go north")


@pytest.mark.parametrize("sequential", [False, True])
async def test_retry_with_feedback_then_success(sequential: bool) -> None:
    llm = per_node({"p": ["not json at all", '{"steps": []}', '{"steps": ["go"]}']})
    g = Graph(llm)
    g.add_node("p", tagged("p", "Plan?"), output="json", schema=SCHEMA, max_retries=2)
    out = await g.evaluate(sequential=sequential)
    assert out["p"] == {"steps": ["go"]}
    third = llm.calls[2].messages
    # the conversation carries the rejected answers and the feedback for each
    assert [m.role for m in third] == ["user", "assistant", "user", "assistant", "user"]
    assert "not valid JSON" in third[2].content and "at least 1 items" in third[4].content
    assert g.last_report is not None
    trace = g.last_report.trace("p")
    assert trace.retries == 2 and trace.status == "ok"
    assert [a.rejected is None for a in trace.attempts] == [False, False, True]


async def test_final_failure_is_typed_and_traced() -> None:
    llm = per_node({"g": "perhaps", "after": "x", "other": "fine"})
    g = Graph(llm, max_retries=1)
    g.add_node("g", tagged("g"), output="choice", choices=("yes", "no"))
    g.add_node("after", tagged("after"), deps=["g"])
    g.add_node("other", tagged("other"))
    with pytest.raises(NodeFailedError) as err:
        await g.evaluate()
    exc = err.value
    assert [f.key for f in exc.failures] == ["g", "after"]
    assert exc.failures[0].kind == "after_query" and exc.failures[0].attempts == 2
    assert exc.failures[1].kind == "upstream"
    assert exc.results["other"] == "fine"  # independent work still finished
    assert exc.report.trace("g").status == "failed"
    assert "exactly one of" in (exc.report.trace("g").error or "")
    assert exc.report.trace("after").status == "blocked"
    assert sum("[node after]" in c.last for c in llm.calls) == 0
    # without raising, failures are NodeFailure values, never placeholder strings
    out = await g.evaluate(raise_on_failure=False)
    assert isinstance(out["g"], NodeFailure) and not out["g"].ok
    assert json.dumps(out["g"].to_dict())


async def test_model_error_is_a_failure_without_extra_retries() -> None:
    llm = ScriptedLLM([LLMServerError("boom", model="m")])
    g = Graph(llm)
    g.add_node("a", "A?")
    out = await g.evaluate(raise_on_failure=False)
    assert isinstance(out["a"], NodeFailure) and out["a"].kind == "model"
    assert "boom" in out["a"].error and len(llm.calls) == 1


@pytest.mark.parametrize("sequential", [False, True])
async def test_after_query_error_retries_with_its_message(sequential: bool) -> None:
    seen: list[Any] = []

    def hook(ctx: NodeContext, out: str) -> str:
        seen.append((ctx.attempt, out))
        if out.endswith("?"):
            raise AfterQueryError("State a fact, not a question.")
        ctx.db.setdefault("facts", []).append(out)
        return out.upper()

    llm = per_node({"f": ["Fact: logs float?", "Fact: logs float"], "u": "ok"})
    g = Graph(llm)
    g.add_node(
        "f",
        tagged("f"),
        output="regex",
        pattern=r"Fact: (.+)",
        after_query=hook,
        hook_writes=["facts"],
    )
    g.add_node("u", tagged("u", "{@f}"), deps=["f"])
    db: dict[str, Any] = {}
    out = await g.evaluate(db, sequential=sequential)
    assert out["f"] == "LOGS FLOAT" and db == {"facts": ["logs float"]}
    assert seen == [(0, "logs float?"), (1, "logs float")]
    assert "State a fact, not a question." in llm.calls[1].last
    assert "LOGS FLOAT" in llm.calls[2].last


async def test_async_hook_and_zero_retries() -> None:
    async def hook(ctx: NodeContext, out: str) -> str:
        raise AfterQueryError("never good")

    llm = ScriptedLLM(default="x")
    g = Graph(llm)
    g.add_node("a", "A", after_query=hook, max_retries=0)
    with pytest.raises(NodeFailedError, match="after 1 attempts; last problem: never good"):
        await g.evaluate()
    assert len(llm.calls) == 1
