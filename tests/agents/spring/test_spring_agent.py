"""The SPRING agent plays Crafter: a short episode, unusable answers, failures, budgets."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _spring_support import task_of

from lorekit.agents import graph_pass, make_agent
from lorekit.agents.base import NullRecorder
from lorekit.agents.spring import SpringAgent, SpringPassError
from lorekit.agents.spring.agent import SPEC_PATH
from lorekit.agents.spring.testing import spring_model, which_question
from lorekit.envs.crafter import CrafterTextEnv
from lorekit.llm import Message, Roles, ScriptedLLM
from lorekit.llm.errors import LLMError


class Steps:
    def __init__(self) -> None:
        self.actions: list[str] = []
        self.valid: list[bool] = []

    def add_step(self, observation: str, action: str, reward: float, done: bool, info: Any) -> None:
        self.actions.append(action)
        self.valid.append(bool(info.get("valid")))


async def test_a_short_episode_collects_wood(crafter: CrafterTextEnv) -> None:
    llm = ScriptedLLM(fn=spring_model())
    rec = Steps()
    traj = await SpringAgent().run(crafter, task_of(crafter), Roles(llm), rec, seed=0)
    assert traj.success and traj.stop_reason == "done" and traj.reward == 1.0
    assert traj.actions[-1] == "do" and rec.actions == traj.actions and all(rec.valid)
    log = traj.notes["spring"]
    assert len(log["steps"]) == len(traj.actions) and log["fallbacks"] == 0
    assert len(llm.calls) == 9 * len(traj.actions)
    for step, action in zip(log["steps"], traj.actions, strict=True):
        assert step["action"] == action and step["fallback"] is False
        assert [n["key"] for n in step["nodes"]][-1] == "action"
        assert all(n["status"] == "ok" and n["answer"] for n in step["nodes"])
        assert step["nodes"][-1]["output"] == action  # parsed from "Action: ..."


async def test_an_invalid_action_is_asked_again_with_the_reason(crafter: CrafterTextEnv) -> None:
    llm = ScriptedLLM(fn=spring_model(invalid=1))
    traj = await SpringAgent(max_steps=2).run(
        crafter, task_of(crafter), Roles(llm), NullRecorder(), seed=0
    )
    assert traj.actions == ["move_west", "move_west"]  # the model's choice, after one re-ask
    assert len(llm.calls) == 2 * 10
    node = traj.notes["spring"]["steps"][0]["nodes"][-1]
    assert node["key"] == "action" and node["status"] == "ok"
    assert "is not an allowed action" in node["rejected"][0]["why"]
    retry = [c for c in llm.calls if which_question(c.messages) == "action"][1]
    assert retry.messages[-2].role == "assistant"  # the refused answer, then the reason
    assert "is not an allowed action" in retry.messages[-1].content
    assert traj.notes["spring"]["fallbacks"] == 0


async def test_unusable_answers_end_in_a_recorded_noop(crafter: CrafterTextEnv) -> None:
    llm = ScriptedLLM(fn=spring_model(invalid=99))
    rec = Steps()
    traj = await SpringAgent(max_steps=3).run(crafter, task_of(crafter), Roles(llm), rec, seed=0)
    assert traj.actions == ["noop"] * 3 and rec.actions == traj.actions
    assert traj.stop_reason == "budget" and not traj.success
    log = traj.notes["spring"]
    assert log["fallbacks"] == 3
    step = log["steps"][0]
    assert step["fallback"] is True and step["action"] == "noop"
    assert step["reason"].startswith("action:")
    action_node = step["nodes"][-1]
    assert action_node["status"] == "failed" and len(action_node["rejected"]) == 3
    # three tries per step (the spec's max_retries is 2), eight other questions
    assert len(llm.calls) == 3 * (8 + 3)


async def test_a_failed_model_call_ends_the_episode_with_an_error(
    crafter: CrafterTextEnv,
) -> None:
    def answer(messages: tuple[Message, ...]) -> str:
        if which_question(messages) == "first":
            raise LLMError("the server went away")
        return spring_model()(messages)

    agent = SpringAgent(max_steps=3)
    with pytest.raises(SpringPassError, match="step 1: node 'first' failed \\(model\\)"):
        await agent.run(crafter, task_of(crafter), Roles(ScriptedLLM(fn=answer)), NullRecorder())


async def test_the_step_budget_stops_the_agent(crafter: CrafterTextEnv) -> None:
    llm = ScriptedLLM(fn=spring_model(seek="diamond"))  # none in view: walks west
    traj = await SpringAgent(max_steps=4).run(
        crafter, task_of(crafter), Roles(llm), NullRecorder(), seed=0
    )
    assert traj.actions == ["move_west"] * 4 and traj.stop_reason == "budget"


def test_options_are_checked_when_the_agent_is_made(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="max_steps must be a whole number >= 1"):
        make_agent("spring", max_steps=0)
    with pytest.raises(ValueError, match="written for crafter only"):
        SpringAgent().env_defaults("textcraft")
    assert SpringAgent().env_defaults("crafter") == {}
    assert SpringAgent().model_roles == ("reasoner",)
    no_action = tmp_path / "short.yaml"
    no_action.write_text(
        "database: {observation: null}\nnodes:\n  think: {prompt: 'Look: {observation}'}\n"
    )
    with pytest.raises(ValueError, match="needs a node 'action'"):
        make_agent("spring", spec=str(no_action))
    unknown = tmp_path / "unknown.yaml"
    unknown.write_text(
        "database: {mood: null}\nnodes:\n  action: {prompt: 'Feeling {mood}. Action?'}\n"
    )
    with pytest.raises(ValueError, match="database keys \\['mood'\\] have no value"):
        make_agent("spring", spec=str(unknown))


async def test_a_custom_spec_without_the_check_falls_back_on_unknown_actions(
    crafter: CrafterTextEnv, tmp_path: Path
) -> None:
    """A user's spec may leave out the hook; the agent still refuses what is not an action."""
    spec = tmp_path / "two.yaml"
    spec.write_text(
        SPEC_PATH.read_text().split("nodes:")[0]
        + "nodes:\n"
        + "  look: {prompt: 'Observation: {observation}. What now?'}\n"
        + "  action: {deps: [look], prompt: 'Allowed: {actions}. Name one.'}\n"
    )
    answers = iter(["Walk west.", "move_west", "Chop.", "chop the tree"])
    llm = ScriptedLLM(fn=lambda messages: next(answers))
    traj = await SpringAgent(spec=str(spec), max_steps=2).run(
        crafter, task_of(crafter), Roles(llm), NullRecorder(), seed=0
    )
    assert traj.actions == ["move_west", "noop"]
    second = traj.notes["spring"]["steps"][1]
    assert second["fallback"] and "'chop the tree' is not an allowed action" in second["reason"]


