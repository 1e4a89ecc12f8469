"""The published TextCraft run (../shared/data), replayed through LoreKit's ADaPT (profile code)."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

import pytest
from _published import TEXTCRAFT, published
from rich.console import Console

from lorekit.agents.adapt.replay_textcraft import READER
from lorekit.eval.replay import replay
from lorekit.eval.show import render_episode
from lorekit.eval.store import RunStore

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    store = tmp_path_factory.mktemp("replay") / "runs.sqlite3"
    source = READER.open(published(TEXTCRAFT))
    with RunStore(store) as db:
        result = asyncio.run(replay(source, db, run_id="replay-textcraft", concurrency=4))
    return result, store


def test_every_goal_takes_the_recorded_decisions_and_lands_on_its_recorded_reward(
    replayed: tuple[Any, Path],
) -> None:
    result, _ = replayed
    assert len(result.summaries) == 200
    undecided = [k for k, s in result.summaries.items() if not s["decided"]]
    assert undecided == []
    off = {k: (s["published"], s["replayed"]) for k, s in result.summaries.items()
           if s["published"] != s["replayed"]}  # fmt: skip
    assert off == {}
    total = result.rows[-1]
    assert total.group == "all" and total.episodes == 200
    assert round(100 * total.replayed / 200, 1) == round(100 * total.published / 200, 1) == 52.0


def test_the_gaps_of_the_record_are_counted_and_each_is_named(replayed: tuple[Any, Path]) -> None:
    result, _ = replayed
    summaries = result.summaries.values()
    assert sum(s["runs"] for s in summaries) == 1291
    assert sum(s["gap_runs"] for s in summaries) == 712
    kinds = [d["kind"] for s in summaries for d in s["divergences"]]
    assert kinds.count("gap") == 712
    assert set(kinds) <= {"gap", "observation"}  # no call, decision, missing or reward divergence


def test_every_reply_before_the_first_gap_is_the_records(replayed: tuple[Any, Path]) -> None:
    result, _ = replayed
    equal, compared = (
        sum(s["observations_before_gaps"][i] for s in result.summaries.values()) for i in (0, 1)
    )
    assert compared > 0 and equal == compared
    seen = sum(s["observations_compared"] for s in result.summaries.values())
    same = sum(s["observations_equal"] for s in result.summaries.values())
    assert same / seen > 0.95  # the rest follow gaps whose state the record does not fix


def test_the_replay_is_a_stored_run_that_show_prints(replayed: tuple[Any, Path]) -> None:
    _, store = replayed
    out = io.StringIO()
    with RunStore(store) as db:
        render_episode(
            db, "replay-textcraft", "chiseled_nether_bricks", Console(file=out, width=200)
        )
        run = db.get_run("replay-textcraft")
    text = out.getvalue()
    assert "craft chiseled nether bricks." in text and "fetch 3 nether bricks" in text
    assert json.loads(json.dumps(run.config))["replay"]["agent_options"] == {"profile": "code"}


def test_env_53_replays_the_codes_own_scoring(replayed: tuple[Any, Path]) -> None:
    # The goal is crafted by the second-to-last run; the last run only thinks, so the code
    # recorded 0 while the env (LoreKit's success) says the goal was reached.
    result, _ = replayed
    s = result.summaries["chiseled_nether_bricks"]
    assert (s["published"], s["replayed"], s["env_success"]) == (0.0, 0.0, True)
