"""A plugin's own tables in the run store's file, known to the store only through the
registry (``registry.add_tables``): a file holding only them is still an empty
store, and removing a run removes their rows by the column the plugin named."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from lorekit.eval.store import RunStore, StoreError, plugin_tables
from lorekit.registry import REGISTRY, RegistrationError, StoreTables


@pytest.fixture
def registered() -> Iterator[None]:
    """``demo_`` tables, tied to runs by ``owner_run``, for the length of one test."""
    saved = REGISTRY.snapshot()
    REGISTRY.add_tables("demo_", "a test plugin's tables", run_column="owner_run")
    try:
        yield
    finally:
        REGISTRY.restore(saved)


def _plugin_file(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE demo_notes (owner_run TEXT, text TEXT)")
        conn.execute("CREATE INDEX demo_notes_by_run ON demo_notes(owner_run)")
        conn.execute("CREATE TABLE demo_meta (version INTEGER)")  # no run column: kept
        conn.execute("INSERT INTO demo_notes VALUES ('r1', 'a'), ('r2', 'b')")
        conn.execute("INSERT INTO demo_meta VALUES (1)")
    conn.close()


def test_a_file_of_registered_tables_only_becomes_a_store(tmp_path: Path, registered: None) -> None:
    path = tmp_path / "runs.sqlite3"
    _plugin_file(path)
    with RunStore(path) as store:
        rid = store.create_run("r1", env="e", agent="a", config={})
        assert store.get_run(rid) is not None
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM demo_notes").fetchone()[0] == 2


def test_the_same_file_is_foreign_without_the_registration(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    _plugin_file(path)
    assert not any(t.prefix == "demo_" for t in plugin_tables())
    with pytest.raises(StoreError, match="not a LoreKit run store"):
        RunStore(path)


def test_removing_a_run_removes_its_rows_of_registered_tables(
    tmp_path: Path, registered: None
) -> None:
    path = tmp_path / "runs.sqlite3"
    _plugin_file(path)
    with RunStore(path) as store:
        for rid in ("r1", "r2"):
            store.create_run(rid, env="e", agent="a", config={})
        with sqlite3.connect(path) as conn:  # a table of no plugin, with a run_id column
            conn.execute("CREATE TABLE extra (run_id TEXT, owner_run TEXT)")
            conn.execute("INSERT INTO extra VALUES ('r1', 'r2'), ('r2', 'r1')")
        conn.close()
        removed = store.delete_run("r1")
    assert removed == {"demo_notes": 1, "extra": 1, "runs": 1}
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT owner_run FROM demo_notes").fetchall() == [("r2",)]
        assert conn.execute("SELECT run_id FROM extra").fetchall() == [("r2",)]
        assert conn.execute("SELECT count(*) FROM demo_meta").fetchone()[0] == 1
    conn.close()


def test_the_longest_prefix_owns_a_table(registered: None) -> None:
    REGISTRY.add_tables("demo_deep_", "a nested owner", run_column="deep_run")
    owners = plugin_tables()
    first = next(t for t in owners if "demo_deep_x".startswith(t.prefix))
    assert first == StoreTables("demo_deep_", "deep_run")


@pytest.mark.parametrize(
    ("prefix", "column"),
    [("", "run_id"), ("bad prefix", "run_id"), ("ok_", "run-id"), ("ok_", "1st"), ("é_", "r")],
)
def test_a_bad_registration_is_refused(prefix: str, column: str) -> None:
    with pytest.raises(RegistrationError, match="letters, digits and _"):
        REGISTRY.add_tables(prefix, "bad", run_column=column)
