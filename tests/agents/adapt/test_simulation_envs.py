"""The scripted ALFWorld and WebShop executors of ``reproduce run --simulate``: they
read the prompt's room, goal and pages and answer in the ADaPT family's format."""

from __future__ import annotations

from lorekit.agents.adapt.testing.envs import alfworld_executor, planner, webshop_executor
from lorekit.agents.simulated import describe, simulated_roles, supported
from lorekit.llm.base import Message

SYSTEM = Message("system", "Act in the house. Commands: put <object> in/on <receptacle>.")
ROOM = (
    "You are in the middle of a room. Looking quickly around you, you see a cabinet 1, "
    "a countertop 1, and a fridge 1.\n\nGoal: put some lettuce on countertop\n"
)


def _say(action: str) -> Message:
    return Message("assistant", f"Thought: next.\nAction: {action}")


def _action(answer: str) -> str:
    return answer.split("Action: ")[1]


def test_the_alfworld_executor_searches_takes_and_places() -> None:
    act = alfworld_executor()
    turns: list[Message] = [SYSTEM, Message("user", ROOM)]
    assert _action(act(tuple(turns))) == "go to cabinet 1"
    turns += [_say("go to cabinet 1"), Message("user", "Observation: The cabinet 1 is closed.")]
    assert _action(act(tuple(turns))) == "open cabinet 1"
    turns += [_say("open cabinet 1"), Message("user", "Observation: In it, you see a cup 1.")]
    assert _action(act(tuple(turns))) == "go to countertop 1"
    seen = "Observation: On the countertop 1, you see a lettuce 2."
    turns += [_say("go to countertop 1"), Message("user", seen)]
    assert _action(act(tuple(turns))) == "take lettuce 2 from countertop 1"
    picked = "Observation: You pick up the lettuce 2 from the countertop 1."
    turns += [_say("take lettuce 2 from countertop 1"), Message("user", picked)]
    assert _action(act(tuple(turns))) == "go to countertop 1"
    turns += [_say("go to countertop 1"), Message("user", "Observation: You arrive.")]
    assert _action(act(tuple(turns))) == "put lettuce 2 in/on countertop 1"
    turns += [_say("put lettuce 2 in/on countertop 1"), Message("user", "Observation: Done.")]
    assert _action(act(tuple(turns))) == "completed"


def test_the_webshop_executor_searches_opens_picks_and_buys() -> None:
    act = webshop_executor()
    goal = "Goal: i need a white mug with color: white, and price lower than 20.00 dollars\n"
    turns: list[Message] = [SYSTEM, Message("user", "WebShop [SEP] Search\n" + goal)]
    assert _action(act(tuple(turns))) == "search[i need a white mug]"
    results = "Observation: [SEP] Next > [SEP] B0ABCDEFGH [SEP] Mug [SEP] $9.0"
    turns += [_say("search[i need a white mug]"), Message("user", results)]
    assert _action(act(tuple(turns))) == "click[B0ABCDEFGH]"
    page = "Observation: [SEP] color [SEP] black [SEP] white [SEP] Mug [SEP] Buy Now"
    turns += [_say("click[B0ABCDEFGH]"), Message("user", page)]
    assert _action(act(tuple(turns))) == "click[white]"
    turns += [_say("click[white]"), Message("user", page)]
    assert _action(act(tuple(turns))) == "click[Buy Now]"


def test_the_planner_restates_the_goal_as_one_step() -> None:
    answer = planner()((SYSTEM, Message("user", ROOM)))
    assert "Step 1: put some lettuce on countertop\nExecution order: Step 1" in answer


def test_the_registry_names_what_answers_each_pair() -> None:
    assert supported("alfworld", "adapt") and not supported("crafter", "react")
    assert "scripted webshop executor" in describe("webshop", "reflexion")
    roles = simulated_roles("alfworld", {}, "automanual")
    assert {"planner", "builder", "consolidator", "formulator"} <= set(roles)
    assert roles["executor"].model == "simulated-automanual-planner"  # the default role
