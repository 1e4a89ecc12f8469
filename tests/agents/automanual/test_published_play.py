"""Every published skill played on the official ALFWorld games and on MiniWoB++'s pages
by LoreKit's testing stage, episode by episode as the authors' testing stage plays it.

The planner is :mod:`lorekit.agents.automanual.testing.published`'s: it answers with
the skill of the task's type from the authors' published run, adapted to the task.
``published_golden/outcomes.json.gz`` holds what the authors' own code did with the
same plans on the same games and pages (their wrappers, namespace and turn loop;
``published_golden/README.md`` says how it was recorded): per episode the outcome,
the answers used, and the commands the world received. LoreKit must match all of
them, with no model error: 110 of 135 ALFWorld games won, 12 of 54 MiniWoB++
episodes (the MiniWoB++ skills hard-code their own task's values; the mechanical
adaptation replaces names, texts and a result's index, not a plan's steps).
"""

from __future__ import annotations

import ast
import gzip
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from _published_data import SHARED, needs_published, published

import lorekit
from lorekit.agents.automanual.agent import AutoManualAgent
from lorekit.agents.automanual.profiles import profile_for
from lorekit.agents.automanual.testing.published import replay_roles
from lorekit.eval.store import RunStore

pytestmark = [needs_published, pytest.mark.slow]  # 135 games and 54 pages: a minute or two
GOLDEN = Path(__file__).with_name("published_golden") / "outcomes.json.gz"
TIMING = {"terminal"}
"""Pages whose commands depend on timing: terminal focuses its input 200 ms after the
episode starts, so whether a first ``type`` comes before or after that varies from
run to run, on either side (the outcome does not: no plan wins it)."""


@cache
def golden() -> dict[str, list[dict[str, Any]]]:
    data: dict[str, list[dict[str, Any]]] = json.loads(gzip.decompress(GOLDEN.read_bytes()))
    return data


def _play(env: str, options: dict[str, Any], store: Path) -> dict[str, Any]:
    """Every episode of ``env``'s test tasks with the published run; per task id, what
    LoreKit's run recorded."""
    agent = AutoManualAgent(str(published(env) / "rule_manager.json"))
    result = lorekit.evaluate(
        env,
        agent,
        env_options={**profile_for(env).env_options, **options},
        models=replay_roles(env_name=env),
        split="test",
        store=str(store),
        run_id=env,
        concurrency=2,
        progress=False,
    )
    out = {}
    with RunStore(store) as runs:
        broken = [(e.task_id, e.error) for e in runs.episodes(env) if e.status == "error"]
        assert result.errors == len(broken) == 0, broken
        for e in runs.episodes(env):
            turns = e.info["notes"]["automanual"]["turns"]
            out[e.task_id] = {
                "success": e.status == "success",
                "answers": len(turns),
                "actions": [s.action for s in runs.steps(env, e.episode_key)],
                "errors": [c["error"] for c in runs.llm_calls(env, e.episode_key) if c["error"]],
            }
    return out


def test_every_published_alfworld_skill_plays_as_in_the_authors_code(tmp_path: Path) -> None:
    pytest.importorskip("textworld", reason="the alfworld extra is not installed")
    assert SHARED is not None
    options = {
        "source": "official",
        "variant": "automanual",
        "data_dir": str(SHARED / "alfworld-2.1.1"),
    }
    ours = _play("alfworld", options, tmp_path / "s.sqlite3")
    theirs = {g["game"]: g for g in golden()["alfworld"]}
    assert sorted(ours) == sorted(theirs) and len(ours) == 135

    def words(command: str) -> str:  # "go to cabinet_1" as the engine has it
        return re.sub(r"\b([a-z]+)_(\d+)\b", r"\1 \2", command)

    for game, mine in ours.items():
        them = theirs[game]
        assert mine["errors"] == [], game
        assert (mine["success"], mine["answers"]) == (them["success"], them["answers"]), game
        assert [words(a) for a in mine["actions"]] == [words(c) for c in them["commands"]], game
    assert sum(g["success"] for g in ours.values()) == 110


def test_every_published_miniwob_skill_plays_as_in_the_authors_code(tmp_path: Path) -> None:
    pytest.importorskip("selenium", reason="the web extra is not installed")
    from lorekit.envs.miniwob import BrowserMissing, find_browser

    try:
        find_browser()
    except BrowserMissing as missing:
        pytest.skip(f"MiniWoB++ needs a browser: {missing}")
    ours = _play("miniwob", {"tasks": "feedback-9", "episodes_per_task": 6}, tmp_path / "s.db")
    theirs = {g["task"]: g for g in golden()["miniwob"]}
    assert sorted(ours) == sorted(theirs) and len(ours) == 54

    def call(action: str) -> list[Any]:  # click_xpath('//a') and click_xpath("//a") alike
        m = re.fullmatch(r"(\w+)\((.*)\)", action, re.S)
        assert m is not None, action
        text = m.group(2)
        quoted = text.startswith('"') and text.endswith('"') and "\\" not in text
        return [m.group(1), text[1:-1] if quoted else ast.literal_eval(text)]

    same = 0
    for task, mine in ours.items():
        them = theirs[task]
        assert mine["errors"] == [], task
        assert (mine["success"], mine["answers"]) == (them["success"], them["answers"]), task
        if task.split("#")[0] not in TIMING:
            assert [call(a) for a in mine["actions"]] == [call(a) for a in them["actions"]], task
            same += 1
    assert same == 48 and sum(g["success"] for g in ours.values()) == 12
