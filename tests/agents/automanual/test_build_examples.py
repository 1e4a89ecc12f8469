"""`automanual build --examples N`: the build records how many human examples its
planner was shown, and a resume with another count is refused (the rules learned so
far came from planners that saw those examples)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from lorekit.agents.automanual.build import run_build
from lorekit.eval.store import RunMismatchError, RunStore
from lorekit.llm import ScriptedLLM
from lorekit.llm.roles import Roles


def _build(store: Path, **options: Any) -> Any:
    """A build with no tasks: it records its options and seeds its rules, nothing more."""
    return asyncio.run(
        run_build(
            store,
            env_name="miniwob",
            env_kwargs={},
            tasks=[],
            roles=Roles(ScriptedLLM([])),
            run_id="b",
            **options,
        )
    )


def test_the_count_is_recorded_and_kept_on_resume(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite3"
    _build(store, examples=1)
    with RunStore(store) as db:
        info = db.get_run("b")
    assert info is not None and info.config["automanual"]["examples"] == 1
    _build(store, examples=1)  # the same count resumes
    for other in (None, 2):
        with pytest.raises(RunMismatchError, match=rf"examples 1 -> {other}"):
            _build(store, examples=other)


def test_a_build_without_the_option_records_nothing_new(tmp_path: Path) -> None:
    """Builds from before the option (no key) resume as they did."""
    store = tmp_path / "runs.sqlite3"
    _build(store)
    with RunStore(store) as db:
        info = db.get_run("b")
    assert info is not None and "examples" not in info.config["automanual"]
    _build(store)
    with pytest.raises(RunMismatchError, match="examples None -> 4"):
        _build(store, examples=4)
