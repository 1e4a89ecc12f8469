"""ADaPT's published ALFWorld run replayed through LoreKit's ADaPT (profile code) on ALFWorld's
release, rebuilt offline from the shared data (AutoManual's copy, the release's grammar from
the alfworld wheel, the record's task sentences): every game the data can rebuild takes the
recorded decisions, shows every recorded observation and lands on its recorded outcome."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from _published import ALFWORLD, published

from lorekit.agents.adapt.replay_alfworld import READER
from lorekit.envs.alfworld.rebuild import Rebuilt
from lorekit.eval.replay import replay
from lorekit.eval.store import RunStore

pytestmark = pytest.mark.slow  # rebuilds 132 games, then plays 296 executor runs: minutes


@pytest.fixture(scope="module")
def replayed(
    tmp_path_factory: pytest.TempPathFactory, alfworld_release: Rebuilt
) -> tuple[Any, Any]:
    record = published(ALFWORLD)
    dest = alfworld_release.dest  # rebuilt once per session (tests/conftest.py)
    source = READER.open(record, env_options={"data_dir": str(dest)})
    store = tmp_path_factory.mktemp("replay") / "runs.sqlite3"
    with RunStore(store) as db:
        result = asyncio.run(replay(source, db, run_id="alfworld", concurrency=2))
    return source, result


def test_every_rebuilt_game_replays_its_record(replayed: tuple[Any, Any]) -> None:
    source, result = replayed
    summaries = result.summaries
    assert len(summaries) >= 132 and len(summaries) + len(source.missing) == 134
    assert [k for k, s in summaries.items() if not s["decided"]] == []
    assert {k for k, s in summaries.items() if s["published"] != s["replayed"]} == set()
    seen = sum(s["observations_compared"] for s in summaries.values())
    same = sum(s["observations_equal"] for s in summaries.values())
    assert seen > 1800 and same == seen
    kinds = {d["kind"] for s in summaries.values() for d in s["divergences"]}
    assert kinds <= {"gap"}
    total = result.rows[-1]
    assert total.group == "all" and total.replayed == total.published


def test_the_gaps_are_the_records_and_are_named(replayed: tuple[Any, Any]) -> None:
    source, result = replayed
    gaps = sum(s["gap_runs"] for s in result.summaries.values())
    dropped = sum(
        1
        for key, record in source.records.items()
        if key in result.summaries
        for run in record.runs
        if run.turns is None
    )
    assert (
        gaps
        == dropped
        == sum(1 for s in result.summaries.values() for d in s["divergences"] if d["kind"] == "gap")
    )
