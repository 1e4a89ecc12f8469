"""Hostile inputs for every ``lorekit`` command: each ends in one clean line.

The table below has rows for every command and subcommand; the list of
commands comes from the lazy command table itself (walked recursively), so a
new command without a row fails :func:`test_every_command_has_rows`. Each row
is a command line with wrong types, negative, zero or huge numbers, missing,
binary, empty or deeply nested files, control characters, overlong strings or
unknown names. Each must exit 2 (or 1 for a run that failed) with exactly one
``lorekit: error:`` line on stderr, no traceback, no "internal error".

The rows run in child processes, a batch per child (an import each, not one
per row), each row in a fresh folder with the same environment. A row that
hangs is the child's to lose: the parent waits generously (``HANG_S`` without
a row finishing), then kills that child, names the row as hung and plays the
rest in a new one. No alarm interrupts whatever frame is running in the test
process, and no assertion depends on how fast the machine is.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import pytest

from lorekit.cli import main
from lorekit.cli.root import cli

pytestmark = pytest.mark.xdist_group("bad-inputs")
"""Its rows play in child processes set up once per module: on one worker, once."""

HANG_S = 300.0
"""A row that has not finished after this long, on however busy a machine, hangs."""
BATCHES = 4
LONG = "x" * 100_000
CTRL = "a\x1b]52;c;aGVsbG8=\x07b\x1b[2J"
NOBODY = "http://127.0.0.1:9/v1"  # a closed port on this machine: no key needed, no answer
MODEL = ["--model", "m", "--base-url", NOBODY]


@dataclass(frozen=True)
class Row:
    command: str  # the command path, e.g. "laws learn"
    what: str  # what is hostile about it, for the report
    args: tuple[str, ...]  # after the command path; {placeholders} are files (see `files`)


def r(command: str, what: str, *args: str) -> Row:
    return Row(command, what, args)


ROWS: list[Row] = [
    # -------------------------------------------------------------- agents
    r("agents list", "unexpected argument", "bogus"),
    # ------------------------------------------------------------ alfworld
    r("alfworld generate", "zero count", "--out", "g", "-n", "0"),
    r("alfworld generate", "huge count", "--out", "g", "-n", "1000000000"),
    r("alfworld generate", "count not a number", "--out", "g", "-n", "many"),
    r("alfworld generate", "unknown task type", "--out", "g", "--task-types", CTRL),
    r("alfworld generate", "out under a file", "--out", "{bin}/g", "-n", "1"),
    r("alfworld generate", "out is a file", "--out", "{bin}", "-n", "1"),
    r("alfworld fetch-data", "source has binary files", "--from", "{bin_dir}", "--dest", "d"),
    r("alfworld fetch-data", "source is empty", "--from", "{empty_dir}", "--dest", "d"),
    r("alfworld fetch-data", "dest under a file", "--from", "{empty_dir}", "--dest", "{bin}/d"),
    r("alfworld fetch-data", "URL not http", "--url", "file:///etc" + CTRL, "--dest", "d"),
    r("alfworld rebuild-release", "binary record", "--copy", "{empty_dir}", "--record", "{bin}"),
    r("alfworld rebuild-release", "empty record", "--copy", "{empty_dir}", "--record", "{empty}"),
    r("alfworld rebuild-release", "record a folder", "--copy", "{empty_dir}", "--record", "{tmp}"),
    r("alfworld data", "unexpected argument", "bogus"),
    # ---------------------------------------------------------- automanual
    r("automanual build", "unknown env", "nope" + CTRL, *MODEL),
    r("automanual build", "overlong run id", "alfworld", *MODEL, "--run-id", LONG),
    r("automanual build", "run id with /", "alfworld", *MODEL, "--run-id", "a/b"),
    r("automanual build", "run id with control chars", "alfworld", *MODEL, "--run-id", CTRL),
    r("automanual build", "zero per-type", "alfworld", *MODEL, "--per-type", "0"),
    r("automanual build", "binary config", "alfworld", "--config", "{bin}"),
    r("automanual build", "empty config", "alfworld", "--config", "{empty}"),
    r("automanual build", "nested config", "alfworld", "--config", "{nested_yaml}"),
    r("automanual build", "env opt without =", "alfworld", *MODEL, "--env-opt", "foo"),
    r("automanual import-published", "unknown env", "--env", "nope" + CTRL),
    r(
        "automanual import-published",
        "from binary files",
        "--env",
        "alfworld",
        "--from",
        "{bin_dir}",
    ),
    r(
        "automanual import-published",
        "from an empty folder",
        "--env",
        "miniwob",
        "--from",
        "{empty_dir}",
    ),
    r("automanual import-published", "from a binary file", "--env", "alfworld", "--from", "{bin}"),
    r("automanual import-published", "run id with /", "--env", "alfworld", "--run-id", "a/b"),
    r("automanual formulate", "overlong build id", LONG, *MODEL, "--store", "{store}"),
    r("automanual formulate", "build id with control chars", CTRL, *MODEL, "--store", "{store}"),
    r("automanual formulate", "binary store", "b1", *MODEL, "--store", "{bin}"),
    r("automanual formulate", "binary config", "b1", "--config", "{bin}", "--store", "{store}"),
    r("automanual rules", "unknown build", "nope", "--store", "{store}"),
    r("automanual rules", "overlong build id", LONG, "--store", "{store}"),
    r("automanual rules", "negative version", "b1", "--at", "-1", "--store", "{store}"),
    r("automanual rules", "store is a folder", "b1", "--store", "{tmp}"),
    r("automanual rules", "binary store", "b1", "--store", "{bin}"),
    # -------------------------------------------------------------- doctor
    r("doctor", "unknown isolation", "--isolation", "maybe"),
    # ---------------------------------------------------------------- envs
    r("envs list", "unexpected argument", "bogus"),
    # ------------------------------------------------------------- plugins
    r("plugins", "unexpected argument", "bogus"),
    # --------------------------------------------------------------- graph
    r("graph run", "binary spec", "{bin}", *MODEL),
    r("graph run", "empty spec", "{empty}", *MODEL),
    r("graph run", "nested spec", "{nested_yaml}", *MODEL),
    r("graph run", "missing spec", "{missing}", *MODEL),
    r("graph run", "zero request timeout", "{spec}", *MODEL, "--request-timeout", "0"),
    r("graph run", "--set without =", "{spec}", *MODEL, "--set", "goal"),
    r("graph run", "hook outside the spec's folder", "{outside_spec}", *MODEL),
    r("graph show", "binary spec", "{bin}"),
    r("graph show", "empty spec", "{empty}"),
    r("graph show", "nested spec", "{nested_yaml}"),
    r("graph show", "spec is a folder", "{tmp}"),
    r("graph show", "image under a file", "{spec}", "--image", "{bin}/g.png"),
    # ---------------------------------------------------------------- laws
    r("laws collect", "negative successes", "--successes", "-5", "-o", "{tmp}/r.jsonl"),
    r("laws collect", "negative failures", "--failures", "-1", "-o", "{tmp}/r.jsonl"),
    r("laws collect", "zero step budget", "--max-steps", "0", "-o", "{tmp}/r.jsonl"),
    r("laws collect", "huge successes", "--successes", "10" * 10, "-o", "{tmp}/r.jsonl"),
    r("laws collect", "steps not a number", "--max-steps", "many", "-o", "{tmp}/r.jsonl"),
    r("laws extract", "binary records", "{bin}", "-o", "{tmp}/x", *MODEL),
    r("laws extract", "empty records", "{empty}", "-o", "{tmp}/x", *MODEL),
    r("laws extract", "nested records", "{nested_jsonl}", "-o", "{tmp}/x", *MODEL),
    r("laws extract", "zero attempts", "{records}", "-o", "{tmp}/x", *MODEL, "--max-attempts", "0"),
    r("laws learn", "binary records", "{bin}", "-o", "{tmp}/e.json"),
    r("laws learn", "empty records", "{empty}", "-o", "{tmp}/e.json"),
    r("laws learn", "nested records", "{nested_jsonl}", "-o", "{tmp}/e.json"),
    r("laws learn", "records of the wrong shape", "{wrong_jsonl}", "-o", "{tmp}/e.json"),
    r("laws learn", "missing records", "{missing}", "-o", "{tmp}/e.json"),
    r("laws learn", "records is a folder", "{tmp}", "-o", "{tmp}/e.json"),
    r("laws learn", "huge records", "{huge}", "-o", "{tmp}/e.json"),
    r("laws rewards", "binary experience", "{bin}", "-o", "{tmp}/p.json", "--from-laws"),
    r("laws rewards", "nested experience", "{nested_json}", "-o", "{tmp}/p.json", "--from-laws"),
    r("laws rewards", "empty experience", "{empty}", "-o", "{tmp}/p.json", "--from-laws"),
    r("laws rewards", "experience a list", "{list_json}", "-o", "{tmp}/p.json", "--from-laws"),
    r("laws rewards", "binary records", "oracle", "-o", "{tmp}/p.json", "--records", "{bin}"),
    r(
        "laws rewards",
        "nested records",
        "oracle",
        "-o",
        "{tmp}/p.json",
        "--records",
        "{nested_jsonl}",
        "--from-laws",
    ),
    r(
        "laws rewards",
        "too many refinements",
        "oracle",
        "-o",
        "{tmp}/p.json",
        "--refinements",
        "99",
    ),
    r("laws score", "binary experience", "{bin}"),
    r("laws score", "nested experience", "{nested_json}"),
    r("laws score", "empty experience", "{empty}"),
    r("laws score", "experience a list", "{list_json}"),
    r("laws score", "nested records", "{experience}", "--records", "{nested_jsonl}"),
    r("laws score", "binary records", "{experience}", "--records", "{bin}"),
    r("laws scores", "overlong run id", LONG, "--store", "{store}"),
    r("laws scores", "run id with control chars", CTRL, "--store", "{store}"),
    r("laws scores", "binary store", "r1", "--store", "{bin}"),
    r("laws train", "zero steps", "--reward", "health", "--steps", "0"),
    r("laws train", "option without =", "--reward", "health", "--ppo-opt", "ent_coef"),
    r("laws train", "unknown reward", "--reward", "bogus"),
    # -------------------------------------------------------------- manual
    r("manual export", "unknown build", "nope", "-o", "{tmp}/m.md", "--store", "{store}"),
    r("manual export", "overlong build id", LONG, "-o", "{tmp}/m.md", "--store", "{store}"),
    r("manual export", "binary store", "b1", "-o", "{tmp}/m.md", "--store", "{bin}"),
    # -------------------------------------------------------------- models
    r("models check", "zero timeout", "-m", "m", "--base-url", NOBODY, "--timeout", "0"),
    r("models check", "huge attempts", "-m", "m", "--base-url", NOBODY, "--attempts", "999"),
    r("models check", "not a URL", "-m", "m", "--base-url", "not a url"),
    # -------------------------------------------------------------- report
    r("report", "unknown run", "nope", "--store", "{store}", "-o", "{tmp}/r.html"),
    r("report", "overlong run id", LONG, "--store", "{store}", "-o", "{tmp}/r.html"),
    r("report", "run id with control chars", CTRL, "--store", "{store}", "-o", "{tmp}/r.html"),
    r("report", "binary store", "r1", "--store", "{bin}", "-o", "{tmp}/r.html"),
    r("report", "negative max episodes", "r1", "--store", "{store}", "--max-episodes", "-1"),
    r("report", "output is a folder", "r1", "--store", "{store}", "-o", "{tmp}"),
    # ----------------------------------------------------------------- run
    r("run", "unknown agent", "textcraft", "--agent", "nope" + CTRL),
    r("run", "unknown env", "nope" + CTRL, "--agent", "random"),
    r(
        "run",
        "agent option not an int",
        "textcraft",
        "--agent",
        "react",
        *MODEL,
        "--agent-opt",
        "max_turns=many",
    ),
    r(
        "run",
        "agent option negative",
        "textcraft",
        "--agent",
        "react",
        *MODEL,
        "--agent-opt",
        "max_turns=-5",
    ),
    r(
        "run",
        "agent option a list",
        "textcraft",
        "--agent",
        "react",
        *MODEL,
        "--agent-opt",
        "max_turns=[1, 2]",
    ),
    r("run", "agent option unknown", "textcraft", "--agent", "random", "--agent-opt", "bogus=1"),
    r("run", "agent option without =", "textcraft", "--agent", "random", "--agent-opt", "x"),
    r(
        "run",
        "env option not an int",
        "textcraft",
        "--agent",
        "random",
        "--env-opt",
        "max_steps=many",
    ),
    r(
        "run",
        "overlong run id",
        "textcraft",
        "--agent",
        "random",
        "-n",
        "1",
        "--run-id",
        LONG,
        "--store",
        "new.sqlite3",
    ),
    r(
        "run",
        "run id with /",
        "textcraft",
        "--agent",
        "random",
        "-n",
        "1",
        "--run-id",
        "a/b",
        "--store",
        "new.sqlite3",
    ),
    r(
        "run",
        "run id with control chars",
        "textcraft",
        "--agent",
        "random",
        "-n",
        "1",
        "--run-id",
        CTRL,
        "--store",
        "new.sqlite3",
    ),
    r("run", "unknown task", "textcraft", "--agent", "random", "--tasks", "no-such-task"),
    r("run", "zero episodes", "textcraft", "--agent", "random", "-n", "0"),
    r("run", "zero concurrency", "textcraft", "--agent", "random", "-j", "0"),
    r("run", "infinite timeout", "textcraft", "--agent", "random", "--timeout", "inf"),
    r("run", "seed not a number", "textcraft", "--agent", "random", "--seed", "many"),
    r("run", "binary config", "textcraft", "--agent", "random", "--config", "{bin}"),
    r("run", "empty config", "textcraft", "--agent", "random", "--config", "{empty}"),
    r("run", "nested config", "textcraft", "--agent", "random", "--config", "{nested_yaml}"),
    r("run", "unknown split", "textcraft", "--agent", "random", "--split", "nope"),
    r("run", "store is a folder", "textcraft", "--agent", "random", "--store", "{tmp}"),
    r(
        "run",
        "negative initial failures",
        "textcraft",
        "--agent",
        "random",
        "--max-initial-failures",
        "-1",
    ),
    # ---------------------------------------------------------------- runs
    r("runs export", "unknown run", "nope", "--store", "{store}"),
    r("runs export", "overlong run id", LONG, "--store", "{store}"),
    r("runs export", "binary store", "r1", "--store", "{bin}"),
    r("runs export", "output is a folder", "r1", "--store", "{store}", "-o", "{tmp}"),
    r("runs list", "binary store", "--store", "{bin}"),
    r("runs list", "store is a folder", "--store", "{tmp}"),
    r("runs list", "missing store", "--store", "{missing}"),
    r("runs rm", "unknown run", "nope", "--store", "{store}", "--yes"),
    r("runs rm", "overlong run id", LONG, "--store", "{store}", "--yes"),
    r("runs rm", "binary store", "r1", "--store", "{bin}", "--yes"),
    r("runs show", "unknown run", "nope", "--store", "{store}"),
    r("runs show", "overlong run id", LONG, "--store", "{store}"),
    r("runs show", "run id with control chars", CTRL, "--store", "{store}"),
    r("runs show", "binary store", "r1", "--store", "{bin}", "--json"),
    # --------------------------------------------------------------- serve
    r("serve local", "port out of range", "--port", "70000"),
    r("serve local", "tiny context", "--n-ctx", "1"),
    r("serve local", "zero threads", "--threads", "0"),
    # ---------------------------------------------------------------- show
    r("show", "overlong run id", LONG, "--store", "{store}"),
    r("show", "unknown episode", "r1", "99999999999999999999", "--store", "{store}"),
    r("show", "episode with control chars", "r1", CTRL, "--store", "{store}"),
    r("show", "binary store", "r1", "--store", "{bin}"),
    # ---------------------------------------------------------------- team
    r("team run", "negative leaves", "crafter-party", "--simulate", "--leaves", "-1"),
    r("team run", "zero size", "crafter-party", "--simulate", "--org", "chain", "--size", "0"),
    r("team run", "huge size", "crafter-party", "--simulate", "--org", "graph", "--size", "10" * 5),
    r("team run", "negative max time", "crafter-party", "--simulate", "--max-time", "-1"),
    r("team run", "nan cutoff", "crafter-party", "--simulate", "--cutoff", "nan"),
    r("team run", "unknown org", "crafter-party", "--simulate", "--org", "nope" + CTRL),
    r(
        "team run",
        "overlong run id",
        "crafter-party",
        "--simulate",
        "--run-id",
        LONG,
        "--store",
        "new.sqlite3",
    ),
    r("team run", "unknown env", "nope", "--simulate"),
    # ----------------------------------------------------------- textcraft
    r("textcraft fetch-data", "source has binary files", "--from", "{bin_dir}", "--dest", "d"),
    r("textcraft fetch-data", "source is empty", "--from", "{empty_dir}", "--dest", "d"),
    r("textcraft fetch-data", "dest under a file", "--from", "{empty_dir}", "--dest", "{bin}/d"),
    r("textcraft fetch-data", "URL not http", "--url", "file:///etc" + CTRL, "--dest", "d"),
    # ---------------------------------------------------------------- reproduce
    r("reproduce list", "stray argument", "extra" + CTRL),
    r("reproduce replay", "missing file", "{missing}"),
    r("reproduce replay", "binary file", "{bin}"),
    r("reproduce replay", "nested JSON file", "{nested_json}"),
    r("reproduce replay", "a JSON list, not a record", "{list_json}"),
    r("reproduce replay", "unknown format", "{list_json}", "--format", "nope" + CTRL),
    r("reproduce replay", "zero episodes", "{list_json}", "-n", "0"),
    r("reproduce run", "unknown experiment", "no-such-table" + CTRL, "--dry-run"),
    r("reproduce run", "binary experiment file", "{bin}", "--dry-run"),
    r("reproduce run", "nested experiment file", "{nested_yaml}", "--dry-run"),
    r("reproduce run", "empty experiment file", "{empty}", "--dry-run"),
    r(
        "reproduce run",
        "unknown row",
        "adapt-table3-textcraft-depth",
        "--rows",
        "nope",
        "--dry-run",
    ),
    r("reproduce run", "zero episodes", "adapt-table3-textcraft-depth", "-n", "0", "--dry-run"),
    r("reproduce run", "overlong run id", "adapt-table3-textcraft-depth", "--run-id", LONG),
    r("reproduce run", "run id with /", "adapt-table3-textcraft-depth", "--run-id", "a/b"),
    r("reproduce run", "env-opt without =", "adapt-table3-textcraft-depth", "--env-opt", "x"),
    # ---------------------------------------------------------------- view
    r("view", "unknown run", "nope", "--store", "{store}"),
    r("view", "overlong run id", LONG, "--store", "{store}"),
    r("view", "port out of range", "r1", "--store", "{store}", "--port", "70000"),
    r("view", "binary store", "r1", "--store", "{bin}"),
]


def all_commands() -> list[str]:
    """Every leaf command's path, walked from the lazy command table."""
    found: list[str] = []

    def walk(cmd: click.Command, path: list[str]) -> None:
        if isinstance(cmd, click.Group):
            ctx = click.Context(cmd)
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                assert sub is not None, name
                walk(sub, [*path, name])
        else:
            found.append(" ".join(path))

    walk(cli, [])
    return found


