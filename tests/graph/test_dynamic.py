"""Dynamic edits during a pass, their revert, and every safeguard."""

from __future__ import annotations

from typing import Any

import pytest
from graph_helpers import per_node, tagged

from lorekit.graph import Graph, GraphError, Node, NodeContext, Write
from lorekit.llm import ScriptedLLM


def chain_graph(llm: Any, hook: Any) -> Graph:
    """a -> b -> d, a -> c -> d; ``hook`` is a's after-query."""
    g = Graph(llm)
    g.add_node("a", tagged("a"), after_query=hook)
    g.add_node("b", tagged("b"), deps=["a"])
    g.add_node("c", tagged("c"), deps=["a"])
    g.add_node("d", tagged("d"), deps=["b", "c"])
    return g


ANSWERS = {k: f"{k}!" for k in "abcdtx"}


@pytest.mark.parametrize("sequential", [False, True])
async def test_add_temporary_node_and_edge_then_revert(sequential: bool) -> None:
    def hook(ctx: NodeContext, out: str) -> str:
        ctx.add_node(Node("t", tagged("t"), deps=("a",)), dependents=["d"])
        return out

    llm = per_node(ANSWERS)
    g = chain_graph(llm, hook)
    before = g.layout()
    out = await g.evaluate({}, sequential=sequential)
    assert out["t"] == "t!"
    assert g.last_report is not None
    assert g.last_report.order == ["a", "b", "c", "t", "d"]
    assert g.last_report.trace("t").temporary
    d_prompt = next(c for c in llm.calls if c.last.endswith("[node d]")).last
    assert d_prompt.index("(b)") < d_prompt.index("(c)") < d_prompt.index("(t)")
    # reverted: same nodes, same deps in the same order
    assert g.layout() == before
    assert "t" not in g.nodes and g.deps("d") == ("b", "c")


@pytest.mark.parametrize("sequential", [False, True])
async def test_remove_edge_restores_prompt_order(sequential: bool) -> None:
    remove = {"on": True}

    def hook(ctx: NodeContext, out: str) -> str:
        if remove["on"]:
            ctx.remove_edge("b", "d")
        return out

    llm = per_node(ANSWERS)
    g = chain_graph(llm, hook)
    await g.evaluate({}, sequential=sequential)
    d_prompt = next(c for c in llm.calls if c.last.endswith("[node d]")).last
    assert "(b)" not in d_prompt and "(c)" in d_prompt
    assert g.deps("d") == ("b", "c")  # the original reorders them; we do not
    llm.calls.clear()
    remove["on"] = False
    await g.evaluate({}, sequential=sequential)
    d_prompt = next(c for c in llm.calls if c.last.endswith("[node d]")).last
    assert d_prompt.index("(b)") < d_prompt.index("(c)")


@pytest.mark.parametrize("sequential", [False, True])
async def test_skip_reuses_last_result(sequential: bool) -> None:
    skip = {"on": False}

    def hook(ctx: NodeContext, out: str) -> str:
        if skip["on"]:
            ctx.skip(["b"])
        return out

    llm = per_node({"a": "a!", "b": ["b1", "b2"], "c": "c!", "d": "d!"})
    g = chain_graph(llm, hook)
    assert (await g.evaluate({}, sequential=sequential))["b"] == "b1"
    skip["on"] = True
    out = await g.evaluate({}, sequential=sequential)
    assert out["b"] == "b1"  # reused, not re-asked
    assert sum(c.last.endswith("[node b]") for c in llm.calls) == 1
    assert g.last_report is not None and g.last_report.trace("b").status == "skipped"
    d_prompt = [c for c in llm.calls if c.last.endswith("[node d]")][-1].last
    assert "Question (b):\n[node b]\nAnswer (b):\nb1" in d_prompt
    skip["on"] = False
    assert (await g.evaluate({}, sequential=sequential))["b"] == "b2"  # skip was reverted


