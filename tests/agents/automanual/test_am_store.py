"""AutoManual's tables: one schema, shared with the run store's file, tail-only truncation.

(Named test_am_store.py because tests/eval/test_store.py exists and the
test folders are not packages.)
"""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path

import pytest

from lorekit.agents.automanual.store import (
    SCHEMA_VERSION,
    AutoManualStoreError,
    open_db,
    transaction,
    truncate_episodes,
)
from lorekit.eval.store import RunStore

TABLES = {"automanual_rule_events", "automanual_library", "automanual_manuals"}


def _tables(conn: sqlite3.Connection) -> set[str]:
    rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    return {r[0] for r in rows}


def _add_library_row(conn: sqlite3.Connection, build: str, seq: int, ep: str | None) -> None:
    conn.execute(
        "INSERT INTO automanual_library VALUES (?, ?, ?, 'skill', 'heat', 'goal', 'code', '{}', 0)",
        (build, seq, ep),
    )


def test_in_memory_db_has_every_table() -> None:
    conn = open_db(None)
    assert _tables(conn) >= TABLES
    assert conn.execute("SELECT version FROM automanual_schema").fetchall() == [(SCHEMA_VERSION,)]


def test_file_db_uses_wal_and_reopening_keeps_rows(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "am.sqlite"
    conn = open_db(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] > 0
    _add_library_row(conn, "b", 1, "ep/0")
    conn.close()
    again = open_db(path)
    assert again.execute("SELECT count(*) FROM automanual_library").fetchone()[0] == 1
    assert again.execute("SELECT count(*) FROM automanual_schema").fetchone()[0] == 1


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "am.sqlite"
    open_db(path).execute("UPDATE automanual_schema SET version = ?", (SCHEMA_VERSION + 1,))
    with pytest.raises(AutoManualStoreError, match="upgrade LoreKit"):
        open_db(path)


def test_not_a_database_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "junk.sqlite"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(AutoManualStoreError, match="cannot use"):
        open_db(path)


def test_shares_the_run_store_file_side_by_side(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    store = RunStore(path)
    run_id = store.create_run(env="alfworld", agent="automanual", config={"k": 1})
    conn = open_db(store.path)
    assert _tables(conn) >= TABLES
    # interleave writes through both connections
    with store.episode(run_id, "t/0", index=0) as ep:
        _add_library_row(conn, run_id, 1, "t/0")
        ep.finish(success=True, reward=1.0)
    _add_library_row(conn, run_id, 2, "t/1")
    assert store.finished_episode_keys(run_id) == {"t/0"}
    store.close()
    # the run store reopens (read-write and read-only) and still reads its rows
    again = RunStore(path)
    assert [e.episode_key for e in again.episodes(run_id)] == ["t/0"]
    again.close()
    ro = RunStore.open_readonly(path)
    assert ro.get_run(run_id) is not None
    ro.close()
    assert conn.execute("SELECT count(*) FROM automanual_library").fetchone()[0] == 2


def test_run_store_can_open_a_file_that_automanual_created_first(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    conn = open_db(path)
    _add_library_row(conn, "b", 1, None)
    store = RunStore(path)  # sees only automanual_* tables, so it lays down its schema
    rid = store.create_run(env="e", agent="a", config={})
    assert store.get_run(rid) is not None
    store.close()
    assert conn.execute("SELECT count(*) FROM automanual_library").fetchone()[0] == 1


def test_run_store_still_refuses_a_foreign_file(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite"
    other = sqlite3.connect(path)
    other.execute("CREATE TABLE stuff (x)")
    other.commit()
    other.close()
    open_db(path).close()
    with pytest.raises(Exception, match="not a LoreKit run store"):
        RunStore(path)


def test_transaction_rolls_back_and_nests() -> None:
    conn = open_db(None)
    with pytest.raises(RuntimeError), transaction(conn):
        _add_library_row(conn, "b", 1, "e")
        raise RuntimeError("boom")
    assert conn.execute("SELECT count(*) FROM automanual_library").fetchone()[0] == 0
    with transaction(conn):
        _add_library_row(conn, "b", 1, "e")
        with pytest.raises(RuntimeError), transaction(conn):
            _add_library_row(conn, "b", 2, "e")
            raise RuntimeError("inner")
        _add_library_row(conn, "b", 3, "e")
    seqs = [r[0] for r in conn.execute("SELECT seq FROM automanual_library ORDER BY seq")]
    assert seqs == [1, 3]


def test_two_connections_wait_for_each_other(tmp_path: Path) -> None:
    path = tmp_path / "am.sqlite"
    a, b = open_db(path), open_db(path)
    errors: list[BaseException] = []

    def write(conn: sqlite3.Connection, start: int) -> None:
        try:
            for i in range(start, start + 50):
                with transaction(conn):
                    _add_library_row(conn, "b", i, "e")
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(c, s)) for c, s in ((a, 0), (b, 100))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert a.execute("SELECT count(*) FROM automanual_library").fetchone()[0] == 100


def test_truncate_drops_only_the_uncommitted_tail() -> None:
    conn = open_db(None)
    for seq, ep in enumerate([None, "e0", "e0", "e1", "e2", "e2"], start=1):
        _add_library_row(conn, "b", seq, ep)
    _add_library_row(conn, "other", 1, "e2")  # another build is never touched
    assert truncate_episodes(conn, "automanual_library", "b", {"e0", "e1"}) == 2
    rows = conn.execute("SELECT build_id, seq, episode_id FROM automanual_library ORDER BY 1, 2")
    assert [tuple(r) for r in rows] == [
        ("b", 1, None),
        ("b", 2, "e0"),
        ("b", 3, "e0"),
        ("b", 4, "e1"),
        ("other", 1, "e2"),
    ]
    assert truncate_episodes(conn, "automanual_library", "b", {"e0", "e1"}) == 0


def test_truncate_refuses_a_gap_and_changes_nothing() -> None:
    conn = open_db(None)
    for seq, ep in enumerate(["e0", "e1", "e2"], start=1):
        _add_library_row(conn, "b", seq, ep)
    with pytest.raises(AutoManualStoreError, match=r"episode 'e1'.*episode 'e2'.*tail"):
        truncate_episodes(conn, "automanual_library", "b", {"e0", "e2"})
    assert conn.execute("SELECT count(*) FROM automanual_library").fetchone()[0] == 3


def test_truncate_refuses_a_user_row_after_a_dropped_one() -> None:
    conn = open_db(None)
    for seq, ep in enumerate(["e0", "e1", None], start=1):
        _add_library_row(conn, "b", seq, ep)
    with pytest.raises(AutoManualStoreError, match="seed/user"):
        truncate_episodes(conn, "automanual_library", "b", {"e0"})


def test_truncate_refuses_unknown_tables() -> None:
    conn = open_db(None)
    with pytest.raises(ValueError, match="unknown AutoManual table"):
        truncate_episodes(conn, "automanual_library; DROP TABLE x", "b", set())
    with pytest.raises(ValueError, match="unknown AutoManual table"):
        truncate_episodes(conn, "automanual_manuals", "b", set())


def test_manuals_and_library_columns_match_the_contract() -> None:
    conn = open_db(None)
    conn.execute(
        "INSERT INTO automanual_manuals (build_id, version, rules_version, markdown, meta, at) "
        "VALUES ('b', 1, 7, '# Manual', ?, 0)",
        (json.dumps({"model": "m"}),),
    )
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(
            "INSERT INTO automanual_library VALUES ('b', 1, 'e', 'recipe', 't', 'g', 'x', '{}', 0)"
        )
    cols = [r[1] for r in conn.execute("PRAGMA table_info(automanual_library)")]
    assert cols == [
        "build_id",
        "seq",
        "episode_id",
        "kind",
        "task_type",
        "goal",
        "text",
        "meta",
        "at",
    ]
