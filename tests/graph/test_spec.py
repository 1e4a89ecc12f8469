"""YAML specs: validation errors with file, line, node and field; the example end to end."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lorekit.graph.spec import SpecError, load_spec, parse_spec
from lorekit.llm import Message, ScriptedLLM

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "planner_gate.yaml"

GOOD = """\
name: tiny
database:
  goal: null
  plan: "(none)"
nodes:
  gate:
    prompt: "Plan: {plan}. Change it? yes or no"
    output: choice
    choices: [yes, no]
  plan:
    prompt: "Goal: {goal}"
    writes: [plan]
branches:
  - gate: gate
    when: yes
    run: [plan]
"""


def spec_error(text: str, tmp_path: Path) -> str:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(SpecError) as err:
        load_spec(path)
    return str(err.value)


def test_good_spec_builds_with_gate_edge() -> None:
    spec = parse_spec(GOOD)
    assert [n.key for n in spec.nodes] == ["gate", "plan"]
    g = spec.build(ScriptedLLM(default="x"))
    assert g.deps("plan") == ("gate",)
    assert g.layout().modes[("gate", "plan")] == "hidden"
    assert spec.required == ["goal"]


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (
            ("deps: [situation]", "deps: [situaton]"),
            ":34:12: node 'obstacle': field 'deps': unknown node 'situaton'",
        ),
        (
            ("    shorthand: true\n    prompt: Name", "    shorthnad: true\n    prompt: Name"),
            "node 'obstacle': field 'shorthnad': Extra inputs",
        ),
        (
            ('choices: ["yes", "no"]', "choices: []"),
            "node 'gate': field 'choices': output 'choice' needs",
        ),
        (("minItems: 1,", "minItems: 1, format: uri,"), "node 'plan': field 'schema'"),
        (
            ("Current plan: {plan}\n      Give", "Current plan: {plna}\n      Give"),
            "node 'act': field 'prompt': reads 'plna'",
        ),
        (
            ("after_query: hooks.py:new_fact", "after_query: hooks.py:no_such"),
            "node 'learn': field 'after_query'",
        ),
        (
            ("after_query: hooks.py:new_fact", "after_query: nowhere_pkg.mod.fn"),
            "cannot import 'nowhere_pkg.mod'",
        ),
        (
            ('    when: "yes"', "    when: maybe"),
            "branches[0]: field 'when': 'maybe' is not one of",
        ),
        (
            ("    run: [plan]", "    run: [plan, gate]"),
            "branches[0]: field 'run': 'gate' is the gate itself",
        ),
        (("max_retries: 2", "max_retries: -1"), "field 'max_retries'"),
        (("deps: [situation, plan]", "deps: [situation, plan, learn]"), "cycle"),
        (("temperature", "temperature"), None),
    ],
)
def test_validation_errors_name_file_node_and_field(
    change: tuple[str, str], where: str | None, tmp_path: Path
) -> None:
    text = EXAMPLE.read_text()
    assert change[0] in text or change[0] == "temperature"
    (tmp_path / "hooks.py").write_text((EXAMPLE.parent / "hooks.py").read_text())
    if where is None:
        return
    message = spec_error(text.replace(change[0], change[1], 1), tmp_path)
    assert message.startswith(str(tmp_path / "bad.yaml"))
    assert where in message, message


def test_more_validation_errors(tmp_path: Path) -> None:
    assert "not valid YAML" in spec_error("nodes: [a, b", tmp_path)
    assert "nodes" in spec_error("name: x\n", tmp_path)
    race = (
        GOOD.replace("  plan:\n", "  plan:\n    deps: []\n") + "  reader:\n    prompt: '{plan}'\n"
    )
    race = race.replace("branches:", "x_branches:") if False else race
    text = """\
database: {plan: p}
nodes:
  w: {prompt: W, writes: [plan]}
  r: {prompt: "Plan {plan}"}
