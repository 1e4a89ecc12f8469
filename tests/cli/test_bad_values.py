"""Values Python itself refuses, and damaged files, on every command that reads them:
each ends in exit 2 and one ``lorekit: error:`` line naming what to fix, never an
"internal error" (a traceback file) or a hang.

The classes: a number of 5,000 digits (past Python's limit on reading ints), a date
that is none (``2020-02-30``), a NUL byte in a config's path, JSON nested thousands
deep, a run store whose rows hold malformed JSON or values of the wrong type, saved
comparisons nested too deeply or mistyped, an experiment with thousands of rows
(the dry run is bounded and says so) and a row option of the wrong type.

Each case runs ``lorekit`` in a child process with a generous timeout, so a case
that hangs fails alone and nothing here depends on the machine's speed.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

LIMIT_S = 600
pytestmark = pytest.mark.xdist_group("bad-values")
"""Its cases play in child processes set up once per module: on one worker, once."""

BIG = "9" * 5000
DEEP = "[" * 5000 + "]" * 5000
REPO = Path(__file__).resolve().parents[2]
EXPERIMENT = REPO / "lorekit" / "experiments" / "adapt-table3-textcraft-depth.yaml"
SCRIPTED = (
    "roles:\n  default: {provider: scripted, model: echo, "
    'answers: ["Thought: look\\nAction: inventory"]}\n'
)


@dataclass(frozen=True)
class Case:
    id: str
    args: tuple[str, ...]  # {name} is a file of the fixture
    code: int = 2
    says: str = ""  # a part of the error line (or of stdout, for code 0)
    user_config: str | None = None  # the text of $XDG_CONFIG_HOME/lorekit/config.yaml


def c(id: str, *args: str, code: int = 2, says: str = "", user_config: str | None = None) -> Case:
    return Case(id, args, code, says, user_config)


STORE = ("--store", "{store}")
NOBODY = ("--model", "m", "--base-url", "http://127.0.0.1:9/v1")

DIGITS = [
    c("show: episode index", "show", "r1", BIG, *STORE, says="no episode"),
    c("run: --config", "run", "textcraft", "--agent", "random", "--config", "{big_config}",
      says="5,000 digits"),
    c("run: --seed", "run", "textcraft", "--agent", "random", "--seed", BIG, *STORE),
    c("run: --seed past the store's integers", "run", "textcraft", "--agent", "random",
      "--seed", "99999999999999999999", *STORE, says="--seed"),
    c("run: --agent-opt", "run", "textcraft", "--agent", "react", *NOBODY,
      "--agent-opt", f"max_turns={BIG}", says="--agent-opt max_turns"),
    c("reproduce run: experiment file", "reproduce", "run", "{big_experiment}", "--dry-run",
      says="5,000 digits"),
    c("graph run: spec", "graph", "run", "{big_spec}", *NOBODY, says="5,000 digits"),
    c("graph show: spec", "graph", "show", "{big_spec}", says="5,000 digits"),
    c("team run: --org", "team", "run", "crafter-party", "--simulate", "--org", "{big_org}"),
    c("laws learn: records", "laws", "learn", "{big_records}", "-o", "{tmp}/e.json",
      says="big_records.jsonl:1: not valid JSON (a number in the JSON has too many digits"),
    c("laws score: experience", "laws", "score", "{big_json}", says="too many digits"),
    c("laws rewards: experience", "laws", "rewards", "{big_json}", "-o", "{tmp}/p.json",
      "--from-laws"),
    c("laws train: --ppo-opt", "laws", "train", "--reward", "health",
      "--ppo-opt", f"n_steps={BIG}", says="--ppo-opt n_steps"),
    c("runs show: store column", "runs", "show", "r1", "--store", "{store_big_number}",
      says="runs.meta"),
    c("user config", "runs", "list", user_config=f"store: {BIG}\n", says="5,000 digits"),
]  # fmt: skip

DATES = [
    c("run: --config", "run", "textcraft", "--agent", "random", "--config", "{date_config}",
      says="2020-02-30"),
    c("reproduce run: experiment", "reproduce", "run", "{date_experiment}", "--dry-run",
      says="2020-02-30"),
    c("graph show: spec", "graph", "show", "{date_spec}", says="2020-02-30"),
    c("user config", "runs", "list", user_config="store: 2020-02-30\n", says="2020-02-30"),
]  # fmt: skip

NULS = [
    c("run: store in --config", "run", "textcraft", "--agent", "random", "--config",
      "{nul_store_config}", says="NUL"),
    c("run: cache path in --config", "run", "textcraft", "--agent", "random", "--config",
      "{nul_cache_config}", says="NUL"),
    c("user config", "runs", "list", user_config='store: "a\\0b"\n', says="store"),
]  # fmt: skip

REPRODUCE = [
    c("report: --reproduce nested deep", "report", "r1", *STORE, "-o", "{tmp}/r.html",
      "--reproduce", "{deep_comparison}", says="--reproduce"),
    c("report: --reproduce nested 500 deep", "report", "r1", *STORE, "-o", "{tmp}/r.html",
      "--reproduce", "{deepish_comparison}", says="--reproduce"),
    c("report: comparisons beside the store", "report", "r1", "--store",
      "{store_with_comparisons}", "-o", "{tmp}/beside.html", code=0),
    c("reproduce run: 200 rows, dry run", "reproduce", "run", "{wide_experiment}",
      "--dry-run", "-n", "2", code=0, says="measured the first 20 of 200 rows"),
    c("reproduce run: row option not an int", "reproduce", "run", "{typo_experiment}",
      "--dry-run", says="row 'react': options.max_turns: expected an integer or none, got 'many'"),
    c("reproduce run: row option text for an int", "reproduce", "run", "{text_experiment}",
      "--simulate", "-n", "1", *STORE, says="options.max_turns: expected an integer"),
]  # fmt: skip

DAMAGE = {
    "runs.config is malformed JSON": "UPDATE runs SET config = '{'",
    "runs.summary is nested 5,000 deep": f"UPDATE runs SET summary = '{DEEP}'",
    "runs.created_at is text": "UPDATE runs SET created_at = 'yesterday'",
    "episodes.info is a list": "UPDATE episodes SET info = '[1, 2]'",
    "episodes.info.notes is a number": """UPDATE episodes SET info = '{"notes": 5}'""",
    "episodes.reward is text": "UPDATE episodes SET reward = 'lots'",
    "steps.observation is a blob": "UPDATE steps SET observation = x'00ff'",
    "steps.info is malformed": "UPDATE steps SET info = 'x'",
    "llm_calls.messages is malformed": "UPDATE llm_calls SET messages = '{'",
    "llm_calls.prompt_tokens is text": "UPDATE llm_calls SET prompt_tokens = 'many'",
    "llm_calls.meta is a number": "UPDATE llm_calls SET meta = '5'",
}
READERS = {
    "runs list": ("runs", "list"),
    "runs show": ("runs", "show", "r1"),
    "runs show --json": ("runs", "show", "r1", "--json"),
    "runs export": ("runs", "export", "r1", "-o", "{tmp}/x.jsonl"),
    "show": ("show", "r1", "0"),
    "report": ("report", "r1", "-o", "{tmp}/r.html"),
    "view": ("view", "r1", "--port", "0"),
}
READS_WHAT = {  # which readers touch each table (runs list reads runs and episodes only)
    "runs": set(READERS),
    "episodes": set(READERS),
    "steps": {"runs export", "show", "report", "view"},
    "llm_calls": {"runs export", "show", "report", "view"},  # runs show sums them in SQL
}
STORE_CASES = [
    c(f"{reader}: {damage}", *args, "--store",
      "{damaged:" + damage + "}", says="is damaged")
    for damage in DAMAGE
    for reader, args in READERS.items()
    if reader in READS_WHAT[damage.split(".")[0]]
]  # fmt: skip


def _lorekit(*args: str) -> list[str]:
    return [sys.executable, "-m", "lorekit", *args]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    tmp = tmp_path_factory.mktemp("values")
    made = {"tmp": str(tmp)}

    def put(name: str, text: str) -> None:
        (tmp / name).write_text(text, encoding="utf-8")
        made[name.rsplit(".", 1)[0]] = str(tmp / name)

    experiment = EXPERIMENT.read_text(encoding="utf-8")
    put("big_config.yaml", f"roles:\n  default: {{model: m, timeout_s: {BIG}}}\n")
    put("big_experiment.yaml", experiment.replace("episodes: 200", f"episodes: {BIG}"))
    put("big_spec.yaml", f"nodes:\n  a: {{prompt: Say hi, max_retries: {BIG}}}\n")
    put("big_org.yaml", f"name: x\nsize: {BIG}\n")
    put("big_records.jsonl", f'{{"a": {BIG}}}\n')
    put("big_json.json", f'{{"a": {BIG}}}\n')
    put("date_config.yaml", "roles:\n  default: {model: m}\ncreated: 2020-02-30\n")
    put("date_experiment.yaml", experiment.replace("runnable: true", "created: 2020-02-30"))
    put("date_spec.yaml", "nodes:\n  a: {prompt: Say hi}\ncreated: 2020-02-30\n")
    local = "  default: {model: m, base_url: 'http://127.0.0.1:9/v1'}\n"
    put("nul_store_config.yaml", f'roles:\n{local}store: "a\\0b"\n')
    put("nul_cache_config.yaml", f'roles:\n{local}cache: {{mode: read-write, path: "c\\0d"}}\n')
    put("scripted.yaml", SCRIPTED)
    head = experiment[: experiment.index("rows:")]
    rows = [
        f"  - {{id: r{i}, label: R{i}, agent: react, options: {{max_turns: 2}}, "
        f"paper_models: {{executor: m}}, published: {{depth 2: 1.0}}}}"
        for i in range(200)
    ]
    put("wide_experiment.yaml", head + "rows:\n" + "\n".join(rows) + "\n")
    one = (
        "  - {{id: react, label: ReAct, agent: react, options: {{max_turns: {turns}}}, "
        "paper_models: {{executor: m}}, published: {{depth 2: 1.0}}}}\n"
    )  # one row of our own: the test does not hang on what a shipped row holds
    put("typo_experiment.yaml", head + "rows:\n" + one.format(turns="many"))
    put("text_experiment.yaml", head + "rows:\n" + one.format(turns="'80'"))
    put("deep_comparison.json", '{"experiment": "x", "runs": {}, "cells": ' + DEEP + "}")
    deepish = "[" * 500 + "]" * 500
    put("deepish_comparison.json", '{"experiment": "x", "runs": {}, "cells": ' + deepish + "}")

    store = tmp / "s.sqlite3"
    done = subprocess.run(
        _lorekit("run", "textcraft", "--agent", "react", "-n", "1", "--run-id", "r1",
                 "--config", made["scripted"], "--agent-opt", "max_turns=2",
                 "--store", str(store), "--no-progress"),
        capture_output=True, text=True, timeout=LIMIT_S, cwd=tmp, env=_env(tmp),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    made["store"] = str(store)
    for damage, sql in {
        **DAMAGE,
        "big number": f"UPDATE runs SET meta = '{{\"n\": {BIG}}}'",
    }.items():
        copy = tmp / f"damaged-{len(made)}.sqlite3"
        shutil.copy(store, copy)
        raw = sqlite3.connect(copy)
        raw.execute(sql)
        raw.commit()
        raw.close()
        made[f"damaged:{damage}" if damage != "big number" else "store_big_number"] = str(copy)
    beside = tmp / "beside"
    (beside / "reproduce").mkdir(parents=True)
    shutil.copy(store, beside / "s.sqlite3")
    (beside / "reproduce" / "deep.json").write_text(
        '{"experiment": "x", "runs": {"a": "r1"}, "cells": ' + DEEP + "}"
    )
    (beside / "reproduce" / "mistyped.json").write_text(
        '{"experiment": "x", "runs": {"a": "r1"}, "cells": [5, {"compatible": [1], '
        '"ours": 1, "low": "x", "high": {}, "published": "?"}]}'
    )
    made["store_with_comparisons"] = str(beside / "s.sqlite3")
    return made


def _env(tmp: Path) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if k not in ("LOREKIT_STORE", "LOREKIT_DEBUG")}
    keep.update(XDG_CONFIG_HOME=str(tmp / "config"), OPENAI_API_KEY="", COLUMNS="200")
    return keep


def _fill(args: tuple[str, ...], files: dict[str, str]) -> list[str]:
    out = []
    for arg in args:
        for key, value in sorted(files.items(), key=lambda kv: -len(kv[0])):
            arg = arg.replace("{" + key + "}", value)
        out.append(arg)
    return out


CHILD = """
import contextlib, io, json, os, sys
from lorekit.cli import main

