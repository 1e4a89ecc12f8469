"""Every method end to end through a real local OpenAI-compatible server."""

from __future__ import annotations

from typing import Any

import pytest

from lorekit.agents import make_agent
from lorekit.agents.adapt.testing.textcraft import textcraft_executor, textcraft_planner
from lorekit.envs.textcraft import TextCraftEnv
from lorekit.llm import Message, Roles
from lorekit.llm.openai_compat import OpenAICompatLLM
from lorekit.llm.retry import RetryPolicy
from lorekit.llm.testing import Fault, OpenAICompatServer


class Recorder:
    def __init__(self) -> None:
        self.actions: list[str] = []

    def add_step(self, observation, action, reward, done, info) -> None:  # type: ignore[no-untyped-def]
        self.actions.append(action)


@pytest.mark.parametrize(
    ("name", "kwargs", "capability", "solves"),
    [
        ("adapt", {"d_max": 3}, 1, True),  # decomposes its way through
        ("adapt", {"d_max": 1}, 1, False),  # ReAct on the same executor
        ("plan-execute", {}, 1, True),
        ("try-again", {"d_max": 2}, 2, True),
        ("reflexion", {"d_max": 3}, 1, True),  # each lesson unlocks one item
    ],
)
async def test_method_through_local_server(
    env: TextCraftEnv, name: str, kwargs: dict[str, Any], capability: int, solves: bool
) -> None:
    executor = textcraft_executor(env.book, capability=capability)
    planner = textcraft_planner(env.book)

    def answer(body: dict[str, Any]) -> str:
        messages = tuple(Message(m["role"], m["content"]) for m in body["messages"])
        return planner(messages) if body["model"] == "planner-model" else executor(messages)

    target = next(t for t in env.tasks("all") if t.id == "wooden_pickaxe")
    with OpenAICompatServer(answer) as srv:
        srv.inject(Fault.server_error(503))
        retry = RetryPolicy(max_attempts=3, base_delay_s=0.01)
        models = {
            "executor": OpenAICompatLLM("executor-model", base_url=srv.base_url, retry=retry),
            "planner": OpenAICompatLLM("planner-model", base_url=srv.base_url, retry=retry),
        }
        rec = Recorder()
        traj = await make_agent(name, **kwargs).run(env, target, Roles(models), rec, seed=0)
        for llm in models.values():
            await llm.aclose()
        assert traj.success is solves
        assert rec.actions == traj.actions and traj.notes["method"] == name
        assert srv.request_count == traj.notes["llm_calls"] + 1  # one 503 retried
        used = {r.body["model"] for r in srv.requests}
        assert ("planner-model" in used) is (name in ("adapt", "plan-execute") and solves)
