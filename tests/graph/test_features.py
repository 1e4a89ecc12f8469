"""AgentKit features: prepended edges, shortened dependency answers, the last JSON
object of an answer; and hook files reloaded when they change."""

from __future__ import annotations

from pathlib import Path

import pytest
from graph_helpers import per_node, tagged

from lorekit.graph import AfterQueryError, Graph, Node, NodeContext, json_parser
from lorekit.graph.shrink import cut
from lorekit.graph.spec import load_spec, parse_spec
from lorekit.llm import Message, ScriptedLLM


@pytest.mark.parametrize("sequential", [False, True])
async def test_prepended_temporary_edge_comes_first_in_the_prompt(sequential: bool) -> None:
    def hook(ctx: NodeContext, out: str) -> str:
        ctx.add_edge("c", "d", prepend=True)
        return out

    llm = per_node({k: f"{k}!" for k in "abcd"})
    g = Graph(llm)
    g.add_node("a", tagged("a"), after_query=hook)
    g.add_node("b", tagged("b"), deps=["a"])
    g.add_node("c", tagged("c"), deps=["a"])
    g.add_node("d", tagged("d"), deps=["b"])
    await g.evaluate({}, sequential=sequential)
    prompt = next(c for c in llm.calls if c.last.endswith("[node d]")).last
    assert prompt.index("(c)") < prompt.index("(b)")
    assert g.deps("d") == ("b",)  # reverted after the pass


async def test_temporary_node_can_be_prepended_to_its_dependents() -> None:
    def hook(ctx: NodeContext, out: str) -> str:
        ctx.add_node(Node("t", tagged("t"), deps=("a",)), dependents=["d"], prepend=True)
        return out

    llm = per_node({k: f"{k}!" for k in "abdt"})
    g = Graph(llm)
    g.add_node("a", tagged("a"), after_query=hook)
    g.add_node("b", tagged("b"), deps=["a"])
    g.add_node("d", tagged("d"), deps=["b"])
    await g.evaluate({})
    prompt = next(c for c in llm.calls if c.last.endswith("[node d]")).last
    assert prompt.index("(t)") < prompt.index("(b)")


def test_permanent_edge_can_be_prepended() -> None:
    g = Graph(ScriptedLLM(default="x"))
    for k in "abc":
        g.add_node(k, k.upper())
    g.add_edge("a", "c")
    g.add_edge("b", "c", prepend=True)
    assert g.deps("c") == ("b", "a")


def test_cut_policies() -> None:
    text = "".join(f"{i:04d}" for i in range(100))  # 400 characters
    end, start, both = (cut(text, 120, how) for how in ("keep_end", "keep_start", "keep_both"))
    for short in (end, start, both):
        assert len(short) <= 120 and "characters left out" in short
    assert end.endswith("0099") and not end.startswith("0000")
    assert start.startswith("0000") and "0099" not in start
    assert both.startswith("0000") and both.endswith("0099")
    assert cut("short", 120, "keep_end") == "short"


@pytest.mark.parametrize("sequential", [False, True])
async def test_long_dependency_answers_are_shortened_in_the_prompt(sequential: bool) -> None:
    history = "step " * 200 + "LATEST"
    llm = per_node({"h": history, "u": "ok", "full": "ok"})
    g = Graph(llm)
    g.add_node("h", tagged("h"))
    g.add_node("u", tagged("u", "Last: {@h}"), deps=["h"], max_dep_chars=150)
    g.add_node("full", tagged("full"), deps=["h"])
    out = await g.evaluate({}, sequential=sequential)
    prompt = next(c for c in llm.calls if c.last.endswith("[node u]")).last
    shown = prompt.split("Answer (h):\n", 1)[1].split("\n\n", 1)[0]
    assert len(shown) <= 150 and shown.endswith("LATEST") and "left out" in shown
    assert f"Last: {history}" in prompt  # an explicit {@h} still gets the whole result
    assert out["h"] == history  # the result itself is untouched
    other = next(c for c in llm.calls if c.last.endswith("[node full]")).last
    assert history in other