def test_every_command_has_rows() -> None:
    have = {row.command for row in ROWS}
    missing = [c for c in all_commands() if c not in have]
    assert not missing, f"commands without a bad-input row: {missing}"


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The hostile files, and a store holding one small run ``r1``."""
    return make_files(tmp_path_factory.mktemp("bad"))


def make_files(tmp: Path) -> dict[str, str]:
    """The files the rows name as ``{placeholders}``, made in ``tmp``."""
    made = {"tmp": str(tmp), "missing": str(tmp / "no-such-file")}

    def put(name: str, data: bytes) -> None:
        (tmp / name).write_bytes(data)
        made[name.split(".")[0]] = str(tmp / name)

    put("bin.dat", bytes(range(256)) * 4)
    put("empty.txt", b"")
    put("nested_json.json", b"[" * 100_000 + b"]" * 100_000)
    put("nested_jsonl.jsonl", b"[" * 100_000 + b"]" * 100_000 + b"\n")
    put("nested_yaml.yaml", b"a: " + b"[" * 100_000 + b"]" * 100_000 + b"\n")
    put("list_json.json", b"[1, 2, 3]\n")
    put("wrong_jsonl.jsonl", b'{"a": 1}\n[1, 2]\n')
    from lorekit.laws.experience import oracle_experience

    oracle_experience().save(tmp / "experience.json")
    made["experience"] = str(tmp / "experience.json")
    put("records.jsonl", b'{"a": 1}\n')
    (tmp / "bin_dir").mkdir()
    for name in ("recipes", "tags"):
        (tmp / "bin_dir" / name).mkdir()
        (tmp / "bin_dir" / name / "x.json").write_bytes(bytes(range(256)))
    (tmp / "empty_dir").mkdir()
    made["bin_dir"], made["empty_dir"] = str(tmp / "bin_dir"), str(tmp / "empty_dir")
    huge = tmp / "huge.jsonl"
    with huge.open("wb") as fh:
        fh.truncate(3 * 1024**3)  # sparse: 3 GiB of NUL bytes, no disk
    made["huge"] = str(huge)
    spec_dir = tmp / "spec"
    spec_dir.mkdir()
    (spec_dir / "g.yaml").write_text("nodes:\n  a: {prompt: Say hi}\n")
    made["spec"] = str(spec_dir / "g.yaml")
    (tmp / "elsewhere.py").write_text("def hook(ctx, out):\n    return out\n")
    (spec_dir / "out.yaml").write_text(
        "nodes:\n  a: {prompt: Say hi, after_query: ../elsewhere.py:hook}\n"
    )
    made["outside_spec"] = str(spec_dir / "out.yaml")
    store = tmp / "s.sqlite3"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            main(["run", "textcraft", "--agent", "random", "-n", "1", "--run-id", "r1",
                  "--store", str(store), "--no-progress"])  # fmt: skip
        except SystemExit as exc:
            assert not exc.code, "could not record the run the table reads"
    made["store"] = str(store)
    return made


def fill(args: tuple[str, ...], files: dict[str, str]) -> list[str]:
    out = []
    for arg in args:
        for key, value in files.items():
            arg = arg.replace("{" + key + "}", value)
        out.append(arg)
    return out


CHILD = """
import contextlib, io, json, os, sys
from lorekit.cli import main

