"""The paper's two-step build as commands: rules on some task types, then a
library-only pass (``build --from BUILD --library-only``) on the others, which
keeps the rules exactly and grows only the skill and reflection libraries.
Scripted models (lorekit.agents.automanual.testing) on generated ALFWorld
games; tests/envs/miniwob/test_miniwob_library_pass.py does it in Chromium."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from _cli import run_cli
from test_build import ENV_KWARGS, REPO, SIM_MODEL, build, curriculum_of, sim_roles
from test_simulation import two_games

from lorekit.agents.automanual.build import run_build
from lorekit.agents.automanual.build_source import BuildSourceError, read_source
from lorekit.agents.automanual.formulator import Formulator
from lorekit.agents.automanual.libraries import Libraries
from lorekit.agents.automanual.manuals import latest_manual, save_manual
from lorekit.agents.automanual.rules import RuleSystem
from lorekit.agents.automanual.store import open_db
from lorekit.envs import make
from lorekit.envs.base import Task
from lorekit.eval.store import RunStore
from lorekit.llm import ScriptedLLM

OTHER = "pick_and_place_simple"  # a type the source build never played


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished build ``b`` on Put Two (a success, then a failure: rules, a skill, a
    reflection), its rules formulated into a manual; each test copies the store."""
    env = make("alfworld", **ENV_KWARGS)
    store = tmp_path_factory.mktemp("source") / "runs.sqlite3"
    build(store, curriculum_of(env)[:2])  # together (a skill), then apart (a failure)
    db = open_db(str(store))
    try:
        manual = asyncio.run(
            Formulator(sim_roles()).formulate(
                RuleSystem(db, "b").rules(), rules_version=RuleSystem(db, "b").version
            )
        )
        save_manual(db, "b", manual)
    finally:
        db.close()
    return store


