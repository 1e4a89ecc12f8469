"""The hostile corpus: every predicate is refused or stopped, and the process stays healthy.

The corpus runs in a child process with its address space capped at 1 GiB, so
a case that slipped past the limits would fail there (``MemoryError``, a
crash or the timeout) instead of taking the test run down with it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from predicate_hostile_corpus import CASES

CORPUS = Path(__file__).with_name("predicate_hostile_corpus.py")


@pytest.fixture(scope="module")
def report() -> dict[str, dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, str(CORPUS), "--memory-mb", "1024"],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    return {line.get("id", "summary"): line for line in lines}


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_hostile_case_is_refused_or_stopped(case: Any, report: dict[str, dict[str, Any]]) -> None:
    result = report[case.id]
    assert result["outcome"] == case.expect, result
    assert result.get("exc_type") != "MemoryError", result


def test_the_corpus_process_stays_small(report: dict[str, dict[str, Any]]) -> None:
    summary = report["summary"]
    assert summary["cases"] == len(CASES)
    assert summary["peak_rss_mb"] < 300, summary


def test_corpus_covers_the_reviewed_classes() -> None:
    ids = {case.id for case in CASES}
    reviewed = {
        "map-lambda-nesting", "self-applied-lambda", "repeated-pow-256",
        "nested-loops-long-string", "list-doubling", "format-spec-padding", "to-bytes",
        "str-replace", "sorted-key-lambda", "join-growth", "nested-not-900",
        "unhashable-default",
    }  # fmt: skip
    assert reviewed <= ids
