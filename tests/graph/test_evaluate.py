"""Evaluation: topological order, concurrency, composition of prompts."""

from __future__ import annotations

import asyncio

import pytest
from _overlap import Overlap
from graph_helpers import per_node, tagged

from lorekit.graph import ComposeInput, Graph, GraphError, MissingValueError, Node
from lorekit.llm import Message, ScriptedLLM


def diamond(llm: ScriptedLLM) -> Graph:
    g = Graph(llm)
    g.add_node("a", tagged("a", "Start."))
    g.add_node("b", tagged("b", "Left."), deps=["a"])
    g.add_node("c", tagged("c", "Right."), deps=["a"])
    g.add_node("d", tagged("d", "Join."), deps=["c", "b"])
    return g


@pytest.mark.parametrize("sequential", [False, True])
async def test_topological_order_and_results(sequential: bool) -> None:
    llm = per_node({k: f"answer {k}" for k in "abcd"})
    g = diamond(llm)
    out = await g.evaluate({}, sequential=sequential)
    assert out == {k: f"answer {k}" for k in "abcd"}
    assert list(out) == ["a", "b", "c", "d"]
    assert g.last_report is not None and g.last_report.order == ["a", "b", "c", "d"]
    # every node is asked after its dependencies answered
    asked = [c.last.rsplit("[node ", 1)[1].rstrip("]") for c in llm.calls]
    assert asked.index("a") < asked.index("b") < asked.index("d")
    assert asked.index("c") < asked.index("d")


async def test_ready_nodes_run_concurrently() -> None:
    # 8 independent nodes: all 8 calls in flight at once; one at a time when sequential.
    def eight_nodes(overlap: Overlap) -> Graph:
        g = Graph(ScriptedLLM(default="ok", latency=0.05, sleep=overlap.sleep))
        for i in range(8):
            g.add_node(f"n{i}", "Go.")
        return g

    together = Overlap(expect=8)
    await eight_nodes(together).evaluate({})
    assert together.peak == 8 and together.calls == 8
    one_by_one = Overlap(expect=2, patience_s=0.05)
    await eight_nodes(one_by_one).evaluate({}, sequential=True)
    assert one_by_one.peak == 1 and one_by_one.calls == 8


async def test_default_compose_layout() -> None:
    llm = per_node({"a": "A1", "b": '{"n": 2}', "c": "C1", "d": "D1"})
    g = Graph(llm, system="You play {game}.")
    g.add_node("a", tagged("a", "First question about {goal}?"))
    g.add_node("b", tagged("b", "Second?"), output="json")
    g.add_node("c", tagged("c", "Third?"))
    g.add_node(
        "d",
        tagged("d", 'Use {@b.n} and {inv.wood}; JSON like {"k": 1} and {{literal}}.'),
        deps=["a", "b", "c"],
        dep_modes={"b": "short", "c": "hidden"},
        context=["goal"],
    )
    await g.evaluate({"goal": "a pickaxe", "game": "TextCraft", "inv": {"wood": 3}})
    msgs = next(c for c in llm.calls if "[node d]" in c.last).messages
    assert msgs[0] == Message("system", "You play TextCraft.")
    user = msgs[1].content
    assert "- goal: a pickaxe" in user
    assert "Question (a):\nFirst question about a pickaxe? [node a]\nAnswer (a):\nA1" in user
    assert 'b: {"n": 2}' in user and "Question (b)" not in user  # shorthand: result only
    assert "C1" not in user and "(c)" not in user  # hidden: ordering only
    assert user.endswith('Use 2 and 3; JSON like {"k": 1} and {literal}. [node d]')
    # context, then dependencies, then the prompt
    assert user.index("goal: a pickaxe") < user.index("Question (a)") < user.index("Use 2")


async def test_shorthand_node_and_dep_order_in_prompt() -> None:
    llm = per_node({"a": "A", "b": "B", "c": "C"})
    g = Graph(llm)
    g.add_node("a", tagged("a"))
    g.add_node("b", tagged("b"))
    g.add_node("c", tagged("c"), deps=["b", "a"], shorthand=True)
    await g.evaluate()
    user = llm.calls[-1].last
    assert user.index("b: B") < user.index("a: A")  # prompt order is the deps order


@pytest.mark.parametrize(
    ("db", "key", "why"),
    [({}, "goal", "is not in the database"), ({"goal": None}, "goal", "is None")],
)
async def test_missing_value_names_node_and_key(db: dict[str, object], key: str, why: str) -> None:
    llm = ScriptedLLM(default="x")
    g = Graph(llm)
    g.add_node("plan", "Goal: {goal}")
    with pytest.raises(MissingValueError) as err:
        await g.evaluate(db)
    assert err.value.node == "plan" and err.value.key == key
    assert "node 'plan'" in str(err.value) and why in str(err.value)
    assert llm.calls == []  # nothing was sent with a hole in it
    assert "None" not in str(err.value).replace("is None", "")


async def test_missing_nested_value() -> None:
    g = Graph(ScriptedLLM(default="x"))
    g.add_node("n", "Wood: {inv.wood}")
    with pytest.raises(MissingValueError, match=r"'inv\.wood'"):
        await g.evaluate({"inv": {"stone": 1}})


async def test_custom_compose() -> None:
    def compose(inp: ComposeInput) -> list[Message]:
        deps = ", ".join(f"{d.key}={d.answer}" for d in inp.deps)
        return [Message("user", inp.fill("Custom for {who}: " + deps))]

    llm = ScriptedLLM(default="ok")
    g = Graph(llm)
    g.add_node("a", "A?")
    g.add_node("b", "B?", deps=["a"], compose=compose, hook_reads=["who"])
    await g.evaluate({"who": "me"})
    assert llm.calls[-1].messages == (Message("user", "Custom for me: a=ok"),)


async def test_roles_route_nodes_to_models() -> None:
    planner, actor = ScriptedLLM(default="plan"), ScriptedLLM(default="act")
    g = Graph({"planner": planner, "default": actor})
    g.add_node("p", "Plan?", role="planner")
    g.add_node("x", "Act?", deps=["p"])
    assert await g.evaluate() == {"p": "plan", "x": "act"}
    assert len(planner.calls) == len(actor.calls) == 1


async def test_evaluate_needs_models_and_refuses_reentry() -> None:
    g = Graph()
    g.add_node("a", "A?")
    with pytest.raises(GraphError, match="no models"):
        await g.evaluate()
    slow = ScriptedLLM(default="ok", latency=0.05)
    first = asyncio.create_task(g.evaluate(roles=slow))
    await asyncio.sleep(0.01)
    with pytest.raises(GraphError, match="already evaluating"):
        await g.evaluate(roles=slow)
    await first


def test_node_validation() -> None:
    with pytest.raises(GraphError, match="key"):
        Node("bad key", "p")
    with pytest.raises(GraphError, match="itself"):
        Node("a", "p", deps=("a",))
    with pytest.raises(GraphError, match="choices"):
        Node("a", "p", output="choice")
    with pytest.raises(GraphError, match="'@b', which is not a dependency"):
        Node("a", "use {@b}")
    with pytest.raises(GraphError, match="deps must be a sequence"):
        Node("a", "p", deps="b")  # type: ignore[arg-type]
