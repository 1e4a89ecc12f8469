"""``lorekit reproduce`` reaches an experiment's builds only through the registry: the
agent registration that lists a variant in ``build_variants`` names the function
that plays it (``build``), and what that function returns becomes the options of
the rows that test with the build. A plugin's build runs exactly as AutoManual's."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from _cli import run_cli

from lorekit.eval.reproduce import ExperimentError, build_makers, load_experiment
from lorekit.eval.store import RunStore
from lorekit.registry import REGISTRY

EXPERIMENT = """\
paper: P
source: Table 1
title: builds through the registry
env: textcraft
split: test
metric: success_rate
aggregation: one run
runnable: true
columns: [{name: all}]
builds:
  - {id: short, variant: probe-build, split: test, per_type: 1}
  - {id: unused, variant: probe-build, split: test}
rows:
  - {id: plain, label: Plain, agent: oracle, published: {all: 100.0}}
  - {id: built, label: Built, agent: oracle, build: short, published: {all: 0.0}}
"""

CALLS: list[dict[str, Any]] = []


def probe_build(
    exp: Any,
    build: Any,
    *,
    run_id: str,
    resume_id: str,
    models: Any,
    harness: Any,
    env_opt: Sequence[str],
    simulate: bool,
) -> Mapping[str, Any]:
    """A build that plays nothing: the rows that test with it play one step only."""
    CALLS.append({"exp": exp.id, "build": build.id, "run_id": run_id, "resume_id": resume_id})
    return {"max_steps": 1}


@pytest.fixture
def probe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LOREKIT_STORE", raising=False)
    saved = REGISTRY.snapshot()
    REGISTRY.add_agent(
        "probe-builder", "lorekit.agents.simple:OracleAgent", "makes probe builds",
        needs_model=False, build_variants=("probe-build",), build=probe_build,
    )  # fmt: skip
    CALLS.clear()
    path = tmp_path / "probe.yaml"
    path.write_text(EXPERIMENT, encoding="utf-8")
    try:
        yield path
    finally:
        REGISTRY.restore(saved)


def test_a_registered_build_runs_before_the_rows_that_name_it(
    probe: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "s.sqlite3"
    args = ["reproduce", "run", str(probe), "-n", "2", "--store", str(store), "--run-id", "r"]
    code, _out, err = run_cli(args, capsys)
    assert code == 0, err
    # once, for the build a chosen row names, under the reproduction's run id
    assert CALLS == [
        {"exp": "probe", "build": "short", "run_id": "r.build-short", "resume_id": "r"}
    ]
    with RunStore(store) as db:
        plain = db.episodes("r.plain")
        built = db.episodes("r.built")
        assert all(e.success for e in plain) and len(plain) == 2
        assert not any(e.success for e in built)  # played with the build's max_steps=1
        assert all(len(db.steps("r.built", e.episode_key)) == 1 for e in built)
    saved = json.loads((tmp_path / "reproduce" / "probe-r.json").read_text(encoding="utf-8"))
    assert saved["builds"] == {"short": "r.build-short"}


def test_rows_without_a_build_call_no_maker(
    probe: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["reproduce", "run", str(probe), "-n", "1", "--rows", "plain", "--run-id", "r"]
    code, _out, err = run_cli([*args, "--store", str(tmp_path / "s.sqlite3")], capsys)
    assert code == 0, err
    assert CALLS == []


def test_the_variants_come_from_the_registrations(probe: Path, tmp_path: Path) -> None:
    makers = build_makers()
    assert makers["probe-build"].name == "probe-builder"
    assert {"automanual", "planner-lib"} <= set(makers)  # AutoManual's plugin's
    bad = tmp_path / "bad.yaml"
    bad.write_text(EXPERIMENT.replace("variant: probe-build,", "variant: magic,", 1))
    with pytest.raises(ExperimentError) as info:
        load_experiment(bad)
    message = str(info.value)
    assert message.startswith("bad.yaml: builds[0].variant: expected ")
    assert "probe-build" in message and "automanual" in message and "'magic'" in message


def test_without_the_registration_the_variant_is_unknown(tmp_path: Path) -> None:
    path = tmp_path / "probe.yaml"
    path.write_text(EXPERIMENT, encoding="utf-8")
    with pytest.raises(ExperimentError, match=r"builds\[0\]\.variant: expected .*'probe-build'"):
        load_experiment(path)