@pytest.mark.parametrize("skip_asleep", [True, False])
async def test_no_questions_while_asleep(crafter: CrafterTextEnv, skip_asleep: bool) -> None:
    """Crafter ignores actions while the player sleeps; by default the agent does not ask."""

    def answer(messages: tuple[Message, ...]) -> str:
        return "Action: sleep" if which_question(messages) == "action" else "Tired."

    llm = ScriptedLLM(fn=answer)
    agent = SpringAgent(max_steps=40, skip_asleep=skip_asleep)
    traj = await agent.run(crafter, task_of(crafter), Roles(llm), NullRecorder(), seed=0)
    steps = traj.notes["spring"]["steps"]
    asleep = [s for s in steps if s.get("asleep")]
    asked = [s for s in steps if not s.get("asleep")]
    assert len(steps) == len(traj.actions) == 40
    assert len(llm.calls) == 9 * len(asked)
    if skip_asleep:  # energy drops after ~30 steps; then sleep works and the rest is asleep
        assert asleep and all(s["action"] == "noop" for s in asleep)
        assert all("Status: asleep" in traj.steps[s["step"] - 2].observation for s in asleep)
        assert traj.actions[: len(asked)] == ["sleep"] * len(asked)
    else:
        assert not asleep and traj.actions == ["sleep"] * 40
        assert any("Status: asleep" in s.observation for s in traj.steps)


async def test_a_hook_that_raises_ends_the_episode(crafter: CrafterTextEnv, tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text("def boom(ctx, output):\n    raise RuntimeError('bug')\n")
    spec = tmp_path / "bad.yaml"
    spec.write_text(
        SPEC_PATH.read_text().split("nodes:")[0]
        + "nodes:\n"
        + "  action: {prompt: 'Allowed: {actions}. Name one.', after_query: 'bad.py:boom'}\n"
    )
    llm = ScriptedLLM(fn=lambda messages: "Action: noop")
    with pytest.raises(SpringPassError, match=r"node 'action' failed \(hook\).*bug"):
        await SpringAgent(spec=str(spec)).run(
            crafter, task_of(crafter), Roles(llm), NullRecorder(), seed=0
        )


async def test_notes_keep_answers_for_the_first_steps_only(crafter: CrafterTextEnv) -> None:
    llm = ScriptedLLM(fn=spring_model(invalid=1))
    traj = await SpringAgent(max_steps=3, note_steps=1).run(
        crafter, task_of(crafter), Roles(llm), NullRecorder(), seed=0
    )
    first, *later = traj.notes["spring"]["steps"]
    assert all(n["answer"] for n in first["nodes"])
    for step in later:
        assert all(n["answer"] is None and n["tokens"] > 0 for n in step["nodes"])
        assert step["nodes"][-1]["output"] == step["action"]
        assert "is not an allowed action" in step["nodes"][-1]["rejected"][0]["why"]


def test_a_rested_sleeper_is_asked_for_its_action(crafter: CrafterTextEnv) -> None:
    """Asleep at full energy, crafter wakes the player at the next step and carries
    out the chosen action (objects.py): that step is not to be skipped as ignored."""
    from lorekit.envs.crafter.textobs import describe

    crafter.reset(seed=0)
    core = crafter.core
    player = core.players[0]
    px, py = (int(v) for v in player.pos)
    obj = core.world[(px, py + 1)][1]
    if obj is not None:
        core.world.remove(obj)
    core.world[(px, py + 1)] = "tree"
    player.facing = (0, 1)
    player.sleeping = True
    player.inventory["energy"] = 9
    rested = describe(core)
    assert "Status: asleep" in rested and "ignored" not in rested
    log: dict[str, Any] = {"steps": []}
    assert graph_pass.asleep_step(rested, 1, log, "noop") is None  # ask the model
    core.step(["do"])  # and crafter does carry the action out
    assert player.inventory["wood"] == 1 and not player.sleeping
    player.sleeping = True
    player.inventory["energy"] = 5
    tired = describe(core)
    assert "ignored" in tired and graph_pass.asleep_step(tired, 2, log, "noop") == "noop"
