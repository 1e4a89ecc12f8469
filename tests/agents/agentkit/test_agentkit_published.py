"""agentkit-crafter against the published agent (issue 27), on the real Crafter env
with scripted models that answer like a model would, wrong and malformed answers
included: the plan gate, adaptive questions, the knowledge base, action repeats,
long-term reflection, dependencies and the world."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from test_agentkit_crafter import env_and_task

from lorekit.agents.agentkit import AgentKitCrafterAgent
from lorekit.agents.agentkit.hooks import GATE_FLAGS
from lorekit.agents.agentkit.testing import CRAFTER_QUESTIONS, crafter_model, which
from lorekit.agents.base import NullRecorder
from lorekit.envs.crafter import CrafterTextEnv
from lorekit.llm import Message, Roles, ScriptedLLM

Answer = Callable[[tuple[Message, ...]], str]


def _status(step: dict[str, Any], key: str) -> str:
    return next((n["status"] for n in step["nodes"] if n["key"] == key), "absent")


def _node(step: dict[str, Any], key: str) -> dict[str, Any]:
    return next(n for n in step["nodes"] if n["key"] == key)


def with_gate(per_pass: list[dict[str, str] | str], base: Answer | None = None) -> Answer:
    """The gate answers ``per_pass[i]`` at pass i+1 (a str is a raw, malformed answer
    given once before a well-formed all-no one); other nodes as ``crafter_model``."""
    inner = base or crafter_model(replan_every=999)
    passes = [0]

    def answer(messages: tuple[Message, ...]) -> str:
        if which(messages, CRAFTER_QUESTIONS) != "gate":
            return inner(messages)
        retry = any(m.role == "assistant" for m in messages)
        if not retry:
            passes[0] += 1
        script = per_pass[min(passes[0], len(per_pass)) - 1]
        if isinstance(script, str):
            return json.dumps(dict.fromkeys(GATE_FLAGS, "no")) if retry else script
        return "Thinking it over.\n" + json.dumps({**dict.fromkeys(GATE_FLAGS, "no"), **script})

    return answer


async def run(answer: Answer, steps: int, **options: Any) -> tuple[Any, ScriptedLLM]:
    env, task = env_and_task()
    llm = ScriptedLLM(fn=answer)
    agent = AgentKitCrafterAgent(max_steps=steps, **options)
    traj = await agent.run(env, task, Roles(llm), NullRecorder(), seed=0)
    return traj, llm


# -- 1. the plan gate ------------------------------------------------------------


async def test_any_of_the_seven_gate_answers_replans_and_keeping_skips_kb_add() -> None:
    gate = with_gate(
        [
            {"replan": "yes"},
            {"mistake": "Yes, it walked into the water."},  # a mistake alone re-plans
            {},  # all seven no: keep
            '{"replan": "no"}',  # six answers missing: asked again, then all no
            {"confused": "yes"},
            {"unexpected": "yes"},
        ]
    )
    traj, _ = await run(gate, 6)
    steps = traj.notes["agentkit"]["steps"]
    planned = [s["step"] for s in steps if _status(s, "subgoals") == "ok"]
    assert planned == [1, 2, 5, 6]
    assert [_status(s, "kb_add") for s in steps] == ["ok", "ok", "skipped", "skipped", "ok", "ok"]
    rejected = _node(steps[3], "gate")["rejected"]
    assert len(rejected) == 1 and "'unexpected'" in rejected[0]["why"]
    assert traj.notes["agentkit"]["fallbacks"] == 0


# -- 2. adaptive questions: a dynamic node ---------------------------------------


async def test_adaptive_questions_are_a_node_answered_every_step_while_they_last() -> None:
    base = with_gate([{"replan": "yes"}, {}, {"mistake": "yes"}, {}])
    answered = [0]

    def answer(messages: tuple[Message, ...]) -> str:
        node = which(messages, CRAFTER_QUESTIONS)
        if node == "adaptive" and answered[0] >= 2:
            return "N/A"  # the planner has nothing to ask any more
        if node == "adaptive_answers":
            answered[0] += 1
            return f"Answer #{answered[0]}: the tree is north, nothing in the way."
        return base(messages)

    traj, llm = await run(answer, 4)
    steps = traj.notes["agentkit"]["steps"]
    assert [_status(s, "adaptive_answers") for s in steps] == ["ok", "ok", "skipped", "skipped"]
    assert [_status(s, "adaptive") for s in steps] == ["ok", "skipped", "ok", "skipped"]

    def prompts(node: str) -> list[str]:
        return [
            c.messages[-1].content
            for c in llm.calls
            if which(c.messages, CRAFTER_QUESTIONS) == node
        ]

    assert "How many steps away" in prompts("adaptive_answers")[1]  # the stored questions
    for actor in ("actor_reflect", "actor_plan", "actor_actions"):
        shown = prompts(actor)
        assert "Answer #1" in shown[0] and "Answer #2" in shown[1], actor
        assert "Answer #" not in shown[2], actor  # questions gone: asked without the node
    # the gate's plan check and the top subgoal read the last step's answers
    assert "Answer #1" in prompts("plan_check")[1]
    assert "Answer #2" in prompts("top_subgoal")[1]  # the re-plan at step 3


# -- 3. the knowledge base --------------------------------------------------------


async def test_knowledge_enters_under_five_checks_is_shown_widely_and_is_refined() -> None:
    base = with_gate([{"replan": "yes"}, {"unexpected": "yes"}, {}, {}])
    yes5 = dict.fromkeys(("unknown", "novel", "general", "relevant", "correct"), "Yes.")
    found5 = dict.fromkeys(("discovered", "general", "unknown", "concrete", "solid"), "yes")
    reviews = [0]

    def answer(messages: tuple[Message, ...]) -> str:
        node = which(messages, CRAFTER_QUESTIONS)
        if node == "unknown":
            without_correct = {k: v for k, v in yes5.items() if k != "correct"}
            return "Here is the merged list:\n" + json.dumps(
                {
                    "wood_per_hit": {"info": "wood per do", **yes5},
                    "sapling_odds": {"info": "how often grass gives a sapling", **without_correct},
                    "table_cost": {"info": "wood for a table", **yes5, "novel": "no"},
                }
            )
        if node == "kb_add":
            if "wood_per_hit" not in messages[-1].content.rpartition("Open questions")[2]:
                return "{}"
            guessed = {k: v for k, v in found5.items() if k != "concrete"}
            return json.dumps(
                {
                    "wood_per_hit": {**found5, "discovery": "one do on a tree gives one wood"},
                    "tree_regrowth": {**guessed, "discovery": "trees grow back"},
                }
            )
        if node == "kb_refine":
            reviews[0] += 1
            if reviews[0] == 1:
                return '{"wood_per_hit": {"duplicate": "no"}}'  # fields missing: asked again
            item = {"summary": "the manual says do collects", "duplicate": "no"}
            return json.dumps({"wood_per_hit": {**item, "addition": "no", "contradiction": "no"}})
        return base(messages)

    traj, llm = await run(answer, 4, kb_refine_every=3)
    steps = traj.notes["agentkit"]["steps"]
    unknowns = _node(steps[0], "unknown")["output"]
    assert "wood_per_hit" in unknowns and "sapling_odds" not in unknowns
    assert "table_cost" not in unknowns
    learned = _node(steps[1], "kb_add")["output"]
    assert "wood_per_hit" in learned and "tree_regrowth" not in learned
    # shown to every planner node and to the actor at step 3
    shown = "one do on a tree gives one wood"
    for key in ("reflect", "unexpected", "challenge", "gate", "actor_reflect", "actor_final"):
        third = [c for c in llm.calls if which(c.messages, CRAFTER_QUESTIONS) == key][2]
        assert shown in third.messages[-1].content, key
    # the review at step 3 drops it (it adds nothing to the manual); not before
    assert [_status(s, "kb_refine") for s in steps] == ["skipped", "skipped", "ok", "skipped"]
    review = _node(steps[2], "kb_refine")
    assert len(review["rejected"]) == 1 and "'addition'" in review["rejected"][0]["why"]
    assert "adds nothing to the manual" in review["output"]
    reflects = [c for c in llm.calls if which(c.messages, CRAFTER_QUESTIONS) == "reflect"]
    assert shown not in reflects[3].messages[-1].content


# -- 4. action repeats ------------------------------------------------------------


async def test_repeats_follow_the_published_rule() -> None:
    base = crafter_model(replan_every=999)
    clear = {"obstacles": "no", "hazards": "no"}
    finals = [
        [{"action": "move_north", "repeats": 6, **clear}],
        [{"action": "move_north", "repeats": 3, "obstacles": "no", "hazards": "Yes, a zombie"}],
        [{"action": "move_west", "repeats": "2", "obstacles": "yes", "hazards": "no"}],
        [{"action": "do", "repeats": 5, **clear}],
        [{"action": "noop", "repeats": 3, **clear}],
        [
            {"action": "do", "repeats": 2},  # hazards and obstacles missing
            {"action": "do", "repeats": "a few", **clear},
            {"action": "do", "repeats": 2, **clear},
        ],
    ]
    step = [0]

    def answer(messages: tuple[Message, ...]) -> str:
        if which(messages, CRAFTER_QUESTIONS) != "actor_final":
            return base(messages)
        tries = sum(1 for m in messages if m.role == "assistant")
        if tries == 0:
            step[0] += 1
        script = finals[step[0] - 1]
        return "The first action is clear.\n" + json.dumps(script[min(tries, len(script) - 1)])

    traj, _ = await run(answer, 6)
    assert traj.actions == ["move_north 4", "move_north", "move_west", "do 3", "noop", "do 2"]
    rejected = _node(traj.notes["agentkit"]["steps"][5], "actor_final")["rejected"]
    assert "'obstacles', 'hazards'" in rejected[0]["why"]
    assert "got 'a few'" in rejected[1]["why"]


# -- 5. long-term reflection -------------------------------------------------------


async def test_reflection_after_every_third_flagged_step_one_feedback_per_skill() -> None:
    base = with_gate(
        [
            {"replan": "yes"},
            {"mistake": "Yes: walked into water"},  # flagged 1
            {"unexpected": "yes"},  # re-plans, but no mistake or confusion
            {"confused": "yes"},  # flagged 2
            {},
            {"mistake": "yes"},  # flagged 3: the reflection runs first next step
            {},
            {"replan": "yes"},  # and the skill changes here
            {},
        ]
    )
    skills = [0]

    def answer(messages: tuple[Message, ...]) -> str:
        node = which(messages, CRAFTER_QUESTIONS)
        if node == "skill":
            skills[0] += 1
            name = "CollectResource" if skills[0] < 6 else "FindWater"
            return json.dumps({name: ["a skill", "none", "a guide"]})
        if node == "feed":
            return "1. Walked into water twice. Advice A: look before you step."
        if node == "s_mistakes":
            return "The player walked into water."
        return base(messages)

    traj, llm = await run(answer, 9)
    steps = traj.notes["agentkit"]["steps"]
    assert [s["step"] for s in steps if _status(s, "feed") == "ok"] == [7]
    assert traj.notes["agentkit"]["feeds"] == 1

    def prompts(node: str) -> list[str]:
        return [
            c.messages[-1].content
            for c in llm.calls
            if which(c.messages, CRAFTER_QUESTIONS) == node
        ]

    (fed,) = prompts("feed")
    assert all(f"Step {n}:" in fed for n in (2, 4, 6)), fed
    assert not any(f"Step {n}:" in fed for n in (1, 3, 5))
    assert fed.count("mistakes: The player walked into water.") == 3
    # shown to the planner and the plan sketch while the skill lasts, not after
    for node in ("challenge", "plan_check", "reflect", "actor_plan"):
        seen = ["Advice A" in p for p in prompts(node)]
        assert seen == [False] * 6 + [True, True, False], node


# -- 6. dependencies, history windows, the observation, the five query types ------


async def test_inputs_windows_observation_and_query_types_follow_the_published_graph() -> None:
    env, task = env_and_task()
    names = ("fast", "fast_accurate", "reason", "plan_accurate", "spatial")
    models = {r: ScriptedLLM(fn=crafter_model(replan_every=3)) for r in names}
    traj = await AgentKitCrafterAgent(max_steps=7).run(
        env, task, Roles(models), NullRecorder(), seed=0
    )
    assert len(traj.actions) == 7

    def asked(role: str) -> set[str | None]:
        return {which(c.messages, CRAFTER_QUESTIONS) for c in models[role].calls}

    assert asked("spatial") == {"obs_last_action", "actor_reflect", "actor_plan", "actor_actions"}
    assert asked("fast_accurate") == {"obs_objects"}
    assert asked("plan_accurate") == {"obs_actions"}
    assert {"s_obs", "s_vitals", "s_action", "s_plan", "s_mistakes"} <= asked("fast")
    assert {"achievements", "gate", "actor_final", "obs_changes"} <= asked("reason")

    def last_prompt(node: str) -> str:
        calls = [c for m in models.values() for c in m.calls]
        found = [c for c in calls if which(c.messages, CRAFTER_QUESTIONS) == node]
        return found[-1].messages[-1].content

    # inputs: the actions the observer judged possible reach the achievements and the
    # plan check; the actor's reflection reaches its action choice
    judged = '"do": {"allowed": "yes"}'
    assert judged in last_prompt("achievements") and judged in last_prompt("plan_check")
    assert "(actor_reflect) Everything looks" in last_prompt("actor_actions")
    assert "(obs_objects) Everything looks" in last_prompt("unexpected")
    # history windows at step 7: 3 steps for unexpected and mistake, 5 for the actor
    # (6 steps under one skill), 25 for the reflection
    for node, first in (("unexpected", 4), ("mistake", 4), ("actor_reflect", 2)):
        text = last_prompt(node)
        assert f"Step {first}:" in text and f"Step {first - 1}:" not in text, node
        assert "Step 6:" in text, node
    assert "Step 1:" in last_prompt("reflect")
    # the observation's line about what lies further ahead, and its question
    objects = last_prompt("obs_objects")
    assert "Further to the " in objects and "further to the front" in objects


# -- 7. the world -------------------------------------------------------------------


async def test_the_agent_plays_the_published_world_by_default() -> None:
    import crafter

    from lorekit.agents.registry import agent_description
    from lorekit.envs.crafter.env import NO_LIMIT_STEPS

    env, task = env_and_task()
    assert env.core.area == (256, 256) and env.core.length is None
    assert env.max_steps == NO_LIMIT_STEPS
    described = agent_description("agentkit-crafter")
    assert "256x256" in described and "death" in described
    traj, _ = await run(crafter_model(), 2)
    assert len(traj.actions) == 2
    # the world is crafter.Env(area=(256, 256), seed=s)'s
    env.reset(task, seed=5)
    ref = crafter.Env(area=(256, 256), seed=5)
    ref.reset()
    assert (ref._world._mat_map == env.core.world._mat_map).all()
    assert "Step 0 of unlimited" in env.reset(task, seed=5).text


def test_area_and_no_limit_are_env_options() -> None:
    import pytest

    from lorekit.envs import make

    small = make("crafter", area=64, length=50)
    assert isinstance(small, CrafterTextEnv)
    assert small.core.area == (64, 64) and small.max_steps == 50
    with pytest.raises(ValueError, match="area must be at least 16"):
        make("crafter", area=8)
    with pytest.raises(ValueError, match="or 0: no limit"):
        make("crafter", length=-1)
