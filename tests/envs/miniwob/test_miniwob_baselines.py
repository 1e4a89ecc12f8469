"""AutoManual's baselines on MiniWoB++: the existing ReAct and Reflexion agents
play real pages through the harness, with scripted models that read the page."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from _mw_browsers import NEEDS_CHROMIUM

from lorekit.agents import make_agent
from lorekit.envs import EnvSpec, make
from lorekit.eval.runner import plan_episodes, run_eval
from lorekit.eval.store import RunStore
from lorekit.llm import Roles, ScriptedLLM
from lorekit.llm.base import Message

pytestmark = [NEEDS_CHROMIUM, pytest.mark.usefixtures("closes_shared_pool")]


def button_clicker(wrong_first: bool) -> ScriptedLLM:
    """Clicks the button the task names; with ``wrong_first`` the first trial
    clicks another button, and only a prompt carrying a lesson gets it right."""

    def answer(messages: tuple[Message, ...]) -> str:
        prompt = "\n".join(m.content for m in messages)
        if "Reflection:" in messages[0].content:  # asked to reflect on a failed trial
            return "Reflection: click the button whose text the task names, not the first one."
        label = re.search(r'Click on the "([^"]+)" button', prompt)
        assert label is not None, prompt[:500]
        target = label.group(1)
        if wrong_first and "click the button whose text the task names" not in prompt:
            buttons = re.findall(r">([^<>]+)</button>", prompt)
            target = next((b for b in buttons if b != label.group(1)), target)
        xpath = f"//button[normalize-space()='{target}']"
        return f"Thought: the task names a button.\nAction: click_xpath {xpath}"

    return ScriptedLLM(fn=answer)


def play(agent_name: str, llm: ScriptedLLM, store: Path, **agent_kwargs: object) -> RunStore:
    spec = EnvSpec("miniwob", {"tasks": "click-button"})
    probe = make("miniwob", tasks="click-button")
    tasks = probe.tasks()[:2]
    probe.close()
    db = RunStore(store)
    asyncio.run(
        run_eval(
            db,
            env_factory=spec,
            agent=make_agent(agent_name, **agent_kwargs),
            roles=Roles(llm),
            episodes=plan_episodes(tasks),
            run_id="r",
            env_name="miniwob",
            concurrency=1,
            episode_timeout_s=120,
        )
    )
    return db


def test_react_solves_click_button(tmp_path: Path) -> None:
    with play("react", button_clicker(wrong_first=False), tmp_path / "s.sqlite3") as db:
        episodes = db.episodes("r")
        assert [e.status for e in episodes] == ["success", "success"]


def test_reflexion_learns_from_a_failed_trial(tmp_path: Path) -> None:
    llm = button_clicker(wrong_first=True)
    with play("reflexion", llm, tmp_path / "s.sqlite3", d_max=2) as db:
        episodes = db.episodes("r")
        assert all(e.success for e in episodes)
        retried = [
            e.info["notes"]["trials"] for e in episodes if len(e.info["notes"]["trials"]) > 1
        ]
        assert retried, "no page had a second button to get wrong"
        for trials in retried:
            assert not trials[0]["success"] and "reflection" in trials[0] and trials[1]["success"]