root = sys.argv[1]
for line in sys.stdin:
    index, argv = json.loads(line)
    here = os.path.join(root, str(index))
    os.makedirs(here, exist_ok=True)
    os.chdir(here)
    out, err, code = io.StringIO(), io.StringIO(), 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException as exc:  # noqa: BLE001 - reported to the parent as a failure
            code = "raised " + type(exc).__name__ + ": " + str(exc)[:500]
    print(json.dumps([index, code, out.getvalue()[-4000:], err.getvalue()[-4000:]]), flush=True)
"""


def _child_env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()}
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "LOREKIT_STORE", "LOREKIT_DEBUG"):
        env.pop(var, None)
    env["XDG_CONFIG_HOME"] = str(tmp / "config")
    env["COLUMNS"] = "100"
    return env


def _play(batch: list[tuple[int, list[str]]], tmp: Path) -> dict[int, Any]:
    """Each row's (code, out, err), or ``"hung"``: the rows of one batch in one child,
    a new child after a row that hangs."""
    results: dict[int, Any] = {}
    pending = list(batch)
    while pending:
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(tmp)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=_child_env(tmp),
        )
        assert child.stdin is not None and child.stdout is not None
        child.stdin.write("".join(json.dumps([i, argv]) + "\n" for i, argv in pending))
        child.stdin.close()
        done = 0
        try:
            for _ in pending:
                line = _read_line(child, HANG_S)
                if line is None:
                    break
                index, code, out, err = json.loads(line)
                results[index] = (code, out, err)
                done += 1
        finally:
            if child.poll() is None:
                child.kill()
            child.wait()
        if done < len(pending):  # the next row hung (or killed the child): go on without it
            results[pending[done][0]] = "hung"
            done += 1
        pending = pending[done:]
    return results


def _read_line(child: subprocess.Popen[str], seconds: float) -> str | None:
    """The child's next line, or None if it says nothing for ``seconds`` or ends."""
    import selectors

    assert child.stdout is not None
    with selectors.DefaultSelector() as sel:
        sel.register(child.stdout, selectors.EVENT_READ)
        if not sel.select(timeout=seconds):
            return None
    line = child.stdout.readline()
    return line or None


