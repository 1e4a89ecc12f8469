"""Traces: each node's prompt, answers, retries, tokens and latency, kept in the run store."""

from __future__ import annotations

import json
from pathlib import Path

from graph_helpers import per_node, tagged

from lorekit.eval.store import RunStore
from lorekit.graph import Graph
from lorekit.llm import Roles, UsageLedger


async def test_traces_and_tagged_calls_land_in_a_run_store_episode(tmp_path: Path) -> None:
    llm = per_node({"plan": ["oops", '{"steps": ["a"]}'], "act": "Action: go"})
    with RunStore(tmp_path / "runs.sqlite3") as store:
        run_id = store.create_run("r1", env="textcraft", agent="agentkit", config={})
        writer = store.episode(run_id, "t0/0", index=0, task_id="t0", task_group="g", seed=0)
        ledger = UsageLedger()
        roles = Roles(llm).metered(ledger, writer.add_llm_call)
        g = Graph(roles, name="planner")
        g.add_node("plan", tagged("plan"), output="json")
        g.add_node("act", tagged("act"), deps=["plan"], output="regex", pattern=r"Action: (.+)")
        await g.evaluate({})
        report = g.last_report
        assert report is not None
        # an agent puts the report in its trajectory notes; the harness stores them as info
        writer.finish(success=True, reward=1.0, info={"notes": {"graph": [report.to_dict()]}})

        calls = store.llm_calls(run_id, "t0/0")
        assert [(c["meta"]["node"], c["meta"]["attempt"]) for c in calls] == [
            ("plan", 0),
            ("plan", 1),
            ("act", 0),
        ]
        assert all(c["meta"]["graph"] == "planner" for c in calls)
        assert calls[1]["answer"] == '{"steps": ["a"]}'
        assert ledger.by_role["default"].calls == 3  # accounting unchanged by the tagging

        (episode,) = store.episodes(run_id)
        nodes = episode.info["notes"]["graph"][0]["nodes"]
        plan = nodes[0]
        assert plan["key"] == "plan" and plan["retries"] == 1 and plan["status"] == "ok"
        assert plan["output"] == {"steps": ["a"]}
        assert "[node plan]" in plan["messages"][0]["content"]
        assert plan["attempts"][0]["rejected"].startswith("The answer is not valid JSON")
        assert plan["prompt_tokens"] > 0 and plan["completion_tokens"] > 0
        assert plan["latency_s"] >= 0 and nodes[1]["output"] == "go"


def test_trace_round_trips_as_json() -> None:
    from lorekit.graph.trace import AttemptTrace, NodeTrace, PassReport

    t = NodeTrace(
        "a", "default", attempts=[AttemptTrace("x", prompt_tokens=3)], output={"k": (1, 2)}
    )
    r = PassReport("g", False, [t])
    d = json.loads(json.dumps(r.to_dict()))
    assert d["nodes"][0]["output"] == {"k": [1, 2]} and d["nodes"][0]["answer"] == "x"
    assert r.trace("a") is t and r.order == ["a"]
