"""Env run summaries: found by env name, drawn by the report without it knowing the env,
and the old import path of Crafter's scores kept for one release."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lorekit.envs.summaries import RunSummary, run_summary
from lorekit.eval.report_html import build_report
from lorekit.eval.report_html_data import run_figures
from lorekit.eval.store import RunStore
from lorekit.registry import REGISTRY, Registry


def test_every_registered_summary_loads() -> None:
    assert "crafter" in REGISTRY.names("summary")
    for env in REGISTRY.names("summary"):
        assert callable(run_summary(env)), env
    assert run_summary("textcraft") is None


def _toy(store: Any, run_id: str, notes: list[str]) -> RunSummary | None:
    if run_id == "quiet":
        notes.append("toy: nothing to say")
        return None
    n = len(store.episodes(run_id))
    return {
        "section": "toy",
        "title": "Toy: laps",
        "columns": ["laps"],
        "cells": [f"{n} laps"],
        "chart": "Toy lap rates",
        "rates": {"lap": 0.5, f"only-{run_id}": 1.0},
        "figures": {"laps": n},
    }


def test_a_new_env_summary_reaches_the_report(tmp_path: Path, registry: Registry) -> None:
    registry.add_summary("toyenv", f"{__name__}:_toy")
    with RunStore(tmp_path / "runs.db") as store:
        for rid in ("a", "b", "quiet"):
            store.create_run(rid, env="toyenv", agent="x", config={})
            with store.episode(rid, "e", index=0, task_id="t", task_group="g") as ep:
                ep.finish(success=True, reward=1.0, info={})
        assert run_figures(store, "a").summary == _toy(store, "a", [])
        quiet = run_figures(store, "quiet")
        assert quiet.summary is None and quiet.notes == ["toy: nothing to say"]
        page = build_report(store, ["a", "b", "quiet"])
    section = page.split('<section id="toy">')[1].split("</section>")[0]
    assert "<h2>Toy: laps</h2>" in section and 'data-plot="toy"' in section
    assert "<td>a</td><td>1 laps</td>" in section and "<td>b</td><td>1 laps</td>" in section
    assert "only-a" in section and "only-b" in section  # one chart, both runs' rates
    assert "toy: nothing to say" in page
    assert page.count('<section id="toy">') == 1
