"""Billed tokens of failed calls and estimated counts: stored, summed, shown,
and read from run stores written before the ``usage_estimated`` column existed."""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path

from rich.console import Console

from lorekit.eval.report import render_run, run_summary
from lorekit.eval.show import render_episode
from lorekit.eval.store import SCHEMA_VERSION, RunStore
from lorekit.eval.store_schema import SCHEMA_SQL
from lorekit.llm import CallRecord, Completion, Message, Usage, UsageLedger
from lorekit.llm.base import RequestParams


def record(
    usage: Usage | None = None,
    *,
    error: str | None = None,
    billed: Usage | None = None,
    cached: bool = False,
) -> CallRecord:
    comp = None if error else Completion("a", usage or Usage(10, 2), "m", cached=cached)
    return CallRecord(
        "executor",
        "m",
        (Message("user", "q"),),
        RequestParams(),
        1000.0,
        0.1,
        comp,
        error,
        error_usage=billed,
    )


def fill(store: RunStore, calls: list[CallRecord], run_id: str = "r1") -> str:
    """One episode with these calls; its info usage comes from a ledger, as the runner's does."""
    rid = store.create_run(run_id, env="textcraft", agent="react", config={})
    ledger = UsageLedger()
    ep = store.episode(rid, "t0/0", index=0, task_id="t0", task_group="depth-1", seed=0)
    for c in calls:
        ep.add_llm_call(c)
        ledger.record(c.role, c.model, c.completion, c.latency_s, billed=c.error_usage)
    ep.finish(success=False, reward=0.0, info={"usage": ledger.total().to_dict()})
    return rid


def text_of(render: object) -> str:
    console = Console(record=True, width=200, file=io.StringIO())
    render(console)  # type: ignore[operator]
    return console.export_text()


CALLS = [
    record(Usage(100, 20)),
    record(Usage(7, 3, estimated=True)),
    record(error="LLMLengthError: cut off", billed=Usage(50, 64)),
    record(error="LLMServerError: 503"),
    record(Usage(1000, 1000), cached=True),
]


def test_summary_counts_billed_tokens_of_failed_calls_and_estimates(tmp_path: Path) -> None:
    with RunStore(tmp_path / "runs.sqlite3") as db:
        rid = fill(db, CALLS)
        s = run_summary(db, rid)
        assert s["usage"]["prompt_tokens"] == 157 and s["usage"]["completion_tokens"] == 87
        assert s["usage"]["error_tokens"] == 114 and s["usage"]["estimated_calls"] == 1
        group = s["groups"]["all"]
        assert group["tokens"] == 244 and group["error_tokens"] == 114
        assert group["estimated_calls"] == 1 and group["cache_hits"] == 1
        out = text_of(lambda c: render_run(db, rid, c))
        shown = text_of(lambda c: render_episode(db, rid, 0, c))
    # Summary table: the group's tokens, marked as partly estimated.
    assert "~244" in out
    assert "1 call(s) got no token counts" in out and "114 billed for failed calls" in out
    # Episode view: cache hits cost nothing; failed calls' billed tokens are counted.
    assert "~157" in shown and "~87" in shown and "~114" in shown
    assert "1000" not in shown
    assert "114 billed for failed calls" in shown


def test_exact_counts_carry_no_mark(tmp_path: Path) -> None:
    with RunStore(tmp_path / "runs.sqlite3") as db:
        rid = fill(db, [record(Usage(100, 20))])
        out = text_of(lambda c: render_run(db, rid, c))
    assert "120" in out and "~" not in out and "estimate" not in out


def test_export_carries_the_estimate_flag_and_failed_call_tokens(tmp_path: Path) -> None:
    with RunStore(tmp_path / "runs.sqlite3") as db:
        rid = fill(db, CALLS)
        buf = io.StringIO()
        db.export_jsonl(rid, buf)
    calls = json.loads(buf.getvalue().splitlines()[1])["llm_calls"]
    assert [c["usage_estimated"] for c in calls] == [False, True, False, False, False]
    assert (calls[2]["prompt_tokens"], calls[2]["completion_tokens"]) == (50, 64)


def _old_store(path: Path) -> None:
    """A store as LoreKit wrote it before the usage_estimated column, with one call."""
    old_sql = SCHEMA_SQL.replace("    usage_estimated INTEGER NOT NULL DEFAULT 0,\n", "")
    assert old_sql != SCHEMA_SQL
    raw = sqlite3.connect(path)
    raw.executescript(old_sql)
    raw.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    raw.execute("INSERT INTO runs VALUES ('old', 1, 1, 'finished', 'e', 'a', '{}', '{}', NULL)")
    raw.execute(
        "INSERT INTO llm_calls (run_id, episode_key, idx, role, model, messages, params, "
        "answer, prompt_tokens, completion_tokens, latency_s, cached, error, started_at, meta) "
        "VALUES ('old', NULL, 0, 'executor', 'm', '[]', '{}', 'a', 5, 6, 0.1, 0, NULL, 1, '{}')"
    )
    raw.commit()
    raw.close()


def test_a_store_from_before_the_column_is_read_and_upgraded(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    _old_store(path)
    with RunStore.open_readonly(path) as reader:  # read-only: defaults, no change
        assert reader.llm_calls("old")[0]["usage_estimated"] is False
        assert reader.usage_by_role("old")["executor"]["estimated_calls"] == 0
    columns = {r[1] for r in sqlite3.connect(path).execute("PRAGMA table_info(llm_calls)")}
    assert "usage_estimated" not in columns
    with RunStore(path) as db:  # writable: the column is added in place
        db.add_run_llm_call("old", record(Usage(1, 1, estimated=True)))
        calls = db.llm_calls("old")
        assert [c["usage_estimated"] for c in calls] == [False, True]
        assert db.usage_by_role("old")["executor"]["estimated_calls"] == 1
    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert raw.execute("SELECT count(*) FROM llm_calls").fetchone()[0] == 2