@pytest.fixture
def store(built: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "runs.sqlite3"
    shutil.copy(built, copy)
    return copy


def state(store: Path, build_id: str) -> dict[str, Any]:
    """What a build holds: rule history, current rules, library rows, manuals."""
    db = open_db(str(store))
    try:
        system = RuleSystem(db, build_id)
        libraries = Libraries(db, build_id)
        return {
            "history": [
                (e.version, e.op, e.rule_id, e.episode_id, e.after) for e in system.history()
            ],
            "rules": system.rules(),
            "library": [(e.kind, e.task_type, e.text, e.episode_id) for e in libraries.history()],
            "skills": sorted(libraries.skills()),
            "reflections": sorted(libraries.reflections()),
            "manual": (found := latest_manual(db, build_id)) and found.markdown,
        }
    finally:
        db.close()


def library_pass(store: Path, *extra: str) -> list[str]:
    return [
        "automanual", "build", "alfworld", "--from", "b", "--library-only", "--run-id", "lib",
        "--tasks", OTHER, "--per-type", "2", "--env-opt", "max_steps=30", "--store", str(store),
        *SIM_MODEL, *extra,
    ]  # fmt: skip


def test_library_only_pass_keeps_the_rules_and_grows_the_libraries(
    store: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    source = state(store, "b")
    assert source["rules"] and source["skills"] == ["pick_two_obj_and_place"]
    monkeypatch.setattr("lorekit.cli.checks.build_models", lambda *a, **k: sim_roles())
    code, out, err = run_cli(library_pass(store), capsys)
    assert code == 0, err
    assert "from build b: rules kept as they were" in out
    assert "libraries now: 2 skills, 1 reflections" in out

    assert state(store, "b") == source  # the source build is only read
    passed = state(store, "lib")
    assert passed["history"] == source["history"]  # the same events, versions and episodes
    assert passed["rules"] == source["rules"]
    assert passed["skills"] == ["pick_and_place_simple", "pick_two_obj_and_place"]
    assert passed["library"][: len(source["library"])] == source["library"]  # inherited first
    grown = passed["library"][len(source["library"]) :]
    assert grown and {kind for kind, task_type, *_ in grown} == {"skill"}
    assert {task_type for _, task_type, *_ in grown} == {OTHER}
    assert passed["manual"] == source["manual"]  # the manual of the same rules comes along

    with RunStore(store) as db:
        info = db.get_run("lib")
        episodes = sorted(db.episodes("lib"), key=lambda e: e.index)
        calls = [c for e in episodes for c in db.llm_calls("lib", e.episode_key)]
    assert info is not None and info.agent == "automanual-build:automanual:library-only"
    assert info.config["automanual"]["from_build"] == "b"
    assert len(episodes) == 2 and {e.task_group for e in episodes} == {OTHER}
    assert {c["role"] for c in calls} == {"planner"}  # no builder, no consolidator
    assert all(e.info["notes"]["build"]["library_only"] for e in episodes)
    first_prompt = str(calls[0]["messages"])
    assert "## Rules" in first_prompt and source["rules"][-1].content[:60] in first_prompt

    # the pass is a whole build: its rules show, and the test stage reads its libraries
    code, out, _ = run_cli(["automanual", "rules", "lib", "--store", str(store)], capsys)
    assert code == 0 and f"{len(source['rules'])} rules" in out
    code, _, err = run_cli(
        [
            "run", "alfworld", "--agent", "automanual", "--agent-opt", "manual=lib",
            "--store", str(store), *SIM_MODEL, "--run-id", "t", "--split", "dev",
            "--tasks", OTHER, "-n", "1", "-j", "1",
        ],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    with RunStore(store) as db:
        tested = db.episodes("t")
        prompt = str(db.llm_calls("t", tested[0].episode_key)[0]["messages"])
    assert f"## Skill for a similar task ({OTHER})" in prompt and "## Manual" in prompt

    # the same command again resumes: nothing to play, nothing copied twice
    code, out, err = run_cli(library_pass(store), capsys)
    assert code == 0, err
    assert state(store, "lib") == passed


def test_a_build_from_another_one_without_library_only_builds_on_its_rules(
    store: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    source = state(store, "b")
    monkeypatch.setattr("lorekit.cli.checks.build_models", lambda *a, **k: sim_roles())
    args = [a for a in library_pass(store) if a != "--library-only"]
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    assert "from build b: rules copied, then built on" in out
    grown = state(store, "lib")
    assert grown["history"][: len(source["history"])] == source["history"]
    assert len(grown["history"]) > len(source["history"])  # the builder wrote rules for OTHER
    assert state(store, "b") == source


def refusal(store: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    code, _, err = run_cli([*library_pass(store), *extra], capsys)
    assert code == 2, err
    return " ".join(err.split())


def test_library_pass_refuses_what_it_cannot_start_from(
    store: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("lorekit.cli.checks.build_models", lambda *a, **k: sim_roles())
    args = [a for a in library_pass(store) if a not in ("--from", "b")]
    code, _, err = run_cli(args, capsys)
    assert code == 2 and "--library-only: name the build whose rules to keep" in err
    assert "--from: no run 'nope'" in refusal(store, capsys, "--from", "nope")
    with RunStore(store) as db:
        db.create_run("r", env="alfworld", agent="react", config={})
    assert "is a 'react' run, not an AutoManual build" in refusal(store, capsys, "--from", "r")
    assert "other env options (object_ids True -> False)" in refusal(
        store, capsys, "--env-opt", "object_ids=false"
    )
    assert "has variant automanual" in refusal(store, capsys, "--variant", "planner-lib")
    with RunStore(store) as db:
        db.set_run_status("b", "running")  # killed, never resumed
    assert "build 'b' is running, not finished" in refusal(store, capsys)
    with RunStore(store) as db:
        assert db.get_run("lib") is None  # a refused pass creates nothing


def test_refusals_of_the_python_api(store: Path) -> None:
    env = make("alfworld", **ENV_KWARGS)
    together, _ = two_games(env)

    def again(tasks: list[Task], **options: Any) -> Any:
        return asyncio.run(
            run_build(
                store,
                env_name="alfworld",
                env_kwargs=dict(ENV_KWARGS),
                tasks=tasks,
                roles=sim_roles(),
                run_id="lib",
                per_type=10,
                shuffle=False,
                **options,
            )
        )

    with pytest.raises(BuildSourceError, match="needs the build whose rules it keeps"):
        again([together[0]], library_only=True)
    # b played these very episodes (same tasks, same seeds): their rows would be confused
    with pytest.raises(BuildSourceError, match="2 planned episodes were played by build 'b'"):
        again(curriculum_of(env)[:2], from_build="b", library_only=True)
    with RunStore(store) as db, pytest.raises(BuildSourceError, match="built on alfworld"):
        read_source(db, "b", env_name="miniwob", env_kwargs=ENV_KWARGS)


KILLER = """
import asyncio, os, signal, sys
sys.path.insert(0, {tests!r})
from test_build import ENV_KWARGS, sim_roles
from lorekit.agents.automanual.build_agent import AutoManualBuildAgent
from lorekit.agents.automanual.build import run_build
from lorekit.envs import make

def main():
    env = make("alfworld", **ENV_KWARGS)
    tasks = [t for t in env.tasks("dev") if t.group == {other!r}][:3]
    count = AutoManualBuildAgent._count
    def die_in_second(self, task_type, success):
        mine = [k for k in self.kept if k.startswith({other!r})]
        if len(mine) == 2 and self.kept[-1] == mine[-1]:
            os.kill(os.getpid(), signal.SIGKILL)  # its skill is written, the episode not committed
        return count(self, task_type, success)
    AutoManualBuildAgent._count = die_in_second
    asyncio.run(run_build({store!r}, env_name="alfworld", env_kwargs=dict(ENV_KWARGS), tasks=tasks,
        roles=sim_roles(), run_id="lib", per_type=3, shuffle=False, from_build="b",
        library_only=True, variant=None))

if __name__ == "__main__":
    main()
"""


@pytest.mark.slow
def test_a_killed_library_pass_resumes_to_the_same_libraries(built: Path, tmp_path: Path) -> None:
    env = make("alfworld", **ENV_KWARGS)
    tasks = [t for t in env.tasks("dev") if t.group == OTHER][:3]

    def run(store: Path) -> Any:
        return asyncio.run(
            run_build(
                store,
                env_name="alfworld",
                env_kwargs=dict(ENV_KWARGS),
                tasks=tasks,
                roles=sim_roles(builder=ScriptedLLM(fn=lambda m: pytest.fail("builder called"))),
                run_id="lib",
                per_type=3,
                shuffle=False,
                from_build="b",
                library_only=True,
                variant=None,
            )
        )

    reference = tmp_path / "ref.sqlite3"
    shutil.copy(built, reference)
    assert run(reference).played == 3
    store = tmp_path / "runs.sqlite3"
    shutil.copy(built, store)
    script = tmp_path / "killer.py"
    tests_dir = str(Path(__file__).parent)
    script.write_text(
        textwrap.dedent(KILLER.format(tests=tests_dir, store=str(store), other=OTHER))
    )
    env_vars = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "tests"), tests_dir]),
    }
    proc = subprocess.run(
        [sys.executable, str(script)], env=env_vars, capture_output=True, timeout=300
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()[-2000:]
    second = f"{tasks[1].id}/1"
    assert any(ep == second for *_, ep in state(store, "lib")["library"])  # left behind
    resumed = run(store)
    assert (
        resumed.errors == 0
        and resumed.dropped_on_resume > 0
        and resumed.skipped == 1
        and resumed.played == 2
    )
    assert state(store, "lib") == state(reference, "lib")
    assert state(store, "lib")["history"] == state(store, "b")["history"]


def test_libraries_on_runs_both_steps_in_one_command_and_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "runs.sqlite3"
    monkeypatch.setattr("lorekit.cli.checks.build_models", lambda *a, **k: sim_roles())
    args = [
        "automanual", "build", "alfworld", "--tasks", "pick_two_obj_and_place",
        "--libraries-on", OTHER, "--per-type", "1", "--run-id", "two",
        "--store", str(store), *SIM_MODEL,
    ]  # fmt: skip
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    assert "build: two " in out and "build: two-libraries " in out
    assert "from build two: rules kept as they were" in out
    assert f"next: lorekit automanual formulate two-libraries --store {store}" in out
    first, second = state(store, "two"), state(store, "two-libraries")
    assert first["rules"] and second["history"] == first["history"]
    assert {row[1] for row in first["library"]} == {"pick_two_obj_and_place"}
    assert second["library"][: len(first["library"])] == first["library"]
    assert {row[1] for row in second["library"][len(first["library"]) :]} == {OTHER}
    with RunStore(store) as db:
        info = db.get_run("two-libraries")
        assert info is not None and info.config["automanual"]["library_only"] is True
        assert [e.task_group for e in db.episodes("two-libraries")] == [OTHER]
    code, out, err = run_cli(args, capsys)  # again: both steps resume, nothing is replayed
    assert code == 0, err
    assert out.count("played 0, skipped 1") == 2
    assert state(store, "two-libraries") == second
