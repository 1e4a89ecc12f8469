"""Hooks and composes see exactly the database keys their node declares.

The review's three silent races (a hook writing a key an unordered sibling
reads, a custom compose reading a declared write, a compose changing a nested
value) now raise, naming the node and the key, in both modes.
"""

from __future__ import annotations

import asyncio
import copy
import json
from typing import Any

import pytest
from graph_helpers import per_node, tagged

from lorekit.graph import ComposeInput, Graph, GraphError, NodeContext, Write
from lorekit.graph.access import DbView, freeze
from lorekit.graph.errors import AccessError, RaceError
from lorekit.llm import Message

ANSWERS: dict[str, str | list[str]] = {k: f"{k}!" for k in "wrs"}


@pytest.mark.parametrize("sequential", [False, True])
async def test_hook_writing_an_undeclared_key_raises(sequential: bool) -> None:
    def hook(ctx: NodeContext, out: str) -> str:
        ctx.db["plan"] = "NEW"  # r, an unordered sibling, reads plan
        return out

    g = Graph(per_node(ANSWERS))
    g.add_node("w", tagged("w"), after_query=hook)
    g.add_node("r", tagged("r", "Plan: {plan}"))
    db = {"plan": "OLD"}
    with pytest.raises(AccessError, match=r"hook writes database key 'plan'.*node 'w'"):
        await g.evaluate(db, sequential=sequential)
    assert db == {"plan": "OLD"}


async def test_declared_hook_write_that_races_is_refused_before_the_pass() -> None:
    def hook(ctx: NodeContext, out: str) -> str:
        ctx.db["plan"] = "NEW"
        return out

    llm = per_node(ANSWERS)
    g = Graph(llm)
    g.add_node("w", tagged("w"), after_query=hook, hook_writes=["plan"])
    g.add_node("r", tagged("r", "Plan: {plan}"))
    with pytest.raises(RaceError, match="race on database key 'plan'") as err:
        await g.evaluate({"plan": "OLD"})
    assert (err.value.reader, err.value.writer) == ("r", "w") and not llm.calls
    g.add_edge("w", "r")  # ordered: r reads what w wrote, in both modes
    for sequential in (False, True):
        db = {"plan": "OLD"}
        await g.evaluate(db, sequential=sequential)
        assert db == {"plan": "NEW"}
        assert "Plan: NEW" in llm.calls[-1].last


@pytest.mark.parametrize("sequential", [False, True])
async def test_compose_reading_an_undeclared_key_raises(sequential: bool) -> None:
    def compose(inp: ComposeInput) -> list[Message]:
        return [Message("user", f"Plan: {inp.db['plan']} [node r]")]

    g = Graph(per_node(ANSWERS))
    g.add_node("w", tagged("w"), writes=(Write("plan"),))
    g.add_node("r", "R", compose=compose)
    with pytest.raises(AccessError, match=r"compose reads database key 'plan'.*'r'"):
        await g.evaluate({"plan": "OLD"}, sequential=sequential)
    # declaring the read turns the silent race into the race check's error
    g2 = Graph(per_node(ANSWERS))
    g2.add_node("w", tagged("w"), writes=(Write("plan"),))
    g2.add_node("r", "R", compose=compose, hook_reads=["plan"])
    with pytest.raises(RaceError, match=r"'r' reads it and node 'w' writes it"):
        await g2.evaluate({"plan": "OLD"}, sequential=sequential)


@pytest.mark.parametrize("sequential", [False, True])
async def test_compose_changing_a_nested_value_raises(sequential: bool) -> None:
    def compose(inp: ComposeInput) -> list[Message]:
        inp.db["state"]["inventory"].append("stolen log")
        return [Message("user", "[node r]")]

    g = Graph(per_node(ANSWERS))
    g.add_node("r", "R {state.hp}", compose=compose)
    db: dict[str, Any] = {"state": {"hp": 9, "inventory": ["axe"]}}
    with pytest.raises(AccessError, match=r"'state' was handed out read-only"):
        await g.evaluate(db, sequential=sequential)
    assert db == {"state": {"hp": 9, "inventory": ["axe"]}}


