"""A disk that fills under the run store ends the run with one line naming the store and
what to do, the run recorded as interrupted, and nothing lost: resuming plays exactly
the episodes that are missing.

The disk is filled for real in a child process, portably and without root: either
the file size limit (``RLIMIT_FSIZE``, as a quota does; SQLite then reports an I/O
error) or a page limit on the store (``max_page_count``: SQLite reports
``SQLITE_FULL``, exactly as on a full disk).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from lorekit.eval.store import RunStore

resource = pytest.importorskip("resource", reason="RLIMIT_FSIZE needs a POSIX system")

EPISODES = 40
CHILD = """
import resource, signal, sys
mode, limit, argv = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
if mode == "fsize":
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
else:
    from lorekit.eval import store

    setup = store.RunStore._setup

    def full_after(self, conn, timeout_s):
        setup(self, conn, timeout_s)
        if not self.readonly:
            pages = conn.execute("PRAGMA page_count").fetchone()[0]
            conn.execute(f"PRAGMA max_page_count = {pages + limit}")

    store.RunStore._setup = full_after
from lorekit.cli import main
main(argv)
"""


def _run(tmp_path: Path, store: Path, *limit: str) -> subprocess.CompletedProcess[str]:
    args = ["run", "textcraft", "--agent", "random", "-n", str(EPISODES), "--run-id", "f1",
            "--store", str(store), "--no-progress"]  # fmt: skip
    command = [sys.executable, "-c", CHILD, *limit, *args] if limit else [
        sys.executable, "-m", "lorekit", *args
    ]  # fmt: skip
    return subprocess.run(
        command, cwd=tmp_path, capture_output=True, text=True, timeout=600,
        env={**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "cfg")},
    )  # fmt: skip


@pytest.mark.parametrize(("mode", "limit"), [("fsize", 150_000), ("pages", 10)])
def test_a_full_disk_is_one_line_an_interrupted_run_and_a_resume(
    tmp_path: Path, mode: str, limit: int
) -> None:
    store = tmp_path / "s.sqlite3"
    full = _run(tmp_path, store, mode, str(limit))
    assert full.returncode == 1, full.stderr[-3000:]
    lines = full.stderr.strip().splitlines()
    assert len(lines) == 1, full.stderr[-3000:]
    line = lines[0]
    assert line.startswith("lorekit: error: cannot write the run store ")
    assert str(store.resolve()) in line and "free space" in line and "--run-id f1" in line
    with RunStore.open_readonly(store) as db:
        run = db.get_run("f1")
        assert run is not None and db.run_status("f1", run.status) == "interrupted"
        kept = {e.episode_key: e for e in db.episodes("f1")}
        assert len(kept) < EPISODES
    again = _run(tmp_path, store)
    assert again.returncode == 0, again.stderr[-3000:]
    with RunStore.open_readonly(store) as db:
        episodes = db.episodes("f1")
        assert len(episodes) == EPISODES == len({e.episode_key for e in episodes})
        assert all(kept[e.episode_key] == e for e in episodes if e.episode_key in kept)
        run = db.get_run("f1")
        assert run is not None and run.status == "finished"
