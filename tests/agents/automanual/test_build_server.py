"""AutoManual's build and formulate commands with every role on a real local
OpenAI-compatible server (the openai SDK path), a fault injected, the cache on;
behind the server, the scripted models of the simulation study."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _cli import run_cli

from lorekit.agents.automanual.rules import RuleSystem
from lorekit.agents.automanual.store import open_db
from lorekit.agents.automanual.testing.builder import (
    builder_model,
    consolidator_model,
    formulator_model,
)
from lorekit.agents.automanual.testing.planner import planner_model
from lorekit.eval.store import RunStore
from lorekit.llm import Message
from lorekit.llm.testing import Fault, OpenAICompatServer

MODELS = {
    "planner-model": planner_model(repair=1.0),
    "builder-model": builder_model(),
    "consolidator-model": consolidator_model(),
    "formulator-model": formulator_model(),
}


def answer(body: dict[str, Any]) -> str:
    messages = tuple(Message(m["role"], m["content"]) for m in body["messages"])
    return MODELS[body["model"]](messages)


def test_build_and_formulate_through_a_local_server(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "runs.sqlite3"
    with OpenAICompatServer(answer) as srv:
        config = tmp_path / "run.yaml"
        role = "{{model: {name}, base_url: '{url}', max_attempts: 3}}"
        config.write_text(
            "roles:\n"
            + "".join(
                f"  {r}: " + role.format(name=f"{r}-model", url=srv.base_url) + "\n"
                for r in ("default", "planner", "builder", "consolidator", "formulator")
            ).replace("default-model", "planner-model")
            + f"cache: {{mode: read-write, path: '{tmp_path / 'cache.sqlite3'}'}}\n"
            + f"store: '{store}'\n"
        )
        srv.inject(Fault.server_error(503))
        args = ["automanual", "build", "alfworld", "--config", str(config), "--run-id", "b"]
        code, out, err = run_cli([*args, "--per-type", "1", "--no-progress"], capsys)
        assert code == 0, err
        assert "build: b" in out and "lorekit automanual formulate b" in out
        served = srv.request_count
        used = {r.body["model"] for r in srv.requests}
        assert {"planner-model", "builder-model"} <= used
        code, out, err = run_cli(["automanual", "formulate", "b", "--config", str(config)], capsys)
        assert code == 0, err
        assert "manual version 1" in out
        assert srv.requests[-1].body["model"] == "formulator-model"
        # the same build again: every episode is already stored, nothing is asked
        code, _, err = run_cli([*args, "--per-type", "1", "--no-progress"], capsys)
        assert code == 0, err
        assert srv.request_count == served + 1
    with RunStore(store) as db:
        episodes = db.episodes("b")
        assert len(episodes) == 6 and {e.task_group for e in episodes} == {
            "look_at_obj_in_light",
            "pick_and_place_simple",
            "pick_clean_then_place_in_recep",
            "pick_cool_then_place_in_recep",
            "pick_heat_then_place_in_recep",
            "pick_two_obj_and_place",
        }
        usage = db.usage_by_role("b")
        assert {"planner", "builder", "formulator"} <= set(usage)
        assert usage["formulator"]["calls"] == 1
    assert RuleSystem(open_db(str(store)), "b").version > 3