async def test_hook_reads_only_what_it_declares() -> None:
    seen: dict[str, Any] = {}

    def hook(ctx: NodeContext, out: str) -> str:
        seen["goal"] = ctx.db["goal"]  # a prompt read
        seen["kb"] = ctx.db.get("kb")  # a declared hook read
        seen["mem"] = ctx.db.get("mem")  # a key it writes
        with pytest.raises(AccessError, match="reads database key 'secret'"):
            ctx.db.get("secret")
        with pytest.raises(AccessError, match="writes database key 'kb'"):
            ctx.db["kb"] = []
        ctx.db["mem"] = ["m"]
        return out

    g = Graph(per_node(ANSWERS))
    g.add_node("s", tagged("s", "{goal}"), after_query=hook, hook_reads=["kb"], hook_writes=["mem"])
    db: dict[str, Any] = {"goal": "g", "kb": ["fact"], "secret": 1}
    await g.evaluate(db)
    assert seen == {"goal": "g", "kb": ["fact"], "mem": None}
    assert db["mem"] == ["m"]


def test_frozen_copies_behave_like_values_but_refuse_changes() -> None:
    original = {"a": [1, {"b": [2]}], "c": {"d": 1}}
    frozen = freeze(original, "node 'x'", "k")
    assert frozen == original and json.loads(json.dumps(frozen)) == original
    assert frozen["a"] + [3] == [1, {"b": [2]}, 3]  # adding makes a new, plain list
    for change in (
        lambda: frozen["a"].append(1),
        lambda: frozen["a"][1]["b"].extend([1]),
        lambda: frozen["c"].update(e=2),
        lambda: frozen.__setitem__("z", 1),
    ):
        with pytest.raises(AccessError, match="read-only"):
            change()
    thawed = copy.deepcopy(frozen)
    thawed["a"].append(5)  # a deep copy is plain and writable
    assert original == {"a": [1, {"b": [2]}], "c": {"d": 1}}


def test_view_keeps_writes_until_commit() -> None:
    db: dict[str, Any] = {"log": [1], "x": 0}
    view = DbView(db, owner="hook", node="n", reads=["x"], writes=["log", "new"])
    view["log"].append(2)
    view["new"] = "v"
    assert db == {"log": [1], "x": 0} and view["new"] == "v"
    assert sorted(view) == ["log", "new", "x"]
    view.commit(db)
    assert db == {"log": [1, 2], "x": 0, "new": "v"}
    view["new"] = "w"
    view.discard()
    assert db["new"] == "v"


def test_undeclared_access_error_is_a_graph_error() -> None:
    assert issubclass(AccessError, GraphError)
    view = DbView({"k": 1}, owner="hook", node="n", reads=[])
    with pytest.raises(AccessError) as err:
        view["k"]
    assert err.value.node == "n"


async def test_concurrent_equals_sequential_with_declared_hook_access() -> None:
    def make(key: str) -> Any:
        def hook(ctx: NodeContext, out: str) -> str:
            ctx.db["trail"] = [*ctx.db.get("trail", []), key]
            return out

        return hook

    async def run(sequential: bool) -> Any:
        g = Graph(per_node({k: f"{k}!" for k in "abcd"}, latency=0.001))
        for k, deps in (("a", []), ("b", ["a"]), ("c", ["a"]), ("d", ["b", "c"])):
            g.add_node(k, tagged(k), deps=deps, after_query=make(k), hook_writes=["trail"])
        db: dict[str, Any] = {}
        out = await g.evaluate(db, sequential=sequential)
        return out, db

    seq, conc = await run(True), await run(False)
    assert seq == conc and seq[1]["trail"] == ["a", "b", "c", "d"]
    await asyncio.sleep(0)


async def test_results_and_dependency_values_are_read_only_for_python_code() -> None:
    def hook(ctx: NodeContext, out: str) -> str:
        ctx.results["p"]["steps"].append("sneaky")
        return out

    def compose(inp: ComposeInput) -> list[Message]:
        inp.deps[0].result["steps"].clear()
        return [Message("user", "[node s]")]

    for kwargs in ({"after_query": hook}, {"compose": compose}):
        g = Graph(per_node({"p": '{"steps": ["a"]}', "s": "s!"}))
        g.add_node("p", tagged("p"), output="json")
        g.add_node("s", tagged("s"), deps=["p"], **kwargs)
        with pytest.raises(AccessError, match="result of node 'p' was handed out read-only"):
            await g.evaluate({})