async def test_temporary_edits_outside_a_pass_apply_to_the_next_pass_only() -> None:
    llm = per_node(ANSWERS)
    g = chain_graph(llm, None)
    await g.evaluate()
    g.skip_temporary(["c"])
    g.add_temporary_node(Node("x", tagged("x")), dependents=["d"])
    assert g.deps("d") == ("b", "c", "x")
    out = await g.evaluate()
    assert out["x"] == "x!" and g.last_report is not None
    assert g.last_report.trace("c").status == "skipped"
    assert g.deps("d") == ("b", "c") and "x" not in g.nodes
    g.skip_temporary("c")
    g.discard_temporary()
    await g.evaluate()
    assert g.last_report.trace("c").status == "ok"


# -- safeguards ---------------------------------------------------------------


def test_duplicate_unknown_and_cycle_when_building() -> None:
    g = Graph(ScriptedLLM(default="x"))
    g.add_node("a", "A")
    g.add_node("b", "B", deps=["a"])
    with pytest.raises(GraphError, match="duplicate node key 'a'"):
        g.add_node("a", "again")
    with pytest.raises(GraphError, match="unknown node 'zz'"):
        g.add_node("c", "C", deps=["zz"])
    with pytest.raises(GraphError, match="cycle"):
        g.add_edge("b", "a")
    with pytest.raises(GraphError, match="already depends"):
        g.add_edge("a", "b")
    assert g.deps("a") == () and list(g.nodes) == ["a", "b"]  # nothing changed


async def run_with_hook(hook: Any, *, extra: bool = False) -> Graph:
    g = chain_graph(per_node(ANSWERS), hook)
    if extra:
        g.add_node("x", tagged("x"))  # independent of a
    await g.evaluate({})
    return g


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda ctx: ctx.skip(["a"]), "cannot edit 'a'|already evaluated"),
        (lambda ctx: ctx.add_edge("d", "b"), "cycle"),
        (lambda ctx: ctx.add_edge("nope", "d"), "unknown node 'nope'"),
        (lambda ctx: ctx.add_node(Node("b", "dup")), "duplicate node key 'b'"),
        (lambda ctx: ctx.add_node(Node("t", "T", deps=("zz",))), "unknown node 'zz'"),
        (lambda ctx: ctx.skip(["x"]), "cannot edit 'x'.*downstream"),
        (lambda ctx: ctx.remove_edge("a", "d"), "no edge 'a' -> 'd'"),
        (lambda ctx: ctx.graph.add_node("t", "T"), "refused during a pass"),
        (lambda ctx: ctx.graph.add_edge("b", "c"), "refused during a pass"),
        (lambda ctx: ctx.add_node(Node("t", "T", deps=("d",)), dependents=["b"]), "cycle"),
    ],
)
@pytest.mark.parametrize("sequential", [False, True])
async def test_safeguards_during_a_pass(edit: Any, message: str, sequential: bool) -> None:
    def hook(ctx: NodeContext, out: str) -> str:
        edit(ctx)
        return out

    g = chain_graph(per_node(ANSWERS), hook)
    g.add_node("x", tagged("x"))
    before = g.layout()
    with pytest.raises(GraphError, match=message):
        await g.evaluate({}, sequential=sequential)
    assert g.layout() == before and not g.in_pass


async def test_editing_an_evaluated_node_is_refused() -> None:
    def late(ctx: NodeContext, out: str) -> str:
        ctx.graph.skip_temporary(["a"])
        return out

    g = Graph(per_node(ANSWERS))
    g.add_node("a", tagged("a"))
    g.add_node("b", tagged("b"), deps=["a"], after_query=late)
    with pytest.raises(GraphError, match="'a': it was already evaluated in this pass"):
        await g.evaluate()


