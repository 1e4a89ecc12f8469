"""``lorekit show``'s SPRING section, from notes alone: fallbacks, refusals, failures."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from lorekit.agents.graph_pass_view import render_spring


def _printed(notes: dict[str, Any]) -> str:
    console = Console(record=True, width=200)
    render_spring(notes, console)
    return console.export_text()


def test_prints_each_step_with_fallbacks_and_refusals() -> None:
    notes = {
        "spring": {
            "context": "experience:laws.json",
            "graph": "spring",
            "dag": {"look": [], "action": ["look"]},
            "fallbacks": 1,
            "steps": [
                {
                    "step": 1,
                    "action": "noop",
                    "fallback": True,
                    "reason": "action: 'chop' is not an allowed action",
                    "nodes": [
                        {"key": "look", "status": "ok", "answer": "A tree " + "x" * 500},
                        {"key": "late", "status": "ok", "answer": None},
                        {
                            "key": "action",
                            "status": "failed",
                            "answer": "Action: chop",
                            "rejected": [{"answer": "Action: chop", "why": "'chop' is not"}],
                            "error": "retries spent",
                        },
                    ],
                }
            ],
        }
    }
    out = _printed(notes)
    assert "SPRING  context=experience:laws.json  graph=spring  passes=1  fallbacks=1" in out
    assert "questions: look  action<-look" in out
    assert "step 1 -> noop  fallback: action: 'chop' is not an allowed action" in out
    assert "action (failed): Action: chop" in out and "refused Action: chop: 'chop' is not" in out
    assert "retries spent" in out and "late: (not kept)" in out
    assert "x" * 300 not in out and "..." in out  # long answers are cut


def test_prints_nothing_for_other_agents() -> None:
    assert _printed({"automanual": {}}) == "" and _printed({"spring": "broken"}) == ""
