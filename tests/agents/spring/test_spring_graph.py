"""The question graph: SPRING's nine questions and eleven edges, a DAG ending in
``action``, each question seeing its dependencies' answers (and no other node's)
and the last two observations, committed in order."""

from __future__ import annotations

import re

from _spring_support import task_of

from lorekit.agents.base import NullRecorder
from lorekit.agents.spring import SpringAgent
from lorekit.agents.spring.agent import SPEC_PATH
from lorekit.agents.spring.testing import QUESTIONS, spring_model, which_question
from lorekit.envs.crafter import CrafterTextEnv
from lorekit.graph.spec import load_spec
from lorekit.llm import Message, Roles, ScriptedLLM

EXPECTED_DAG = {
    "last": [],
    "outcome": ["last"],
    "scene": [],
    "ready": ["scene"],
    "subgoals": ["scene", "ready"],
    "first": ["subgoals"],
    "options": ["first"],
    "feasible": ["options"],
    "action": ["last", "outcome", "options", "feasible"],
}
"""SPRING's published question dependencies (its notebook), with our node names."""


def test_spec_is_springs_nine_question_dag_ending_in_action() -> None:
    spec = load_spec(SPEC_PATH)
    graph = spec.build()
    assert {k: list(graph.deps(k)) for k in graph.nodes} == EXPECTED_DAG
    assert sum(len(deps) for deps in EXPECTED_DAG.values()) == 11
    # `action` is the only sink: every question feeds the action, directly or not
    feeds = {d for deps in EXPECTED_DAG.values() for d in deps}
    assert set(EXPECTED_DAG) - feeds == {"action"}


def test_each_question_phrase_belongs_to_one_node() -> None:
    """The scripted model tells questions apart by these phrases; each must be in
    its own node's prompt and in no other's."""
    spec = load_spec(SPEC_PATH)
    for node in spec.nodes:
        holders = [k for k, phrase in QUESTIONS.items() if phrase in node.prompt]
        assert holders == [node.key]


def _tagging_model() -> tuple[ScriptedLLM, list[tuple[str, str]]]:
    """Answers each node with a unique tag (the action node with a real action)."""
    seen: list[tuple[str, str]] = []

    def answer(messages: tuple[Message, ...]) -> str:
        node = which_question(messages)
        assert node is not None
        prompt = "\n".join(m.content for m in messages)
        seen.append((node, prompt))
        return "Action: move_west" if node == "action" else f"TAG-{node}-ANSWER"

    return ScriptedLLM(fn=answer), seen


async def test_every_question_sees_exactly_its_dependencies(crafter: CrafterTextEnv) -> None:
    for sequential in (False, True):
        llm, seen = _tagging_model()
        agent = SpringAgent(max_steps=1, sequential=sequential)
        traj = await agent.run(crafter, task_of(crafter), Roles(llm), NullRecorder(), seed=0)
        assert traj.actions == ["move_west"]
        asked = [node for node, _ in seen]
        assert sorted(asked) == sorted(EXPECTED_DAG)  # each question once
        for node, prompt in seen:
            tags = set(re.findall(r"TAG-(\w+)-ANSWER", prompt))
            assert tags == set(EXPECTED_DAG[node]), node
        # commit order: every node after its dependencies
        order = [n["key"] for n in traj.notes["spring"]["steps"][0]["nodes"]]
        for node, deps in EXPECTED_DAG.items():
            assert all(order.index(d) < order.index(node) for d in deps)
        if sequential:  # one call at a time: the asking order is a topological order too
            assert all(
                asked.index(d) < asked.index(node)
                for node, deps in EXPECTED_DAG.items()
                for d in deps
            )


async def test_every_question_sees_the_last_two_observations(crafter: CrafterTextEnv) -> None:
    llm = ScriptedLLM(fn=spring_model())
    traj = await SpringAgent(max_steps=2).run(
        crafter, task_of(crafter), Roles(llm), NullRecorder(), seed=0
    )
    first, second = llm.calls[:9], llm.calls[9:18]
    assert {which_question(c.messages) for c in second} == set(EXPECTED_DAG)
    for call in first:
        prompt = "\n".join(m.content for m in call.messages)
        assert "Your last action: (none: this is the first step)" in prompt
        assert traj.initial_observation in prompt
    for call in second:
        prompt = "\n".join(m.content for m in call.messages)
        before, now = prompt.split(f"Your last action: {traj.actions[0]}")
        assert traj.initial_observation in before
        assert traj.steps[0].observation in now
    goal = "Your goal: Unlock the achievement collect_wood."
    assert all(
        goal in c.messages[-1].content
        for c in llm.calls
        if which_question(c.messages) == "subgoals"
    )
