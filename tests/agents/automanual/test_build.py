"""AutoManual's three stages end to end, with scripted models of controlled
quality (lorekit.agents.automanual.testing), the real sandbox and the real
ALFWorld engine on generated games: build (planner, builder, consolidator),
formulate, test; the rule history linked to episodes; resume after a kill."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from _cli import run_cli
from test_simulation import two_games  # Put Two games with the objects together / apart

from lorekit.agents.automanual.agent import NO_MANUAL, AutoManualAgent
from lorekit.agents.automanual.build import run_build
from lorekit.agents.automanual.rules import RuleSystem
from lorekit.agents.automanual.store import open_db
from lorekit.agents.automanual.testing.builder import (
    builder_model,
    consolidator_model,
    formulator_model,
)
from lorekit.agents.automanual.testing.planner import planner_model
from lorekit.agents.base import NullRecorder
from lorekit.envs import make
from lorekit.envs.alfworld.env import AlfWorldEnv
from lorekit.envs.base import Task
from lorekit.eval.store import RunStore
from lorekit.llm import Roles, ScriptedLLM

#: 30 actions, not the env's 50: the dev rooms are full enough that most searches
#: end early, and the curriculum below needs one episode that runs out of actions.
#: The profile's own options (as the commands set them), so the CLI's builds match.
ENV_KWARGS = {"split": "dev", "object_ids": True, "arrival": "loc", "max_steps": 30}
#: Put Two games whose objects lie apart: the first needs more than 30 actions
#: once the copied skill has failed (the failure), the other two fewer.
APART = ("trial_dev_1012_00071", "trial_dev_1012_00065", "trial_dev_1012_00119")
REPO = Path(__file__).resolve().parents[3]
#: Model flags for CLI runs whose models are patched to scripted ones (a local
#: URL, so no API key is asked for; nothing is ever sent there).
SIM_MODEL = ("--model", "sim", "--base-url", "http://127.0.0.1:9/v1")


@pytest.fixture(scope="module")
def env() -> AlfWorldEnv:
    made = make("alfworld", **ENV_KWARGS)
    assert isinstance(made, AlfWorldEnv)
    return made


def curriculum_of(env: AlfWorldEnv) -> list[Task]:
    """Put Two: objects together (the skill learns "take both from one place"),
    then apart three times (where copying that skill fails)."""
    together, apart = two_games(env)
    chosen = [next(t for t in apart if t.id.endswith(trial)) for trial in APART]
    return [together[0], *chosen]


@pytest.fixture(scope="module")
def curriculum(env: AlfWorldEnv) -> list[Task]:
    return curriculum_of(env)


def sim_roles(repair: float = 1.0, **extra: Any) -> Roles:
    models = {
        "planner": ScriptedLLM(fn=planner_model(repair=repair)),
        "builder": ScriptedLLM(fn=builder_model()),
        "consolidator": ScriptedLLM(fn=consolidator_model()),
        "formulator": ScriptedLLM(fn=formulator_model()),
        **extra,
    }
    return Roles(models, default="planner")


def build(store: Path, tasks: list[Task], roles: Roles | None = None, **options: Any) -> Any:
    return asyncio.run(
        run_build(
            store,
            env_name="alfworld",
            env_kwargs=dict(ENV_KWARGS),
            tasks=tasks,
            roles=roles or sim_roles(),
            run_id="b",
            per_type=10,
            shuffle=False,
            **options,
        )
    )


def outcomes(store: Path, run: str = "b") -> list[str]:
    with RunStore(store) as db:
        return [
            e.error or e.info["notes"]["automanual"]["outcome"]
            for e in sorted(db.episodes(run), key=lambda e: e.index)
        ]


def history(store: Path) -> list[tuple[Any, ...]]:
    system = RuleSystem(open_db(str(store)), "b")
    return [
        (e.version, e.op, e.rule_id, e.episode_id, e.after.to_dict() if e.after else None)
        for e in system.history()
    ]


def test_build_fails_then_learns_a_rule_that_fixes_it_and_the_manual_is_tested(
    tmp_path: Path,
    env: AlfWorldEnv,
    curriculum: list[Task],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = tmp_path / "runs.sqlite3"
    done = build(store, curriculum)
    assert done.errors == 0 and done.played == 4
    # together: success; apart: the copied skill fails; then errors repaired
    # (indirect success) and the builder's Corrected Error rule makes the next direct.
    assert outcomes(store) == ["direct_success", "failure", "indirect_success", "direct_success"]
    keys = [f"{t.id}/{i}" for i, t in enumerate(curriculum)]
    events = history(store)
    assert [e[3] for e in events[:3]] == [None, None, None]  # the human example's rules
    learned = {(op, rule_id): episode for _, op, rule_id, episode, _ in events[3:]}
    unsolved = next(e for e in events if e[4] and e[4]["type"] == "Unsolved Error")
    assert unsolved[3] == keys[1] and unsolved[1] == "write"  # written by the failed episode
    corrected = [e for e in events if e[4] and e[4]["type"] == "Corrected Error"]
    assert corrected and corrected[0][3] == keys[2]  # rewritten by the repaired one
    assert ("update", unsolved[2]) in learned
    with RunStore(store) as db:
        notes = sorted(db.episodes("b"), key=lambda e: e.index)[1].info["notes"]
        assert notes["build"]["builder"]["case"] == "case_failure_rules"
        first_prompt = db.llm_calls("b", keys[3])[0]["messages"]
    assert "## Rules" in str(first_prompt) and "different receptacles" in str(first_prompt)

    # the CLI: history, formulate (role formulator), export, test-time run, show
    code, out, _ = run_cli(["automanual", "rules", "b", "--history", "--store", str(store)], capsys)
    assert code == 0 and keys[1] in out and "update" in out
    monkeypatch.setattr("lorekit.cli.checks.build_models", lambda *a, **k: sim_roles())
    code, out, err = run_cli(
        ["automanual", "formulate", "b", "--store", str(store), *SIM_MODEL], capsys
    )
    assert code == 0, err
    manual_file = tmp_path / "manual.md"
    code, _, err = run_cli(
        ["manual", "export", "b", "-o", str(manual_file), "--store", str(store)], capsys
    )
    assert code == 0, err
    manual = manual_file.read_text()
    rules_now = RuleSystem(open_db(str(store)), "b").rules()
    assert all(f"**{r.rule_id}**" in manual for r in rules_now)
    code, out, err = run_cli(
        [
            "run",
            "alfworld",
            "--agent",
            "automanual",
            "--agent-opt",
            "manual=b",
            "--store",
            str(store),
            *SIM_MODEL,
            "--run-id",
            "t",
            "--split",
            "dev",
            "-n",
            "2",
            "-j",
            "1",
        ],
        capsys,
    )
    assert code == 0, err
    with RunStore(store) as db:
        tested = db.episodes("t")
        assert len(tested) == 2 and all(e.success for e in tested)
        prompt = str(db.llm_calls("t", tested[0].episode_key)[0]["messages"])
    assert "## Manual" in prompt and "different receptacles" in prompt
    code, out, _ = run_cli(["show", "t", "0", "--store", str(store)], capsys)
    assert code == 0 and "AutoManual planner" in out and "turn 1" in out
    code, out, _ = run_cli(["show", "b", "1", "--store", str(store)], capsys)
    assert code == 0 and "diagnosis=rules" in out and "Unsolved Error" in out


def test_consolidator_keeps_the_rules_under_the_limit(tmp_path: Path, env: AlfWorldEnv) -> None:
    kinds = (
        "pick_and_place_simple",
        "pick_cool_then_place_in_recep",
        "pick_heat_then_place_in_recep",
    )
    tasks = [t for t in env.tasks("dev") if t.group in kinds][::7][:5]
    assert {t.group for t in tasks} == set(kinds)
    store = tmp_path / "runs.sqlite3"
    done = build(store, tasks, max_rules=5)  # 3 seed rules + a Success Process per type
    assert done.errors == 0 and done.rules <= 5
    with RunStore(store) as db:
        merged = [
            e.info["notes"]["build"]["consolidator"]
            for e in db.episodes("b")
            if "consolidator" in e.info["notes"]["build"]
        ]
    assert merged and all(m["before"] > 5 >= m["after"] for m in merged)
    deletes = [e for e in history(store) if e[1] == "delete"]
    assert deletes and all(e[3] is not None for e in deletes)  # linked to the episode


def test_planner_lib_build_has_no_rules_and_keeps_skills(
    tmp_path: Path, curriculum: list[Task]
) -> None:
    store = tmp_path / "runs.sqlite3"
    done = build(store, curriculum[:2], roles=sim_roles(), variant="planner-lib")
    assert done.rules == 0 and done.rules_version == 0
    with RunStore(store) as db:
        calls = {c["role"] for e in db.episodes("b") for c in db.llm_calls("b", e.episode_key)}
    assert calls == {"planner"}
    tester = AutoManualAgent("b", store=str(store))  # a planner-lib build: skills, no manual
    assert tester.manual_text == NO_MANUAL and tester.libraries is not None
    env = make("alfworld", **ENV_KWARGS)
    traj = asyncio.run(tester.run(env, curriculum[2], sim_roles(), NullRecorder(), seed=0))
    prompt = traj.notes["automanual"]["turns"][0]["answer"]
    assert traj.notes["manual"].endswith("(skills only)") and prompt
    assert "## Skill for a similar task (pick_two_obj_and_place)" in str(
        tester._planner("alfworld").first_message(
            traj.initial_observation,
            rules_text=NO_MANUAL,
            retrieved=tester.libraries.retrieve(curriculum[2].group, curriculum[2].goal),
        )
    )


class Boom(RuntimeError):
    pass


def test_an_episode_that_errors_leaves_no_rule_rows_and_replays_the_same(
    tmp_path: Path, curriculum: list[Task]
) -> None:
    reference = tmp_path / "ref.sqlite3"
    build(reference, curriculum)
    store = tmp_path / "runs.sqlite3"
    builder = builder_model()
    calls = {"n": 0}

    def flaky(messages: Any) -> str:
        calls["n"] += 1
        # the builder's second call in the second episode (the first, a direct
        # success, took one call: no diagnosis)
        if calls["n"] == 3:
            raise Boom("the builder's server went away")
        return builder(messages)

    done = build(store, curriculum, roles=sim_roles(builder=ScriptedLLM(fn=flaky)))
    assert done.errors == 1
    assert "Boom" in outcomes(store)[1]
    with RunStore(store) as db:
        key = sorted(db.episodes("b"), key=lambda e: e.index)[1].episode_key
    assert all(e[3] != key for e in history(store))  # rolled back with the episode
    assert build(store, curriculum, retry_errors=True).errors == 0
    # the replayed episode ran last, so the order differs; the rules learned are the same set
    final = RuleSystem(open_db(str(store)), "b").rules()
    assert {r.type for r in final} == {
        r.type for r in RuleSystem(open_db(str(reference)), "b").rules()
    }


KILLER = """
import asyncio, os, signal, sys
sys.path.insert(0, {tests!r})
from test_build import build, curriculum_of
from lorekit.agents.automanual.build_agent import AutoManualBuildAgent
from lorekit.envs import make
from pathlib import Path

