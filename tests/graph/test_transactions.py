"""An after-query attempt is a transaction: a rejected attempt (or a hook that
raises) leaves the graph and the database as they were before it; a hook,
parser or compose that raises becomes a typed node failure naming all three."""

from __future__ import annotations

from typing import Any

import pytest
from graph_helpers import per_node, tagged

from lorekit.graph import AfterQueryError, Graph, Node, NodeContext, NodeFailedError, NodeFailure


def chain(llm: Any, hook: Any, **fields: Any) -> Graph:
    """a -> b -> d, a -> c -> d; ``hook`` is a's after-query."""
    g = Graph(llm)
    g.add_node("a", tagged("a"), after_query=hook, **fields)
    g.add_node("b", tagged("b"), deps=["a"])
    g.add_node("c", tagged("c"), deps=["a"])
    g.add_node("d", tagged("d"), deps=["b", "c"])
    return g


ANSWERS: dict[str, str | list[str]] = {k: f"{k}!" for k in "abcdtx"}


@pytest.mark.parametrize("sequential", [False, True])
async def test_temporary_node_of_a_rejected_attempt_is_undone(sequential: bool) -> None:
    attempts: list[int] = []

    def hook(ctx: NodeContext, out: str) -> str:
        attempts.append(ctx.attempt)
        ctx.add_node(Node("t", tagged("t"), deps=("a",)), dependents=["d"])
        if ctx.attempt == 0:
            raise AfterQueryError("try again")
        return out

    g = chain(per_node(ANSWERS), hook)
    out = await g.evaluate({}, sequential=sequential)  # no "duplicate node key 't'"
    assert attempts == [0, 1] and out["t"] == "t!"
    assert g.last_report is not None and g.last_report.order.count("t") == 1


@pytest.mark.parametrize("sequential", [False, True])
async def test_skip_and_edge_of_a_rejected_attempt_are_undone(sequential: bool) -> None:
    on = {"edit": False}

    def hook(ctx: NodeContext, out: str) -> str:
        if on["edit"] and ctx.attempt == 0:
            ctx.skip(["b"])
            ctx.remove_edge("c", "d")
            raise AfterQueryError("no")
        return out

    llm = per_node({**ANSWERS, "b": ["b1", "b2"]})
    g = chain(llm, hook)
    await g.evaluate({}, sequential=sequential)  # b now has a result a skip could reuse
    on["edit"] = True
    out = await g.evaluate({}, sequential=sequential)
    assert out["b"] == "b2"  # asked again, not skipped
    assert g.last_report is not None and g.last_report.trace("b").status == "ok"
    d_prompt = [c for c in llm.calls if c.last.endswith("[node d]")][-1].last
    assert "(c)" in d_prompt  # the removed edge came back with the rejection


@pytest.mark.parametrize("sequential", [False, True])
async def test_database_writes_of_a_rejected_attempt_are_dropped(sequential: bool) -> None:
    def hook(ctx: NodeContext, out: str) -> str:
        ctx.db["notes"] = [*ctx.db.get("notes", []), f"attempt {ctx.attempt}"]
        ctx.db["log"].append(ctx.attempt)  # a private copy: kept only if the hook returns
        if ctx.attempt == 0:
            raise AfterQueryError("again")
        return out

    g = chain(per_node(ANSWERS), hook, hook_writes=("notes", "log"))
    db: dict[str, Any] = {"log": []}
    await g.evaluate(db, sequential=sequential)
    assert db == {"notes": ["attempt 1"], "log": [1]}


async def test_final_rejection_leaves_no_trace_of_its_edits() -> None:
    def hook(ctx: NodeContext, out: str) -> str:
        ctx.db["notes"] = "x"
        ctx.add_node(Node("t", tagged("t"), deps=("a",)), dependents=["d"])
        raise AfterQueryError("never")

    g = chain(per_node(ANSWERS), hook, hook_writes=("notes",), max_retries=1)
    db: dict[str, Any] = {}
    out = await g.evaluate(db, raise_on_failure=False)
    assert db == {} and isinstance(out["a"], NodeFailure)


@pytest.mark.parametrize("sequential", [False, True])
async def test_hook_exception_is_a_typed_failure_naming_node_hook_and_error(
    sequential: bool,
) -> None:
    def broken_hook(ctx: NodeContext, out: str) -> str:
        ctx.db["notes"] = "half done"
        ctx.skip(["b"])
        raise ValueError("bad index 7")

    llm = per_node(ANSWERS)
    g = Graph(llm)
    g.add_node("a", tagged("a"), after_query=broken_hook, hook_writes=("notes",))
    g.add_node("b", tagged("b"), deps=["a"])
    g.add_node("x", tagged("x"))
    db: dict[str, Any] = {}
    with pytest.raises(NodeFailedError) as err:
        await g.evaluate(db, sequential=sequential)
    failure = err.value.failures[0]
    assert failure.key == "a" and failure.kind == "hook" and failure.attempts == 1
    assert "broken_hook" in failure.error and "ValueError: bad index 7" in failure.error
    assert "after-query hook" in failure.error
    assert str(err.value).startswith("node 'a' failed: after-query hook")
    assert err.value.failures[1].kind == "upstream"  # b depends on a
    assert err.value.results["x"] == "x!" and db == {}  # the rest ran; no half write


async def test_parser_and_compose_exceptions_are_typed_failures() -> None:
    def parser(text: str) -> str:
        raise KeyError("missing")

    def compose(inp: Any) -> str:
        raise RuntimeError("compose broke")

    llm = per_node({"p": "p!", "q": "q!"})
    g = Graph(llm)
    g.add_node("p", tagged("p"), parser=parser)
    g.add_node("q", tagged("q"), compose=compose)
    out = await g.evaluate(raise_on_failure=False)
    p, q = out["p"], out["q"]
    assert isinstance(p, NodeFailure) and p.kind == "hook"
    assert "parser" in p.error and "KeyError" in p.error
    assert isinstance(q, NodeFailure) and q.kind == "hook"
    assert "compose" in q.error and "RuntimeError: compose broke" in q.error
    assert not any("[node q]" in c.last for c in llm.calls)  # nothing was sent for q