async def test_unreachable_skip_is_refused() -> None:
    def hook(ctx: NodeContext, out: str) -> str:
        ctx.skip(["b"])  # b never ran, and d needs it
        return out

    g = chain_graph(per_node(ANSWERS), hook)
    with pytest.raises(GraphError, match=r"'b' is skipped and has no earlier result.*'d'"):
        await g.evaluate()
    g2 = chain_graph(per_node(ANSWERS), None)
    with pytest.raises(GraphError, match="unreachable"):
        g2.skip_temporary(["c"])
    assert g2.deps("d") == ("b", "c")


async def test_edits_outside_after_query_are_refused_during_a_pass() -> None:
    g = Graph(ScriptedLLM(default="x"))

    def compose(inp: Any) -> str:
        g.skip_temporary(["b"])
        return "hi"

    g.add_node("a", "A", compose=compose)
    g.add_node("b", "B", deps=["a"])
    with pytest.raises(GraphError, match="only after-query hooks may edit"):
        await g.evaluate()


async def test_race_between_unordered_reader_and_writer() -> None:
    g = Graph(ScriptedLLM(default="x"))
    g.add_node("w", "W", writes=(Write("plan"),))
    g.add_node("r", "Plan: {plan}")
    with pytest.raises(GraphError, match=r"race on database key 'plan'.*'r'.*'w'"):
        await g.evaluate({"plan": "p0"})
    g.add_edge("w", "r")
    out = await g.evaluate({"plan": "p0"})
    assert out == {"w": "x", "r": "x"}


async def test_temporary_node_may_be_edited_by_its_creator() -> None:
    def hook(ctx: NodeContext, out: str) -> str:
        ctx.add_node(Node("t", tagged("t"), deps=("a",)))
        ctx.add_edge("b", "t")
        return out

    g = chain_graph(per_node(ANSWERS), hook)
    await g.evaluate()
    assert g.last_report is not None
    assert g.last_report.order.index("b") < g.last_report.order.index("t")


# -- `when`: a node declared in a spec that joins a pass only while a key holds something


WHEN_SPEC = """\
name: asks
database:
  questions: ""
nodes:
  ask:
    prompt: "Any questions? [node ask]"
    output: json
    writes: [{key: questions, value: output.q}]
  answers:
    when: questions
    hidden: [ask]
    prompt: "Answer these: {questions} [node answers]"
  act:
    deps: [answers]
    prompt: "Act now. [node act]"
"""


async def test_a_when_node_joins_only_while_its_key_holds_something() -> None:
    from lorekit.graph.spec import parse_spec

    spec = parse_spec(WHEN_SPEC)
    graph = spec.build()
    llm = per_node(
        {"ask": ['{"q": ""}', '{"q": "Where?"}', '{"q": " "}'], "answers": "North.", "act": "go"}
    )
    db = spec.initial_db()
    first = await graph.evaluate(db, roles=llm)
    # nothing asked: left out, and `act` is asked without it (no stale answer either)
    assert "answers" not in first and first["act"] == "go"
    trace = {t.key: t for t in graph.last_report.traces}
    assert trace["answers"].status == "skipped" and "left out" in (trace["answers"].error or "")
    second = await graph.evaluate(db, roles=llm)
    assert second["answers"] == "North."
    act_prompt = llm.calls[-1].messages[-1].content
    assert "North." in act_prompt
    third = await graph.evaluate(db, roles=llm)  # the questions are gone again
    assert "answers" not in third and "North." not in llm.calls[-1].messages[-1].content


def test_a_when_node_cannot_be_read_by_name() -> None:
    from lorekit.graph.spec import SpecError, parse_spec

    bad = WHEN_SPEC.replace('prompt: "Act now. [node act]"', 'prompt: "Act: {@answers} [node act]"')
    with pytest.raises(SpecError, match="a node with 'when'"):
        parse_spec(bad)
    with pytest.raises(SpecError, match="neither declared"):
        parse_spec(WHEN_SPEC.replace("when: questions", "when: nothing_here"))