def main():
    env = make("alfworld", split="dev", object_ids=True)
    count = AutoManualBuildAgent._count
    def die_in_third(self, task_type, success):
        if len(self.kept) == 3:  # the third episode's rules are written, not committed
            os.kill(os.getpid(), signal.SIGKILL)
        return count(self, task_type, success)
    AutoManualBuildAgent._count = die_in_third
    build(Path({store!r}), curriculum_of(env))

if __name__ == "__main__":
    main()
"""


@pytest.mark.slow
def test_kill_during_build_then_resume_gives_the_same_rule_history(
    tmp_path: Path, curriculum: list[Task]
) -> None:
    reference = tmp_path / "ref.sqlite3"
    build(reference, curriculum)
    store = tmp_path / "runs.sqlite3"
    script = tmp_path / "killer.py"
    tests_dir = str(Path(__file__).parent)
    script.write_text(textwrap.dedent(KILLER.format(tests=tests_dir, store=str(store))))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "tests"), tests_dir])}
    proc = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, timeout=300)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()[-2000:]
    assert len(outcomes(store)) == 2  # two committed, the third lost with the process
    third = f"{curriculum[2].id}/2"
    assert any(e[3] == third for e in history(store))  # its rows were left behind
    resumed = build(store, curriculum)
    assert resumed.dropped_on_resume > 0 and resumed.skipped == 2
    assert history(store) == history(reference)
    assert outcomes(store) == outcomes(reference)


def test_a_build_resumes_only_with_the_settings_it_began_with(
    tmp_path: Path, curriculum: list[Task]
) -> None:
    from lorekit.eval.store import RunMismatchError

    store = tmp_path / "runs.sqlite3"
    build(store, curriculum[:1])
    with pytest.raises(RunMismatchError, match="max_rules 12 -> 5"):
        build(store, curriculum[:1], max_rules=5)
    with pytest.raises(RunMismatchError, match="task plan"):
        build(store, curriculum[:2])
    assert build(store, curriculum[:1]).skipped == 1  # the same settings resume


def test_a_first_try_skill_stays_and_keeps_its_path(tmp_path: Path, curriculum: list[Task]) -> None:
    # Planner+Lib. (no rules): the together game's skill came from a direct success,
    # so, as in the authors' skill bank, the apart games' repaired skills never replace
    # it and every apart game starts from its "same receptacle" shortcut again
    store = tmp_path / "runs.sqlite3"
    build(store, curriculum, variant="planner-lib")
    played = outcomes(store)
    assert played[0] == "direct_success" and "direct_success" not in played[1:]
    assert played.count("indirect_success") >= 2  # repaired, but not remembered
    from lorekit.agents.automanual.libraries import Libraries

    lib = Libraries(open_db(str(store)), "b")
    kept = lib.skills()["pick_two_obj_and_place"]
    assert kept.episode_id == f"{curriculum[0].id}/0" and kept.meta["direct"] is True
    # where its task began, shown with the skill (as the authors' skill bank's init_obs)
    assert kept.meta["opening"].startswith("You are in the middle of a room.")
    assert "same receptacle as the first" in kept.text
    shelved = [bool(e.meta.get("shelved")) for e in lib.history("skill")]
    assert shelved[0] is False and len(shelved) >= 3 and all(shelved[1:])
