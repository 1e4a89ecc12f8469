"""ReAct on TextCraft with scripted models: solves, survives bad answers, and
runs through a real OpenAI-compatible HTTP server."""

import pytest

from lorekit.agents import AdaptAgent, NullRecorder, ReActAgent, make_agent, parse_react
from lorekit.agents.adapt import Executor
from lorekit.envs import Task, make
from lorekit.envs.textcraft import TextCraftEnv
from lorekit.llm import Roles, ScriptedLLM
from lorekit.llm.openai_compat import OpenAICompatLLM
from lorekit.llm.retry import RetryPolicy
from lorekit.llm.testing import Fault, OpenAICompatServer


@pytest.fixture(scope="module")
def env() -> TextCraftEnv:
    e = make("textcraft")
    assert isinstance(e, TextCraftEnv)
    return e


def depth2(env: TextCraftEnv) -> Task:
    return next(t for t in env.tasks("test") if t.group == "depth-2")


def oracle_plan(env: TextCraftEnv, task: Task, seed: int = 0) -> list[str]:
    env.reset(task, seed=seed)
    plan = []
    while (a := env.expert_action()) is not None:
        plan.append(a)
        env.step(a)
    return plan


class ListRecorder:
    def __init__(self) -> None:
        self.rows: list[tuple[str, str, float, bool]] = []

    def add_step(self, observation, action, reward, done, info) -> None:  # type: ignore[no-untyped-def]
        self.rows.append((observation, action, reward, done))


@pytest.mark.parametrize(
    ("answer", "thought", "action", "problem"),
    [
        ("Thought: need sticks\nAction: get 2 bamboo", "need sticks", "get 2 bamboo", None),
        ("Thought: a\nAction: inventory\nAction: get 1 x", "a", "get 1 x", None),
        ("**Action:** `craft 1 stick using 2 bamboo`", None, "craft 1 stick using 2 bamboo", None),
        ("> inventory", None, "inventory", None),
        ("get 1 bamboo", None, "get 1 bamboo", None),
        ("", None, None, "empty"),
        ("Thought: hmm\nAction:", "hmm", None, "empty"),
        ("I think I should\nfirst look around.", None, None, "no line starting"),
    ],
)
def test_parse_react(
    answer: str, thought: str | None, action: str | None, problem: str | None
) -> None:
    t, a, p = parse_react(answer)
    assert (t, a) == (thought, action)
    assert (p is None) == (problem is None)
    if problem:
        assert problem in (p or "")


async def test_react_solves_a_depth2_task(env: TextCraftEnv) -> None:
    task = depth2(env)
    plan = oracle_plan(env, task)
    answers = [f"Thought: step {i}\nAction: {a}" for i, a in enumerate(plan)]
    llm = ScriptedLLM(answers)
    rec = ListRecorder()
    traj = await ReActAgent().run(env, task, Roles(llm), rec, seed=0)
    assert traj.success and traj.stop_reason == "done" and traj.reward == 1.0
    assert traj.actions == plan and [r[1] for r in rec.rows] == plan
    assert len(llm.calls) == len(plan)
    # the prompt carries the manual, the action forms and the observation history
    system, first = llm.calls[-1].messages[0].content, llm.calls[-1].messages[1].content
    assert "get <count> <item>" in system.replace("<n>", "<count>") or "get" in system
    assert "Crafting commands" in first
    assert any(m.content.startswith("Observation:") for m in llm.calls[-1].messages)
    assert llm.calls[0].params.stop == ("\nObservation:",)
    turns = traj.notes["turns"]
    assert len(turns) == len(plan) and turns[0]["thought"] == "step 0"


JUNK = [
    "",
    "I am not sure what to do.\nMaybe later.",
    "Thought: x\nAction:",
    "Action: dance wildly",
    "Action: craft 99 diamond using 1 dirt",
    "Action: get -3 stick",
]


async def test_malformed_and_off_grammar_answers_fail_cleanly(env: TextCraftEnv) -> None:
    task = depth2(env)
    llm = ScriptedLLM(JUNK, default="Thought: ?\nAction: fly to the moon")
    agent = ReActAgent(max_turns=12, patience=None)
    traj = await agent.run(env, task, Roles(llm), NullRecorder(), seed=0)
    assert not traj.success and traj.stop_reason == "budget"
    assert len(llm.calls) == 12
    assert traj.notes["format_errors"] == 3
    # off-grammar actions reached the env and got explanations, not exceptions
    assert len(traj.steps) == 9 and all(not s.info["valid"] for s in traj.steps)
    # the model was told what was wrong with its malformed answers
    fed_back = [m.content for m in llm.calls[-1].messages if "could not be used" in m.content]
    assert len(fed_back) == 3


