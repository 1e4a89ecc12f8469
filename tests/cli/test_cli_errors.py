"""Every user mistake ends with one line on stderr and exit code 2 (fix the
command) or 1 (the run failed), through the real entry point: ``main`` as the
``lorekit`` script calls it, or ``python -m lorekit`` in a subprocess."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from _cli import run_cli

from lorekit.eval.store import RunStore
from lorekit.llm.testing import Fault, OpenAICompatServer
from lorekit.registry import Registry

EXAMPLE = str(Path(__file__).resolve().parents[2] / "examples" / "planner_gate.yaml")
QUIET = ["--no-progress"]


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No key, no default URL or store from the developer's shell; cache files in tmp."""
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "LOREKIT_STORE", "LOREKIT_DEBUG", "MY_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    yield


cli = run_cli


def one_line(err: str, code: int, expected: int, *needles: str) -> str:
    """Assert the exit code and a single ``lorekit: error:`` line holding ``needles``."""
    assert code == expected, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    line = lines[0]
    assert line.startswith("lorekit: error: "), line
    for needle in needles:
        assert needle in line, line
    return line


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def write_config(path: Path, roles: dict[str, dict[str, object]], **extra: object) -> str:
    path.write_text(json.dumps({"roles": roles, **extra}))
    return str(path)


def store_args(tmp_path: Path) -> list[str]:
    return ["--store", str(tmp_path / "runs.sqlite3")]


