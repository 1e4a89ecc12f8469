"""Skills written for the published AutoManual agent run unchanged on LoreKit's ALFWorld.

The published agent's names (``take_from``, ``put_in_or_on``, ``heat_with``,
``cool_with``, ``clean_with``), its attributes (``agent.holding`` reading
"nothing" when the hand is empty, ``agent.location``), the state line after
each action, and ``go_to`` the place one stands at showing it again. The
skills below are written here in that style (not copied from anywhere).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

pytest.importorskip("textworld", reason="the alfworld extra is not installed")

from _planner_support import ISOLATION, LIMITS, answer, skill

from lorekit.agents.automanual.core import Outcome
from lorekit.agents.automanual.planner import Planner
from lorekit.agents.automanual.profiles import profile_for
from lorekit.agents.base import Episode
from lorekit.envs import make
from lorekit.llm import ScriptedLLM
from lorekit.llm.roles import Roles
from lorekit.sandbox import WorkerPool

PROFILE = profile_for("alfworld")

HELPERS = '''
def search_for(agent, places, name):
    """Visit places in order (opening closed ones); the ids of name seen and where."""
    for place in places:
        seen = agent.go_to(place)
        if "closed" in seen:
            seen = agent.open(place)
        ids = get_object_with_id(seen, name)
        if ids:
            return ids, place
    return [], None


def carry_to(agent, place, thing):
    """Go to place (opening it if closed) and put the held thing in or on it."""
    seen = agent.go_to(place)
    if "closed" in seen:
        seen = agent.open(place)
    return agent.put_in_or_on(thing, place)
'''

CHANGE = {  # task type -> (published method, the appliance's type)
    "pick_clean_then_place_in_recep": ("clean_with", "sinkbasin"),
    "pick_heat_then_place_in_recep": ("heat_with", "microwave"),
    "pick_cool_then_place_in_recep": ("cool_with", "fridge"),
}


def published_skill(task_type: str, opening: str) -> str:
    """A skill in the published style for one task, from its opening alone."""
    places = re.findall(r"\b[a-z]+_\d+\b", opening.split("Your task is to:")[0])
    goal = opening.split("Your task is to:")[1].strip().rstrip(".")
    state = r"(?:(?:cool|hot|cleaned|clean) )?"
    words = re.match(rf"(?:put|clean|heat|cool) (?:a|some) {state}(\w+) .*?(?:in|on) (\w+)$", goal)
    assert words, goal
    name, target = words.groups()
    target = next(p for p in places if p.startswith(target + "_"))
    code = (
        HELPERS
        + f"""
assert agent.holding == "nothing" and agent.location == "middle of room"
# [Step 1] Find a {name} and take it
ids, found_at = search_for(agent, {places!r}, {name!r})
assert ids, "Error in [Step 1]: no {name} found"
thing = ids[0]
agent.take_from(thing, found_at)
assert agent.holding == thing, "Error in [Step 1]: could not take " + thing
assert agent.location == found_at
"""
    )
    if task_type in CHANGE:
        method, kind = CHANGE[task_type]
        where = next(p for p in places if p.startswith(kind + "_"))
        code += f"""
# [Step 2] {method} {where}
agent.go_to({where!r})
seen = agent.{method}(thing, {where!r})
assert "Nothing happens" not in seen, "Error in [Step 2]: " + seen
"""
    code += f"""
# [Step 3] Put it in/on {target}
seen = carry_to(agent, {target!r}, thing)
"""
    return code


@pytest.fixture(scope="module")
def pool() -> Iterator[WorkerPool]:
    with WorkerPool(size=2, isolation=ISOLATION) as shared:
        yield shared


def first_task(task_type: str) -> str:
    env = make("alfworld", split="dev", **PROFILE.env_options)
    return next(t.id for t in env.tasks() if t.group == task_type)


@pytest.mark.parametrize("task_type", ["pick_and_place_simple", *sorted(CHANGE)])
async def test_a_published_style_skill_solves_the_task(pool: WorkerPool, task_type: str) -> None:
    env = make("alfworld", split="dev", max_steps=50, **PROFILE.env_options)
    ep = await Episode.start(env, first_task(task_type))
    opening = PROFILE.opening(ep.trajectory.initial_observation)
    code = published_skill(task_type, opening)
    llm = ScriptedLLM([answer(code), skill(code)])
    planned = await Planner(PROFILE, limits=LIMITS, pool=pool).play(
        ep, Roles(llm), rules_text="", episode_id="pub-1", task_type=task_type
    )
    turn = planned.turns[0]
    assert turn.error is None, turn.feedback
    assert ep.trajectory.success and planned.outcome is Outcome.DIRECT_SUCCESS


async def test_state_line_revisit_task_sentence_limit_and_notice(pool: WorkerPool) -> None:
    env = make("alfworld", split="dev", max_steps=50, **PROFILE.env_options)
    ep = await Episode.start(env, PROFILE.example.task_id)
    code = """
first = agent.go_to('toilet_1')
again = agent.go_to('toilet_1')
print(agent.location, agent.holding)
print(again.split(" You are at")[0] == first.split(" You are at")[0])
agent.take('soapbottle_2', 'toilet_1')
print(agent.holding)
"""
    llm = ScriptedLLM(
        [answer(code), answer("print(1)"), answer("print(2)"), answer("print(3)"), "x"]
    )
    planned = await Planner(PROFILE, limits=LIMITS, pool=pool).play(
        ep, Roles(llm), rules_text="", episode_id="pub-2", task_type="pick_and_place_simple"
    )
    feedback = planned.turns[0].feedback
    assert planned.turns[0].error is None, feedback
    assert "You are at toilet_1 and holding nothing." in feedback
    assert "You are at toilet_1 and holding soapbottle_2." in feedback
    assert "Nothing happens" not in feedback  # the second go_to showed the place again
    assert "toilet_1 nothing\nTrue\nsoapbottle_2" in feedback
    assert "the task is not completed" in feedback
    system, first = (m.content for m in llm.calls[0].messages[:2])
    assert "at most 50 actions" in system
    assert "agent.take_from(" in system and "agent.holding: str" in system
    assert "agent.take(" not in system  # the alias works but is not offered
    assert "-= Welcome" not in first
    assert "towelholder_1.\nYour task is to: put a soapbottle in drawer." in first