async def test_patience_ends_a_run_of_invalid_actions(env: TextCraftEnv) -> None:
    """The executor's limit, so ReAct's too: three invalid actions in a row end the run."""
    llm = ScriptedLLM(JUNK, default="Thought: ?\nAction: fly to the moon")
    traj = await ReActAgent(max_turns=12).run(env, depth2(env), Roles(llm), NullRecorder())
    assert traj.stop_reason == "gave_up" and traj.notes["stop"] == "patience"
    assert len(llm.calls) == 6 and len(traj.steps) == 3  # three format errors cost turns only


async def test_env_step_limit_ends_react(env: TextCraftEnv) -> None:
    short = TextCraftEnv(max_steps=3)
    llm = ScriptedLLM(default="Action: inventory")
    traj = await ReActAgent(max_turns=50).run(short, depth2(short), Roles(llm), NullRecorder())
    assert traj.done and not traj.success and len(traj.steps) == 3 and len(llm.calls) == 3


async def test_react_through_local_openai_server(env: TextCraftEnv) -> None:
    task = depth2(env)
    plan = oracle_plan(env, task)
    answers = [f"Thought: go\nAction: {a}\nObservation: (hallucinated)" for a in plan]
    with OpenAICompatServer(answers) as srv:
        srv.inject(Fault.rate_limit(retry_after=0.01))
        srv.inject(Fault.server_error(503))
        llm = OpenAICompatLLM(
            "test-model",
            base_url=srv.base_url,
            retry=RetryPolicy(max_attempts=4, base_delay_s=0.01),
        )
        traj = await ReActAgent().run(env, task, Roles({"executor": llm}), NullRecorder(), seed=0)
        await llm.aclose()
        assert traj.success and traj.actions == plan
        assert srv.request_count == len(plan) + 2  # two faults retried
        assert all(r.body.get("stop") == ["\nObservation:"] for r in srv.requests)


def test_registry() -> None:
    assert make_agent("react", max_turns=5).name == "react"
    with pytest.raises(KeyError, match="known agents"):
        make_agent("genius")
    with pytest.raises(TypeError, match="takes no argument"):
        make_agent("oracle", temperature=1)
    with pytest.raises(ValueError, match="max_turns"):
        ReActAgent(max_turns=0)


async def test_react_is_the_adapt_executor_alone(env: TextCraftEnv) -> None:
    """One ReAct loop: ``react`` and ADaPT at d_max=1 send the same prompts, turn by
    turn, and stop by the same limits; only ReAct's default turn budget is larger."""
    task = depth2(env)
    answers = [
        "Thought: look\nAction: inventory",
        "Action: get 1 oak log",
        "oops\nno",
        "Action: failed",
    ]
    react_llm, adapt_llm = ScriptedLLM(answers), ScriptedLLM(answers)
    t1 = await ReActAgent().run(env, task, Roles(react_llm), NullRecorder(), seed=0)
    planner = ScriptedLLM(default="")
    t2 = await AdaptAgent(d_max=1).run(
        env, task, Roles({"executor": adapt_llm, "planner": planner}), NullRecorder(), seed=0
    )
    assert [c.messages for c in react_llm.calls] == [c.messages for c in adapt_llm.calls]
    assert [c.params for c in react_llm.calls] == [c.params for c in adapt_llm.calls]
    assert t1.actions == t2.actions and planner.calls == []
    assert t1.notes["subtasks"] == t2.notes["subtasks"]
    # the same turn limit, counted the same way (an unusable answer costs a turn)
    for agent in (ReActAgent(max_turns=4), AdaptAgent(d_max=1, executor_turns=4)):
        llm = ScriptedLLM(["junk\nmore junk"], default="Action: inventory")
        traj = await agent.run(env, task, Roles(llm), NullRecorder(), seed=0)
        assert len(llm.calls) == 4 and traj.notes["subtasks"][0]["stop"] == "turns"
    # the budget: d_max x the executor's turns, as the paper gives ReAct
    assert isinstance(ReActAgent().executor, Executor)
    assert ReActAgent().max_turns == AdaptAgent().d_max * AdaptAgent().executor.max_turns