"""
    assert "race on database key 'plan'" in spec_error(text, tmp_path)
    with pytest.raises(SpecError, match="no such spec file"):
        load_spec(tmp_path / "missing.yaml")
    spec = parse_spec(GOOD)
    with pytest.raises(SpecError, match=r"no value for 'goal'.*--set goal="):
        spec.initial_db()


def example_model(gate: list[str], plan: list[str]) -> ScriptedLLM:
    gates, plans = iter(gate), iter(plan)

    def fn(msgs: tuple[Message, ...]) -> str:
        # the asking node's own prompt is the last paragraph of the first user message
        first = next(m.content for m in msgs if m.role == "user").split("\n\n")[-1]
        if "Summarise the situation" in first:
            return "You stand next to an oak tree with an empty inventory."
        if "biggest obstacle" in first:
            return "No wood yet."
        if "Answer yes or no" in first:
            return next(gates)
        if "Write a short plan" in first:
            return next(plans)
        if "Give the next game command" in first:
            return "Thought: wood first.\nAction: get 1 oak log"
        if "worth remembering" in first:
            return (
                "Fact: oak logs come from oak trees." if "oak logs" not in first else "Fact: none"
            )
        raise AssertionError(first)

    return ScriptedLLM(fn=fn)


@pytest.mark.parametrize("sequential", [False, True])
async def test_example_planner_gate_end_to_end(sequential: bool) -> None:
    spec = load_spec(EXAMPLE)
    llm = example_model(
        ["yes", "Answer: no"],
        ['Here:\n{"steps": []}', '{"steps": ["get 1 oak log", "craft 4 oak planks"]}'],
    )
    graph = spec.build(llm)
    db = spec.initial_db({"goal": "craft 4 oak planks", "observation": "You see an oak tree."})
    first = await graph.evaluate(db, sequential=sequential)
    assert first["gate"] == "yes"
    assert first["plan"] == {"steps": ["get 1 oak log", "craft 4 oak planks"]}
    assert db["plan"] == ["get 1 oak log", "craft 4 oak planks"]
    assert db["action"] == "get 1 oak log"
    assert db["knowledge"] == ["oak logs come from oak trees"]
    assert graph.last_report is not None and graph.last_report.trace("plan").retries == 1
    plan_calls = sum("Write a short plan" in c.messages[1].content for c in llm.calls)
    # second step: the gate says no, so the plan is reused and the planner not asked
    db["observation"] = "You got 1 oak log."
    second = await graph.evaluate(db, sequential=sequential)
    assert second["gate"] == "no"
    assert second["plan"] == first["plan"]
    assert graph.last_report.trace("plan").status == "skipped"
    assert sum("Write a short plan" in c.messages[1].content for c in llm.calls) == plan_calls
    assert db["knowledge"] == ["oak logs come from oak trees"]  # "none" wrote nothing
    assert second["learn"] is None
    json.dumps(graph.last_report.to_dict())


async def test_a_gate_no_on_the_first_pass_still_runs_what_others_need() -> None:
    """The plan has never been made and `act` needs it: the branch runs it anyway
    (skipping it would leave `act` nothing to read); once it has a result, "no"
    skips it."""
    spec = load_spec(EXAMPLE)
    llm = example_model(["no", "no"], ['{"steps": ["get 1 oak log"]}'])
    graph = spec.build(llm)
    db = spec.initial_db({"goal": "g", "observation": "o"})
    first = await graph.evaluate(db)
    assert first["gate"] == "no" and first["plan"] == {"steps": ["get 1 oak log"]}
    assert graph.last_report is not None and graph.last_report.trace("plan").status == "ok"
    second = await graph.evaluate(db)
    assert second["plan"] == first["plan"]
    assert graph.last_report.trace("plan").status == "skipped"


async def test_a_branch_skips_a_chain_nobody_else_needs() -> None:
    """A skipped node without a result is fine when all that depends on it is
    skipped too; a node outside the branch that needs it makes it run."""
    text = """\
nodes:
  g: {prompt: "gate", output: choice, choices: [yes, no]}
  a: {prompt: "a"}
  b: {prompt: "b", deps: [a]}
  c: {prompt: "c", deps: [a]}
branches:
  - {gate: g, when: yes, run: [a, b]}
"""
    spec = parse_spec(text)
    graph = spec.build(ScriptedLLM(fn=lambda msgs: "no" if "gate" in msgs[-1].content else "x"))
    results = await graph.evaluate()
    assert "a" in results and "b" not in results  # c needs a; nothing needs b
    alone = parse_spec(text.replace('  c: {prompt: "c", deps: [a]}\n', ""))
    graph = alone.build(ScriptedLLM(fn=lambda msgs: "no" if "gate" in msgs[-1].content else "x"))
    assert await graph.evaluate() == {"g": "no"}


def test_hook_file_is_loaded_relative_to_the_spec(tmp_path: Path) -> None:
    (tmp_path / "myhooks.py").write_text("def shout(ctx, out):\n    return out.upper()\n")
    text = "nodes:\n  a: {prompt: A, after_query: myhooks.py:shout}\n"
    (tmp_path / "s.yaml").write_text(text)
    spec = load_spec(tmp_path / "s.yaml")
    hook: Any = spec.nodes[0].after_query
    assert hook(None, "hi") == "HI"


async def test_branch_else_list_is_skipped_when_the_gate_matches() -> None:
    text = """\
nodes:
  g: {prompt: "gate", output: choice, choices: [yes, no]}
  a: {prompt: "a"}
  b: {prompt: "b"}
branches:
  - {gate: g, when: yes, run: [a], else: [b]}
"""
    spec = parse_spec(text)
    answers = iter(["no", "B1", "yes", "A1", "no", "B2"])
    llm = ScriptedLLM(fn=lambda msgs: next(answers))
    graph = spec.build(llm)
    # "no": a is skipped and, never having run, has no result (nothing depends on it)
    assert await graph.evaluate() == {"g": "no", "b": "B1"}
    # "yes": a runs, b (the else list) is skipped and reuses B1
    assert await graph.evaluate() == {"g": "yes", "a": "A1", "b": "B1"}
    assert await graph.evaluate() == {"g": "no", "a": "A1", "b": "B2"}


def test_hidden_alone_makes_an_ordering_dependency() -> None:
    text = """\
nodes:
  a: {prompt: "A", writes: [x]}
  b: {prompt: "B reads {x}", deps: [c], hidden: [a]}
  c: {prompt: "C"}
database: {x: ""}
"""
    node = {n.key: n for n in parse_spec(text).nodes}["b"]
    assert node.deps == ("c", "a") and node.dep_mode("a") == "hidden"
    with pytest.raises(SpecError, match="'c' is styled but not a dep"):
        parse_spec(text.replace("deps: [c], hidden: [a]", "hidden: [a], shorthand: [c]"))