@pytest.fixture(scope="module")
def played(files: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> dict[int, Any]:
    """Every row's result, played in ``BATCHES`` child processes one after another."""
    tmp = tmp_path_factory.mktemp("rows")
    rows = [(i, [*row.command.split(), *fill(row.args, files)]) for i, row in enumerate(ROWS)]
    results: dict[int, Any] = {}
    for start in range(BATCHES):
        results.update(_play(rows[start::BATCHES], tmp))
    return results


@pytest.mark.parametrize(
    "index", range(len(ROWS)), ids=[f"{row.command}: {row.what}".replace(" ", "_") for row in ROWS]
)
def test_bad_input_ends_in_one_clean_line(index: int, played: dict[int, Any]) -> None:
    result = played[index]
    assert result != "hung", f"still running after {HANG_S} s: {ROWS[index]}"
    code, out, err = result
    assert "Traceback" not in err and "internal error" not in err, err
    assert code in (1, 2), (code, err[-2000:])
    lines = err.strip().splitlines()
    assert len(lines) == 1, err[-2000:]
    assert lines[0].startswith("lorekit: error: "), lines[0]
    assert len(lines[0]) < 2_000
    for raw in ("\x1b", "\x07"):
        assert raw not in err and raw not in out, "a control character reached the terminal"
