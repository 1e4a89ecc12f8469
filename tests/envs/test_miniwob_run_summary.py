"""MiniWoB++'s run summary from a recorded store (no browser): the page set and
actions a run played, read from its steps, and success under both rules."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lorekit.envs.miniwob.runs import played, run_summary
from lorekit.envs.summaries import run_summary as summary_for
from lorekit.eval.store import RunStore


def _episode(store: RunStore, run_id: str, key: str, *steps: dict[str, Any], error: bool = False):
    with store.episode(run_id, key, index=int(key[1:]), task_id=key, task_group="g") as ep:
        for info in steps:
            ep.add_step("page", "click_xpath //button", 0.0, False, info)
        if error:
            ep.finish(success=False, reward=0.0, error="BrowserCrashed")
        else:
            ep.finish(success=bool(steps and steps[-1].get("success_strict")), reward=0.0)


def test_the_summary_names_the_pages_and_actions_the_steps_record(tmp_path: Path) -> None:
    assert summary_for("miniwob") is run_summary
    step = {"valid": True, "pages": "automanual", "actions": "published"}
    won = {**step, "success_strict": True, "success_partial": True}
    partly = {**step, "success_strict": False, "success_partial": True}
    with RunStore(tmp_path / "runs.db") as store:
        store.create_run("new", env="miniwob", agent="automanual", config={})
        _episode(store, "new", "e0", step, won)
        _episode(store, "new", "e1", partly)
        _episode(store, "new", "e2", step)  # the agent stopped before the page ended it
        _episode(store, "new", "e3", step, error=True)  # not counted, still named
        notes: list[str] = []
        summary = run_summary(store, "new", notes)
    assert summary is not None and not notes
    assert summary["cells"] == ["automanual", "published", "1/3", "2/3"]
    assert summary["rates"] == {"strict": 1 / 3, "partial": 2 / 3}
    assert summary["figures"]["pages"] == ["automanual"]


def test_a_run_recorded_before_steps_named_the_set_played_the_farama_pages(
    tmp_path: Path,
) -> None:
    config = {"env_kwargs": {"actions": "published"}}
    with RunStore(tmp_path / "runs.db") as store:
        store.create_run("old", env="miniwob", agent="automanual", config=config)
        _episode(store, "old", "e0", {"valid": True, "success_strict": True})
        store.create_run("mixed", env="miniwob", agent="oracle", config={})
        _episode(store, "mixed", "e0", {"pages": "farama", "actions": "plain"})
        _episode(store, "mixed", "e1", {"pages": "automanual", "actions": "plain"})
        old, mixed = played(store, "old"), played(store, "mixed")
        notes: list[str] = []
        assert run_summary(store, "missing", notes) is None
    assert (old["pages"], old["actions"], old["strict"]) == (["farama"], ["published"], 1)
    assert mixed["pages"] == ["automanual", "farama"] and mixed["episodes"] == 2
    assert notes == ["MiniWoB++: no run 'missing'"]
