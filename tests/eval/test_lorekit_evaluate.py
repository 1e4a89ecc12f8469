"""``lorekit.evaluate``: the library's entry point plays, records and resumes a run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import lorekit
from lorekit.agents.simple import OracleAgent
from lorekit.envs import EnvSpec, UnknownEnvError
from lorekit.eval.evaluate import choose_tasks
from lorekit.eval.store import RunStore
from lorekit.llm.scripted import ScriptedLLM


def test_a_run_by_names_is_recorded_and_resumes(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite3"
    result = lorekit.evaluate("textcraft", "oracle", tasks=3, store=store, run_id="r1")
    assert (result.run_id, result.played, result.successes) == ("r1", 3, 3)
    with RunStore(store) as db:
        run = db.get_run("r1")
        assert run is not None and run.agent == "oracle" and run.env == "textcraft"
        assert len(db.episodes("r1")) == 3
    again = lorekit.evaluate("textcraft", "oracle", tasks=3, store=store, run_id="r1")
    assert (again.played, again.skipped) == (0, 3)  # nothing played twice


def test_objects_and_ids_work_as_names_do(tmp_path: Path) -> None:
    spec = EnvSpec("textcraft", {"max_steps": 40})
    result = lorekit.evaluate(
        spec, OracleAgent(), tasks=["lectern", "cyan_banner"], store=tmp_path / "r.sqlite3"
    )
    assert result.played == 2 and result.successes == 2


async def test_a_model_agent_gets_its_models_by_role(tmp_path: Path) -> None:
    model = ScriptedLLM(["Thought: I give up.\nAction: inventory"] * 200, model="scripted-x")
    result = await lorekit.evaluate_async(
        "textcraft",
        "react",
        agent_options={"max_turns": 2},
        models={"executor": model},
        tasks=1,
        store=tmp_path / "r.sqlite3",
    )
    assert result.played == 1 and result.errors == 0
    with RunStore(tmp_path / "r.sqlite3") as db:
        (episode,) = db.episodes(result.run_id)
        assert db.llm_calls(result.run_id, episode.episode_key)  # the model calls are recorded


def test_bad_names_and_tasks_fail_before_anything_plays(tmp_path: Path) -> None:
    store = tmp_path / "r.sqlite3"
    with pytest.raises(UnknownEnvError, match=r"unknown env 'nope'; known envs: .*textcraft"):
        lorekit.evaluate("nope", "oracle", store=store)
    with pytest.raises(LookupError, match="unknown agent 'nobody'"):
        lorekit.evaluate("textcraft", "nobody", store=store)
    with pytest.raises(TypeError, match="colour"):
        lorekit.evaluate("textcraft", "oracle", env_options={"colour": "blue"}, store=store)
    with pytest.raises(KeyError, match="no task 'unobtainium'"):
        lorekit.evaluate("textcraft", "oracle", tasks=["unobtainium"], store=store)
    assert not store.exists() or not RunStore(store).list_runs()


def test_choose_tasks_refuses_a_negative_count() -> None:
    with pytest.raises(ValueError, match="count >= 0"):
        choose_tasks([], -1)


def test_import_lorekit_loads_no_harness() -> None:
    code = "import sys, lorekit; print('lorekit.eval' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False", done.stderr