# ------------------------------------------------------------------ API keys
def test_missing_api_key_for_openai(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    args = ["run", "textcraft", "-a", "react", "-n", "2", "--model", "gpt-4o-mini"]
    code, _, err = cli([*args, *store_args(tmp_path), *QUIET], capsys)
    one_line(err, code, 2, "needs an API key", "OPENAI_API_KEY", "api.openai.com")
    assert not (tmp_path / "runs.sqlite3").exists(), "nothing may start before the check"


def test_missing_api_key_for_a_remote_server_names_the_configured_variable(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cfg = write_config(
        tmp_path / "run.yaml",
        {"default": {"model": "m", "base_url": "http://10.1.2.3:8000/v1", "api_key_env": "MY_KEY"}},
    )
    code, _, err = cli(["run", "textcraft", "-a", "react", "-c", cfg, *QUIET], capsys)
    one_line(err, code, 2, "10.1.2.3", "MY_KEY", f"roles.default.api_key_env in {cfg}")


def test_models_check_without_a_key(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["models", "check", "-m", "m", "--base-url", "https://example.com/v1"]
    code, _, err = cli([*args, "--api-key-env", "MY_KEY"], capsys)
    one_line(err, code, 2, "needs an API key", "MY_KEY", "--api-key-env")


# ---------------------------------------------------- unreachable, auth, errors
def test_unreachable_server_stops_after_the_first_episodes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    cfg = write_config(
        tmp_path / "run.yaml", {"default": {"model": "m", "base_url": url, "max_attempts": 1}}
    )
    args = ["run", "textcraft", "-a", "react", "-c", cfg, "-n", "50", "-j", "1"]
    args += ["--run-id", "r", "--max-initial-failures", "3"]
    code, out, err = cli([*args, *store_args(tmp_path), *QUIET], capsys)
    one_line(err, code, 1, "stopped after the first 3 episodes", url, "--run-id r", "--base-url")
    assert "status=interrupted" in out  # the summary of what was played is still shown
    with RunStore(tmp_path / "runs.sqlite3") as db:
        assert len(db.episodes("r")) == 3


def test_auth_failure_stops_early_after_one_request_per_episode(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    with OpenAICompatServer(["never used"]) as srv:
        srv.inject(Fault.status(401, "invalid api key"), times=None)
        cfg = write_config(
            tmp_path / "run.yaml",
            {"default": {"model": "m", "base_url": srv.base_url, "max_attempts": 3}},
        )
        args = ["run", "textcraft", "-a", "react", "-c", cfg, "-n", "40", "-j", "1"]
        code, _, err = cli([*args, *store_args(tmp_path), *QUIET], capsys)
        assert srv.request_count == 3  # 401 is not retried, and episode 4 never starts
    one_line(err, code, 1, "stopped after the first 3 episodes", "401", "invalid api key")


def test_without_early_stop_a_run_with_errors_exits_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    cfg = write_config(
        tmp_path / "run.yaml", {"default": {"model": "m", "base_url": url, "max_attempts": 1}}
    )
    args = ["run", "textcraft", "-a", "react", "-c", cfg, "-n", "4", "--run-id", "r"]
    code, out, err = cli(
        [*args, "--max-initial-failures", "0", *store_args(tmp_path), *QUIET], capsys
    )
    one_line(err, code, 1, "4 of 4 episodes ended in an error", "lorekit show r", "--retry-errors")
    assert "status=finished" in out


def test_episode_errors_that_are_not_model_errors_do_not_stop_the_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    slow = {"provider": "scripted", "model": "s", "latency_s": 1.0, "answers": ["Action: look"]}
    cfg = write_config(tmp_path / "run.yaml", {"default": slow})
    args = ["run", "textcraft", "-a", "react", "-c", cfg, "-n", "4", "--timeout", "0.05"]
    code, _, err = cli([*args, *store_args(tmp_path), *QUIET], capsys)
    one_line(err, code, 1, "4 of 4 episodes ended in an error", "timed out")


def test_unknown_model_stops_early_with_a_hint(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    with OpenAICompatServer(["never used"]) as srv:
        srv.inject(Fault.status(404, "model 'nope' not found"), times=None)
        args = ["run", "textcraft", "-a", "react", "-m", "nope", "--base-url", srv.base_url]
        code, _, err = cli([*args, "-n", "10", "-j", "2", *store_args(tmp_path), *QUIET], capsys)
    one_line(err, code, 1, "stopped after the first 3", "404", "check --model")


def test_the_same_agent_error_in_every_early_episode_stops_the_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    args = ["run", "textcraft", "-a", "react", "-m", "echo", "-n", "20", "-j", "1"]
    # a value of the right type that every model request refuses (a wrong type,
    # temperature=abc, is now refused before the run: test_bad_inputs)
    args += ["--agent-opt", "max_tokens=0", "--run-id", "r"]
    code, _, err = cli([*args, *store_args(tmp_path), *QUIET], capsys)
    one_line(err, code, 1, "stopped after the first 3 episodes", "max_tokens")
    with RunStore(tmp_path / "runs.sqlite3") as db:
        assert len(db.episodes("r")) == 3


def test_models_check_without_a_model_name(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["models", "check", "-m", "", "--base-url", "http://127.0.0.1:9/v1"]
    code, _, err = cli(args, capsys)
    one_line(err, code, 2, "model name")


def test_a_multi_line_server_error_becomes_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with OpenAICompatServer(["x"]) as srv:
        srv.inject(Fault.server_error(500, "<html>\n<p>upstream down</p>\n</html>"), times=None)
        args = ["models", "check", "-m", "m", "--base-url", srv.base_url, "--attempts", "1"]
        code, _, err = cli(args, capsys)
    one_line(err, code, 1, "<p>upstream down</p> </html>", "HTTP 500", "check its log")


def test_models_check_unreachable(capsys: pytest.CaptureFixture[str]) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    code, _, err = cli(["models", "check", "-m", "m", "--base-url", url, "--attempts", "1"], capsys)
    one_line(err, code, 1, url, "connection")


def test_a_clean_run_exits_0(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    args = ["run", "textcraft", "-a", "oracle", "-n", "2", *store_args(tmp_path), *QUIET]
    code, out, err = cli(args, capsys)
    assert code == 0 and err == "" and "100.0%" in out


# --------------------------------------------------------------------- roles
def test_unknown_role_lists_the_agents_roles(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    args = ["run", "textcraft", "-a", "adapt", "-m", "echo", "--role", "exector=m2"]
    code, _, err = cli([*args, *store_args(tmp_path), *QUIET], capsys)
    one_line(
        err, code, 2, "unknown role 'exector' for agent adapt", "executor, planner", "'executor'?"
    )


def test_unknown_role_in_a_config_file_names_the_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cfg = write_config(
        tmp_path / "run.yaml",
        {"default": {"provider": "scripted", "model": "echo"}, "planer": {"model": "x"}},
    )
    args = ["run", "textcraft", "-a", "react", "-c", cfg, "-n", "1", "--agent-opt", "max_turns=1"]
    code, _, err = cli([*args, *store_args(tmp_path), *QUIET], capsys)
    # A config file may serve several agents: a role this one never asks for is a warning.
    assert code == 0, err
    assert f"warning: {cfg}: roles.planer" in err and "agent react" in err and "executor" in err


def test_roles_the_agent_uses_are_accepted(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    args = ["run", "textcraft", "-a", "react", "-m", "echo", "--role", "executor=echo", "-n", "1"]
    args += ["--agent-opt", "max_turns=1", "--role", "default=echo"]
    code, _, err = cli([*args, *store_args(tmp_path), *QUIET], capsys)
    assert code == 0, err


def test_a_role_for_an_agent_without_a_model(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    args = ["run", "textcraft", "-a", "oracle", "--role", "planner=m"]
    code, _, err = cli([*args, *store_args(tmp_path), *QUIET], capsys)
    one_line(err, code, 2, "agent oracle uses no model", "'planner'")


def test_unknown_role_for_a_graph(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["graph", "run", EXAMPLE, "-m", "echo", "--role", "plannr=x"]
    args += ["--set", "goal=g", "--set", "observation=o"]
    code, _, err = cli(args, capsys)
    one_line(err, code, 2, "unknown role 'plannr' for graph planner_gate", "'default'")


# --------------------------------------------------------------------- paths
def test_unwritable_store(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    store = blocker / "sub" / "runs.sqlite3"
    args = ["run", "textcraft", "-a", "oracle", "-n", "1", "--store", str(store), *QUIET]
    code, _, err = cli(args, capsys)
    one_line(err, code, 2, "cannot write the run store", str(store), "--store")


def test_store_from_the_environment_says_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOREKIT_STORE", str(tmp_path))
    code, _, err = cli(["run", "textcraft", "-a", "oracle", "-n", "1", *QUIET], capsys)
    one_line(err, code, 2, "is a directory", "$LOREKIT_STORE")


def test_unwritable_cache(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    cfg = write_config(
        tmp_path / "run.yaml",
        {"default": {"provider": "scripted", "model": "echo"}},
        cache={"mode": "read-write", "path": str(blocker / "cache.sqlite3")},
    )
    args = ["run", "textcraft", "-a", "react", "-c", cfg, *store_args(tmp_path), *QUIET]
    code, _, err = cli(args, capsys)
    one_line(err, code, 2, "cannot write the model cache", f"cache.path in {cfg}", "--cache off")


def test_replay_without_a_recorded_cache(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    args = ["run", "textcraft", "-a", "react", "-m", "echo", "--cache", "replay"]
    code, _, err = cli([*args, *store_args(tmp_path), *QUIET], capsys)
    one_line(err, code, 2, "replay needs a recorded cache", "--cache read-write")


def test_cache_that_is_not_a_database(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "cache.sqlite3").write_text("not SQLite")
    cfg = write_config(
        tmp_path / "run.yaml",
        {"default": {"provider": "scripted", "model": "echo"}},
        cache={"mode": "read-write", "path": str(tmp_path / "cache.sqlite3")},
    )
    args = ["run", "textcraft", "-a", "react", "-c", cfg, *store_args(tmp_path), *QUIET]
    code, _, err = cli(args, capsys)
    one_line(err, code, 2, "as the model cache", "not a database", f"cache.path in {cfg}")


def test_graph_image_into_a_missing_folder(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    image = tmp_path / "missing" / "g.png"
    code, out, err = cli(["graph", "show", EXAMPLE, "--image", str(image)], capsys)
    one_line(err, code, 2, "--image", str(image))
    assert out == ""


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["runs", "list", "--store", "{file}"], ["{file} as a run store", "not a database"]),
        (["runs", "list", "--store", "{tmp}"], ["is a folder", "--store"]),
        (["show", "r", "0", "--store", "{tmp}/none.sqlite3"], ["no run store", "--store"]),
        (["runs", "export", "r", "--store", "{store}", "-o", "{file}/x"], ["--output", "{file}"]),
        (["run", "textcraft", "-a", "oracle", "-c", "{file}"], ["{file}", "expected a mapping"]),
        (["run", "textcraft", "-a", "oracle", "-c", "{binary}"], ["{binary}", "UTF-8"]),
        (["run", "textcraft", "-a", "oracle", "-c", "{bad_yaml}"], ["{bad_yaml}:2", "YAML"]),
    ],
)
def test_bad_files(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str], needles: list[str]
) -> None:
    names = {
        "tmp": str(tmp_path),
        "file": str(tmp_path / "plain.txt"),
        "binary": str(tmp_path / "binary.yaml"),
        "bad_yaml": str(tmp_path / "bad.yaml"),
        "store": str(tmp_path / "runs.sqlite3"),
    }
    Path(names["file"]).write_text("just text")
    Path(names["binary"]).write_bytes(b"\xff\xfe\x00roles")
    Path(names["bad_yaml"]).write_text("roles: [a\n  b: c")
    with RunStore(names["store"]) as db:
        db.create_run("r", env="textcraft", agent="oracle", config={})
    code, _, err = cli([a.format(**names) for a in args], capsys)
    one_line(err, code, 2, *(n.format(**names) for n in needles))


# ------------------------------------------------------------- other arguments
@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["run", "nosuch", "-a", "oracle"], ["unknown env 'nosuch'", "textcraft"]),
        (["run", "textcraft", "-a", "nosuch"], ["unknown agent 'nosuch'", "react"]),
        (["run", "textcraft", "-a", "react"], ["needs a model", "--model"]),
        (["run", "textcraft", "-a", "oracle", "--split", "x"], ["unknown split 'x'"]),
        (["run", "textcraft", "-a", "oracle", "--env-opt", "nope=1"], ["env 'textcraft'", "nope"]),
        (["run", "textcraft", "-a", "oracle", "--env-opt", "source=["], ["source"]),
        (
            ["run", "textcraft", "-a", "react", "-m", "echo", "--agent-opt", "max_turns=0"],
            ["max_turns"],
        ),
        (["run", "textcraft", "-a", "oracle", "--timeout", "nan"], ["--timeout"]),
        (
            ["run", "textcraft", "-a", "react", "-m", "echo", "--agent-opt", "prompts=nope"],
            ["agent 'react' with --agent-opt prompts=nope", "nope.yaml"],
        ),
        (["run", "textcraft", "-a", "oracle", "--max-initial-failures", "-1"], ["--max-initial"]),
        (["run", "textcraft", "-a", "react", "-m", "m", "--base-url", "localhost:8000"], ["http"]),
    ],
)
def test_bad_arguments(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str], needles: list[str]
) -> None:
    code, _, err = cli([*args, *store_args(tmp_path), *QUIET], capsys)
    one_line(err, code, 2, *needles)


# ------------------------------------------------------- missing extras, bugs
def run_module(launcher: str, args: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    """Run the CLI in a fresh interpreter after ``launcher`` (Python code) ran."""
    code = f"{launcher}\nimport sys\nfrom lorekit.cli import main\nmain(sys.argv[1:])\n"
    base = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "LOREKIT_DEBUG")}
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**base, **env},
    )


WITHOUT_CRAFTER = """
import importlib.abc, sys
class NoCrafter(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "crafter":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, NoCrafter())
"""


def test_missing_extra_names_the_install_command(tmp_path: Path) -> None:
    args = ["run", "crafter", "-a", "random", "-n", "1", *store_args(tmp_path), *QUIET]
    proc = run_module(WITHOUT_CRAFTER, args)
    one_line(
        proc.stderr,
        proc.returncode,
        2,
        "the 'crafter' environment needs the crafter extra",
        "pip install 'lorekit[crafter]'",
    )


def test_team_run_without_crafter_names_the_install_command(tmp_path: Path) -> None:
    args = ["team", "run", "crafter-party", "--task", "collect-20-wood/seed-0", "--simulate",
            *store_args(tmp_path)]  # fmt: skip
    proc = run_module(WITHOUT_CRAFTER, args)
    one_line(
        proc.stderr,
        proc.returncode,
        2,
        "needs the crafter extra",
        "pip install 'lorekit[crafter]'",
    )


def test_missing_package_of_an_agent_plugin(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, registry: Registry
) -> None:
    from lorekit import agents

    def factory() -> agents.Agent:
        import lorekit_test_absent_package  # type: ignore[import-not-found]  # noqa: F401

        raise AssertionError("unreachable")

    registry.add_agent("needs-x", factory, "test", needs_model=False, extra="x")
    args = ["run", "textcraft", "-a", "needs-x", *store_args(tmp_path), *QUIET]
    code, _, err = cli(args, capsys)
    one_line(err, code, 2, "the 'needs-x' agent needs the x extra", "pip install 'lorekit[x]'")


def test_envs_list_shows_which_extra_an_env_needs(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(["envs", "list"], capsys)
    assert code == 0
    rows = {line.split()[1]: line for line in out.splitlines() if line.startswith("│")}
    assert "crafter extra" in rows["crafter"] and "extra" not in rows["textcraft"]


BUG = """
import lorekit.envs
def broken():
    raise RuntimeError("simulated bug")
lorekit.envs.list_envs = broken
"""


def test_an_internal_error_is_one_line_with_the_traceback_saved(tmp_path: Path) -> None:
    proc = run_module(BUG, ["envs", "list"], TMPDIR=str(tmp_path))
    line = one_line(proc.stderr, proc.returncode, 1, "internal error", "simulated bug")
    saved = [p for p in tmp_path.iterdir() if p.name.startswith("lorekit-traceback-")]
    assert len(saved) == 1 and str(saved[0]) in line
    assert "Traceback" in saved[0].read_text() and "in broken" in saved[0].read_text()
    debug = run_module(BUG, ["envs", "list"], LOREKIT_DEBUG="1", TMPDIR=str(tmp_path))
    assert debug.returncode == 1 and "Traceback" in debug.stderr
    assert "Traceback" in run_module(BUG, ["--debug", "envs", "list"]).stderr


def test_python_dash_m_lorekit() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "lorekit", "run", "textcraft"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    one_line(proc.stderr, proc.returncode, 2, "Missing option '--agent'")


INTERRUPT = """
import lorekit.eval.runner
async def interrupted(*args, **kwargs):
    raise KeyboardInterrupt
lorekit.eval.runner.run_eval = interrupted
"""


def test_ctrl_c_says_how_to_resume(tmp_path: Path) -> None:
    args = ["run", "textcraft", "-a", "oracle", "--run-id", "r", *store_args(tmp_path), *QUIET]
    proc = run_module(INTERRUPT, args)
    one_line(proc.stderr, proc.returncode, 130, "interrupted", "resume with --run-id r")