async def test_summarised_dependency_uses_the_summary_role_once() -> None:
    long = "detail " * 100
    summaries: list[str] = []

    def summarise(msgs: tuple[Message, ...]) -> str:
        summaries.append(msgs[-1].content)
        return "SHORT VERSION"

    worker = per_node({"h": long, "u": "ok", "v": "ok"})
    g = Graph({"default": worker, "summary": ScriptedLLM(fn=summarise)})
    g.add_node("h", tagged("h"))
    for k in "uv":
        g.add_node(
            k,
            tagged(k),
            deps=["h"],
            max_dep_chars=100,
            dep_overflow="summarize",
            summary_role="summary",
        )
    await g.evaluate({})
    assert len(summaries) == 1 and "at most 100 characters" in summaries[0]
    for k in "uv":
        prompt = next(c for c in worker.calls if c.last.endswith(f"[node {k}]")).last
        assert "Answer (h):\nSHORT VERSION" in prompt and long not in prompt


def test_json_last_takes_the_final_object() -> None:
    answer = 'Draft: {"steps": ["x"]}\nOn reflection:\n```json\n{"steps": ["a", "b"]}\n```'
    assert json_parser(take="last")(answer) == {"steps": ["a", "b"]}
    assert json_parser(take="last")('[1] then {"a": {"b": 2}} done') == {"a": {"b": 2}}
    with pytest.raises(AfterQueryError, match="no valid JSON"):
        json_parser(take="last")("nothing here {")
    node = Node("p", "P", output="json", json_take="last", schema={"type": "object"})
    spec = parse_spec("nodes:\n  p: {prompt: P, output: json, json_take: last}\n")
    assert spec.nodes[0].json_take == "last" and node.json_take == "last"


async def test_spec_fields_for_shortening_and_prepend_free_graphs() -> None:
    spec = parse_spec(
        "nodes:\n  h: {prompt: H}\n"
        "  u: {prompt: U, deps: [h], max_dep_chars: 120, dep_overflow: keep_start}\n"
    )
    node = next(n for n in spec.nodes if n.key == "u")
    assert (node.max_dep_chars, node.dep_overflow) == (120, "keep_start")


def test_edited_hook_file_is_reloaded(tmp_path: Path) -> None:
    hooks = tmp_path / "h.py"
    spec_path = tmp_path / "s.yaml"
    spec_path.write_text("nodes:\n  a: {prompt: A, after_query: h.py:shape}\n")
    hooks.write_text("def shape(ctx, out):\n    return out.upper()\n")
    first = load_spec(spec_path).nodes[0].after_query
    assert first is not None and first(None, "hi") == "HI"
    hooks.write_text("def shape(ctx, out):\n    return out[::-1]  # edited\n")
    second = load_spec(spec_path).nodes[0].after_query
    assert second is not None and second(None, "hi") == "ih"
    again = load_spec(spec_path).nodes[0].after_query
    assert again is second  # unchanged file: the loaded module is reused


def test_edited_dotted_hook_module_is_reloaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pkg = tmp_path / "myhooks_reload_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    mod = pkg / "mod.py"
    mod.write_text("def f(ctx, out):\n    return 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    spec_text = "nodes:\n  a: {prompt: A, after_query: myhooks_reload_pkg.mod.f}\n"
    allow = ["myhooks_reload_pkg"]  # a package of the user's own, allowed by name
    assert parse_spec(spec_text, allow_hooks=allow).nodes[0].after_query(None, "") == 1  # type: ignore[misc]
    mod.write_text("def f(ctx, out):\n    return 22  # edited, and longer\n")
    assert parse_spec(spec_text, allow_hooks=allow).nodes[0].after_query(None, "") == 22  # type: ignore[misc]
