"""Half a surrogate pair ('\\ud83d') in a model's answer or in an observation never ends an
episode: the next request quotes it back, and UTF-8 cannot encode it, so every message
(and every answer) is made encodable where it is built (``lorekit.llm.base.Message``),
the one place every request passes, with U+FFFD in its place.

The episodes here are real: ReAct on TextCraft through the OpenAI-compatible backend,
over HTTP, against LoreKit's local fault server, recorded in a run store.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from lorekit.agents.adapt.react import ReActAgent
from lorekit.envs import Task, make
from lorekit.envs.base import Observation, Step
from lorekit.envs.textcraft import TextCraftEnv
from lorekit.eval.runner import plan_episodes, run_eval
from lorekit.eval.store import RunStore
from lorekit.llm import Roles
from lorekit.llm.openai_compat import OpenAICompatLLM
from lorekit.llm.retry import RetryPolicy
from lorekit.llm.testing import OpenAICompatServer
from lorekit.textsafe import REPLACEMENT, safe_json, safe_line, safe_text

HALF = "\ud83d"


def _depth2() -> tuple[Task, list[str]]:
    env = make("textcraft")
    task = next(t for t in env.tasks("test") if t.group == "depth-2")
    env.reset(task, seed=0)
    plan = []
    while (action := env.expert_action()) is not None:
        plan.append(action)
        env.step(action)
    env.close()
    return task, plan


class HalfEmojiTextCraft(TextCraftEnv):
    """TextCraft whose every observation ends in a lone surrogate."""

    def reset(self, task: Task | str | None = None, seed: int | None = None) -> Observation:
        first = super().reset(task, seed=seed)
        return Observation(first.text + HALF, first.info)

    def step(self, action: str) -> Step:
        out = super().step(action)
        return replace(out, observation=out.observation + HALF)


def _messages(body: dict[str, Any] | None) -> list[dict[str, str]]:
    assert body is not None
    messages: list[dict[str, str]] = body["messages"]
    return messages


async def _play(
    tmp_path: Path, answers: list[str], env: Callable[[], Any], task: Task
) -> tuple[OpenAICompatServer, RunStore, str]:
    srv = OpenAICompatServer(answers).start()
    llm = OpenAICompatLLM("test-model", base_url=srv.base_url, retry=RetryPolicy(max_attempts=1))
    store = RunStore(tmp_path / "runs.sqlite3")
    try:
        result = await run_eval(
            store,
            env_factory=env,
            agent=ReActAgent(max_turns=len(answers)),
            roles=Roles({"executor": llm}),
            episodes=plan_episodes([task]),
            run_id="r",
            concurrency=1,
            episode_timeout_s=120,
        )
    finally:
        await llm.aclose()
        srv.close()
    return srv, store, result.run_id


async def test_answers_with_a_lone_surrogate_are_quoted_back_as_u_fffd(tmp_path: Path) -> None:
    task, plan = _depth2()
    answers = [f"Thought: half an emoji {HALF} here\nAction: {a}" for a in plan]
    srv, store, rid = await _play(tmp_path, answers, lambda: make("textcraft"), task)
    with store:
        [episode] = store.episodes(rid)
        assert episode.status == "success", episode.error
        assert srv.request_count == len(plan)
        later = [m["content"] for r in srv.requests[1:] for m in _messages(r.body)]
        assert any(f"emoji {REPLACEMENT} here" in text for text in later)
        calls = store.llm_calls(rid, episode.episode_key)
        assert len(calls) == len(plan) and all(c["error"] is None for c in calls)
        assert all(REPLACEMENT in c["answer"] for c in calls)


async def test_observations_with_a_lone_surrogate_reach_the_server(tmp_path: Path) -> None:
    task, plan = _depth2()
    answers = [f"Thought: go\nAction: {a}" for a in plan]
    srv, store, rid = await _play(tmp_path, answers, HalfEmojiTextCraft, task)
    with store:
        [episode] = store.episodes(rid)
        assert episode.status == "success", episode.error
        assert srv.request_count == len(plan)
        later = srv.requests[1:]  # each quotes the observation of the step before
        assert all(any(REPLACEMENT in m["content"] for m in _messages(r.body)) for r in later)
        assert all(REPLACEMENT in s.observation for s in store.steps(rid, episode.episode_key))


def test_lorekit_run_plays_on_through_lone_surrogates(tmp_path: Path) -> None:
    """The whole command: every answer holds half an emoji, and no episode errors."""

    def answer(body: dict[str, Any]) -> str:
        return f"Thought: {HALF} hmm\nAction: inventory"

    with OpenAICompatServer(answer) as srv:
        done = subprocess.run(
            [sys.executable, "-m", "lorekit", "run", "textcraft", "--agent", "react",
             "--model", "test-model", "--base-url", srv.base_url, "-n", "2",
             "--agent-opt", "max_turns=3", "--store", str(tmp_path / "s.sqlite3"),
             "--no-progress", "--cache", "off"],
            capture_output=True, text=True, timeout=600, cwd=tmp_path,
            env={**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "cfg")},
        )  # fmt: skip
        assert srv.request_count == 6  # 2 episodes x 3 turns: each turn quoted the last
    assert done.returncode == 0, done.stderr[-2000:]
    assert "UnicodeEncodeError" not in done.stderr + done.stdout


@pytest.mark.parametrize("show", [safe_text, safe_line, safe_json])
def test_printing_a_lone_surrogate_shows_its_escape(show: Callable[[str], str]) -> None:
    shown = show(f"a{HALF}b")
    assert shown == "a\\ud83db"
    shown.encode("utf-8")  # a terminal (strict UTF-8 stdout) can print it
