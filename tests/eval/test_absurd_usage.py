"""A usage block that cannot be a token count (``prompt_tokens: 10**19``, ``-5``, ``12.5``,
``"12"``) is refused per call, never the end of a run: the call counts the local
estimate (marked ``~``), the run store keeps a note of what was refused, and every
episode is stored. Before, ``10**19`` raised ``OverflowError`` at the SQLite insert and
the run lost all its episodes.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lorekit.agents.adapt.react import ReActAgent
from lorekit.envs import make
from lorekit.eval.runner import plan_episodes, run_eval
from lorekit.eval.store import RunStore
from lorekit.llm import Roles
from lorekit.llm.base import Completion, Message, RequestParams, Usage
from lorekit.llm.calls import CallRecord
from lorekit.llm.counts import MAX_CALL_TOKENS
from lorekit.llm.openai_compat import OpenAICompatLLM
from lorekit.llm.retry import RetryPolicy
from lorekit.llm.testing import Fault, OpenAICompatServer

BAD_COUNTS: list[Any] = [10**19, 2**63, -5, 12.5, "12", True, None]


def _refused_calls(store: RunStore, rid: str) -> list[dict[str, Any]]:
    return [c for c in store.llm_calls(rid) if c["meta"].get("usage_refused")]


@pytest.mark.parametrize("bad", BAD_COUNTS, ids=repr)
async def test_a_server_count_that_is_no_count_is_refused_and_both_episodes_kept(
    tmp_path: Path, bad: Any
) -> None:
    tasks = make("textcraft").tasks("test")[:2]
    with OpenAICompatServer(lambda body: "Thought: hm\nAction: inventory") as srv:
        srv.inject(Fault.usage_block(prompt_tokens=bad, completion_tokens=3, total_tokens=7))
        llm = OpenAICompatLLM(
            "test-model", base_url=srv.base_url, retry=RetryPolicy(max_attempts=1)
        )
        with RunStore(tmp_path / "runs.sqlite3") as store:
            result = await run_eval(
                store,
                env_factory=lambda: make("textcraft"),
                agent=ReActAgent(max_turns=2),
                roles=Roles({"executor": llm}),
                episodes=plan_episodes(tasks),
                run_id="r",
                concurrency=1,
            )
            await llm.aclose()
            episodes = store.episodes(result.run_id)
            assert [e.status for e in episodes] == ["failure", "failure"]  # budget, no error
            calls = store.llm_calls(result.run_id)
            assert len(calls) == 4 and all(c["error"] is None for c in calls)
            assert all(0 <= c["prompt_tokens"] <= MAX_CALL_TOKENS for c in calls)
            first = calls[0]
            assert first["usage_estimated"] and first["prompt_tokens"] > 0  # the estimate
            if bad is None:  # absent is no count to refuse: plainly estimated
                assert not _refused_calls(store, result.run_id)
            else:
                [refused] = _refused_calls(store, result.run_id)
                assert refused["meta"]["usage_refused"].startswith("prompt_tokens=")
                assert store.refused_usage(result.run_id)[0] == 1
            assert not calls[1]["usage_estimated"]  # the next answer's counts are used


def test_a_backends_own_usage_is_refused_where_it_is_built(tmp_path: Path) -> None:
    """Not only the wire: any backend (a plugin, a scripted model) builds a Usage."""
    huge = Usage(10**19, 4)
    assert (huge.prompt_tokens, huge.completion_tokens, huge.estimated) == (0, 4, True)
    assert huge.refused == "prompt_tokens=10000000000000000000"
    text = Usage("12", -1)  # type: ignore[arg-type]
    assert (text.prompt_tokens, text.completion_tokens) == (0, 0)
    assert text.refused == "prompt_tokens='12'; completion_tokens=-1"
    digits = Usage(10**5000, 1)
    assert digits.refused is not None and "5,001 digits" in digits.refused
    assert Usage(12, 3).refused is None and not Usage(12, 3).estimated
    with RunStore(tmp_path / "runs.sqlite3") as store:
        rid = store.create_run("r", env="e", agent="a", config={})
        writer = store.episode(rid, "t/0", index=0, task_id="t")
        writer.add_llm_call(
            CallRecord(
                "executor",
                "m",
                (Message("user", "hi"),),
                RequestParams(),
                1.0,
                0.1,
                Completion("ok", huge, "m"),
            )
        )
        writer.finish(success=True, reward=1.0)
        [call] = store.llm_calls(rid)
        assert call["prompt_tokens"] == 0 and call["usage_estimated"]
        assert call["meta"]["usage_refused"] == "prompt_tokens=10000000000000000000"


def test_lorekit_run_keeps_both_episodes_and_says_what_it_refused(tmp_path: Path) -> None:
    with OpenAICompatServer(lambda body: "Thought: hm\nAction: inventory") as srv:
        srv.inject(Fault.usage_block(prompt_tokens=10**19, completion_tokens=3))
        store = tmp_path / "s.sqlite3"
        done = subprocess.run(
            [sys.executable, "-m", "lorekit", "run", "textcraft", "--agent", "react",
             "--model", "test-model", "--base-url", srv.base_url, "-n", "2", "-j", "1",
             "--agent-opt", "max_turns=2", "--store", str(store), "--run-id", "r",
             "--no-progress", "--cache", "off"],
            capture_output=True, text=True, timeout=600, cwd=tmp_path,
            env={**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "cfg")},
        )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "1 call(s) reported token counts that cannot be counts" in done.stdout
    assert "prompt_tokens=10000000000000000000" in done.stdout
    with RunStore.open_readonly(store) as db:
        assert len(db.episodes("r")) == 2
