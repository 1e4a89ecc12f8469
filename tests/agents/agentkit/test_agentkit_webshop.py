"""agentkit-webshop: 20 episodes with a scripted model through a fake shop, every
node answered and traced; refused answers, fallbacks and failures."""

from __future__ import annotations

import pytest
from _fake_webshop import FakeShop

from lorekit.agents import make_agent
from lorekit.agents.agentkit import AgentKitPassError, AgentKitWebShopAgent
from lorekit.agents.agentkit.testing import WEBSHOP_QUESTIONS, webshop_model, which
from lorekit.agents.agentkit.webshop import SPEC_PATH, page_options
from lorekit.agents.base import NullRecorder
from lorekit.envs import make
from lorekit.graph.spec import load_spec
from lorekit.llm import Message, Roles, ScriptedLLM
from lorekit.llm.errors import LLMError

NODES = ["page", "match", "sketch", "action", "summary_page", "summary_plan"]


def test_the_spec_has_the_six_nodes_and_each_question_one_marker() -> None:
    spec = load_spec(SPEC_PATH)
    assert [n.key for n in spec.nodes] == NODES
    for key, phrase in WEBSHOP_QUESTIONS.items():
        holders = [n.key for n in spec.nodes if phrase in " ".join(n.prompt.split())]
        assert holders == [key], (key, holders)
    assert AgentKitWebShopAgent().model_roles == ("observer", "actor")


async def test_twenty_episodes_buy_with_every_node_answered() -> None:
    env = FakeShop(episodes=20)
    llm = ScriptedLLM(fn=webshop_model())
    rewards = []
    for task in env.tasks():
        traj = await AgentKitWebShopAgent().run(env, task, Roles(llm), NullRecorder())
        rewards.append(traj.reward)
        log = traj.notes["agentkit"]
        assert traj.done and traj.stop_reason == "done" and log["fallbacks"] == 0
        option = task.data["option"]
        assert traj.actions == [
            f"search[{task.goal}]",
            "click[B000000001]",
            f"click[{option}]",
            "click[Buy Now]",
        ]
        for step, action in zip(log["steps"], traj.actions, strict=True):
            assert [n["key"] for n in step["nodes"]] == NODES
            assert all(n["status"] == "ok" and n["answer"] for n in step["nodes"])
            assert step["action"] == action and step["prompt_tokens"] > 0
    assert rewards == [1.0] * 20
    assert len(llm.calls) == 20 * 4 * 6


async def test_history_reaches_the_next_steps_prompt() -> None:
    env = FakeShop(episodes=1)
    llm = ScriptedLLM(fn=webshop_model())
    await AgentKitWebShopAgent().run(env, env.tasks()[0], Roles(llm), NullRecorder())
    sketches = [c for c in llm.calls if which(c.messages, WEBSHOP_QUESTIONS) == "sketch"]
    assert "(no history yet)" in sketches[0].messages[-1].content
    assert "Step 1:" in sketches[1].messages[-1].content
    assert "did: search[" in sketches[1].messages[-1].content


async def test_a_refused_action_is_asked_again_with_the_reason() -> None:
    env = FakeShop(episodes=1)
    llm = ScriptedLLM(fn=webshop_model(invalid=2))
    traj = await AgentKitWebShopAgent().run(env, env.tasks()[0], Roles(llm), NullRecorder())
    assert traj.reward == 1.0
    node = traj.notes["agentkit"]["steps"][0]["nodes"][3]
    assert node["key"] == "action" and node["status"] == "ok" and len(node["rejected"]) == 2
    assert "no valid JSON" in node["rejected"][0]["why"]
    assert "'nope' is not a button" in node["rejected"][1]["why"]


async def test_unusable_answers_go_back_to_search_or_give_up() -> None:
    env = FakeShop(episodes=1)
    llm = ScriptedLLM(fn=webshop_model(invalid=99))
    traj = await AgentKitWebShopAgent(max_steps=3).run(
        env, env.tasks()[0], Roles(llm), NullRecorder()
    )
    # the search page has no "Back to Search" button: the agent stops and says why
    assert traj.actions == [] and traj.stop_reason == "gave_up"
    step = traj.notes["agentkit"]["steps"][0]
    assert step["fallback"] and step["action"] is None and "no usable answer" in step["reason"]


async def test_a_failed_model_call_ends_the_episode_with_an_error() -> None:
    def answer(messages: tuple[Message, ...]) -> str:
        if which(messages, WEBSHOP_QUESTIONS) == "match":
            raise LLMError("the server went away")
        return webshop_model()(messages)

    env = FakeShop(episodes=1)
    with pytest.raises(AgentKitPassError, match="step 1: node 'match' failed \\(model\\)"):
        await AgentKitWebShopAgent().run(
            env, env.tasks()[0], Roles(ScriptedLLM(fn=answer)), NullRecorder()
        )


def test_options_and_env_are_checked() -> None:
    with pytest.raises(ValueError, match="max_steps must be a whole number"):
        make_agent("agentkit-webshop", max_steps=0)
    with pytest.raises(ValueError, match="written for webshop only"):
        AgentKitWebShopAgent().env_defaults("crafter")
    assert page_options(["search[x]", "click[Buy Now]"]) == (["Buy Now"], True)


async def test_twenty_episodes_through_the_real_webshop() -> None:
    """The same agent on ``make("webshop")``."""
    env = make("webshop")
    llm = ScriptedLLM(fn=webshop_model())
    rewards = []
    for task in env.tasks()[:20]:
        traj = await AgentKitWebShopAgent().run(env, task, Roles(llm), NullRecorder())
        log = traj.notes["agentkit"]
        assert traj.stop_reason == "done" and log["fallbacks"] == 0
        assert (
            traj.actions[0].startswith("search[") and traj.actions[-1].lower() == "click[buy now]"
        )
        for step in log["steps"]:
            assert [n["key"] for n in step["nodes"]] == NODES
            assert all(n["status"] == "ok" and n["answer"] for n in step["nodes"])
        rewards.append(traj.reward)
    assert len(rewards) == 20 and min(rewards) > 0


async def test_the_stated_budget_is_the_one_that_binds() -> None:
    # a budget given to the agent reaches the env; without one the agent follows the env's cap
    assert AgentKitWebShopAgent(max_steps=25).env_defaults("webshop") == {"max_steps": 25}
    agent = AgentKitWebShopAgent(max_steps=25)
    assert AgentKitWebShopAgent().env_defaults("webshop") == {}
    env = FakeShop(episodes=1)
    env.max_steps = 15  # an env that stops sooner (webshop's own default)
    llm = ScriptedLLM(fn=webshop_model())
    await agent.run(env, env.tasks()[0], Roles(llm), NullRecorder())
    told = llm.calls[0].messages[0].content + llm.calls[0].messages[-1].content
    assert "within 15 steps" in told and "within 25" not in told
    roomy = FakeShop(episodes=1)
    roomy.max_steps = 40
    llm = ScriptedLLM(fn=webshop_model())
    await AgentKitWebShopAgent(max_steps=10).run(
        roomy, roomy.tasks()[0], Roles(llm), NullRecorder()
    )
    assert "within 10 steps" in llm.calls[0].messages[0].content + llm.calls[0].messages[-1].content