for case in json.load(sys.stdin):
    os.chdir(case["cwd"])
    os.environ["XDG_CONFIG_HOME"] = case["xdg"]
    print("@@case " + json.dumps({"start": case["id"]}), flush=True)
    out, err, code = io.StringIO(), io.StringIO(), 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(case["argv"])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    done = {"id": case["id"], "code": code, "out": out.getvalue()[-4000:],
            "err": err.getvalue()[-4000:]}
    print("@@case " + json.dumps(done), flush=True)
"""


def _needs(case: Case) -> str | None:
    """The package a case needs that this machine lacks, if any."""
    import importlib.util

    wants: dict[tuple[str, ...], str] = {
        ("team", "run"): "crafter",
        ("laws", "train"): "stable_baselines3",
    }
    module = wants.get(case.args[:2])
    return module if module and importlib.util.find_spec(module) is None else None


def _run_batch(cases: list[Case], files: dict[str, str], root: Path) -> dict[str, Any]:
    """Every case in one child process (its own interpreter, a generous timeout), each
    case in a folder of its own; the results by case id (a case the child never
    finished, because it hung or crashed, reads as such)."""
    jobs = []
    for i, case in enumerate(cases):
        here = root / f"case-{i}"
        (here / "config" / "lorekit").mkdir(parents=True)
        if case.user_config is not None:
            (here / "config" / "lorekit" / "config.yaml").write_text(case.user_config)
        jobs.append({"id": case.id, "argv": _fill(case.args, files), "cwd": str(here),
                     "xdg": str(here / "config")})  # fmt: skip
    results: dict[str, Any] = {}
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHILD], input=json.dumps(jobs), capture_output=True,
            text=True, timeout=LIMIT_S * 3, env=_env(root),
        )  # fmt: skip
        output, tail = done.stdout, done.stderr[-2000:]
    except subprocess.TimeoutExpired as exc:
        output = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
        tail = "the child ran past its time limit"
    started = None
    for line in output.splitlines():
        if line.startswith("@@case "):
            record = json.loads(line[len("@@case ") :])
            if "start" in record:
                started = record["start"]
            else:
                results[record["id"]], started = record, None
    if started is not None:
        results[started] = {"hung_or_crashed": tail}
    return results


def _check(case: Case, result: dict[str, Any] | None) -> None:
    missing = _needs(case)
    if missing is not None:
        pytest.skip(f"needs the {missing} package (an optional extra)")
    assert result is not None, "the child never reached this case"
    assert "hung_or_crashed" not in result, result
    code, out, err = result["code"], result["out"], result["err"]
    assert code == case.code, (code, err[-2000:])
    assert "internal error" not in err and "Traceback" not in err, err[-2000:]
    if case.code == 0:
        assert case.says in out + err
        return
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lorekit: error: "), err[-2000:]
    assert case.says in lines[0], lines[0]


ALL = [("digits", DIGITS), ("date", DATES), ("nul", NULS), ("reproduce", REPRODUCE)]
VALUE_CASES = [replace(case, id=f"{kind}: {case.id}") for kind, cases in ALL for case in cases]


@pytest.fixture(scope="module")
def value_results(files: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Any:
    runnable = [case for case in VALUE_CASES if _needs(case) is None]
    return _run_batch(runnable, files, tmp_path_factory.mktemp("value-cases"))


@pytest.fixture(scope="module")
def store_results(files: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Any:
    return _run_batch(STORE_CASES, files, tmp_path_factory.mktemp("store-cases"))


@pytest.mark.parametrize("case", VALUE_CASES, ids=[case.id for case in VALUE_CASES])
def test_a_bad_value_is_one_line(case: Case, value_results: dict[str, Any]) -> None:
    _check(case, value_results.get(case.id))


@pytest.mark.parametrize("case", STORE_CASES, ids=[case.id for case in STORE_CASES])
def test_a_damaged_store_is_one_line_naming_the_row(
    case: Case, store_results: dict[str, Any]
) -> None:
    _check(case, store_results.get(case.id))


def test_a_damaged_store_names_table_column_and_row(store_results: dict[str, Any]) -> None:
    line = store_results["show: episodes.reward is text"]["err"]
    assert "episodes.reward of run 'r1' episode " in line and "'lots'" in line


def test_the_report_beside_a_store_draws_what_it_can(
    value_results: dict[str, Any], files: dict[str, str]
) -> None:
    beside = next(case for case in VALUE_CASES if "beside the store" in case.id)
    _check(beside, value_results.get(beside.id))
    page = (Path(files["tmp"]) / "beside.html").read_text(encoding="utf-8")
    assert "mistyped.json" in page and "deep.json" not in page


@pytest.mark.parametrize("damage", ["runs.config is malformed JSON", "episodes.reward is text"])
def test_a_damaged_run_can_still_be_removed(
    damage: str, files: dict[str, str], tmp_path: Path
) -> None:
    """The way out the message offers works: ``runs rm`` reads no damaged value."""
    store = tmp_path / "s.sqlite3"
    shutil.copy(files[f"damaged:{damage}"], store)
    done = subprocess.run(
        _lorekit("runs", "rm", "r1", "--yes", "--store", str(store)), capture_output=True,
        text=True, timeout=LIMIT_S, cwd=tmp_path, env=_env(tmp_path),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    raw = sqlite3.connect(store)
    assert raw.execute("SELECT count(*) FROM runs").fetchone()[0] == 0
    raw.close()
