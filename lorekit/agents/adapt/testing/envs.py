"""Scripted ALFWorld and WebShop models for the ADaPT family, for offline checks.

They answer the prompts of ReAct, Plan-and-Execute, Try-Again, Reflexion and
ADaPT (``Thought: ... / Action: ...`` turns, ``Step N`` plans, ``Reflection:``
lessons) the way a weak but well-formatted model would, so ``lorekit reproduce
run --simulate`` can play every row of a table end to end without a model
service. They are plumbing, not players: what they score says nothing about a
method, and the reproduce summary says the answers came from scripted models.

- ALFWorld executor: reads the room from the first observation and the goal
  (``put some X on Y``); visits the receptacles in turn, opens closed ones,
  takes an X when one is seen, then goes to a Y and puts it there. Tasks that
  also need a state change (clean, heat, cool, look) are not attempted beyond
  that, which is enough to exercise the harness.
- WebShop executor: searches the goal's words, opens the first product of the
  results, clicks the options the goal names (``color: white``) and buys.
- Planner: a one-step plan restating the goal. Reflection: a generic lesson.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from lorekit.agents.adapt.testing import code as code_simulation
from lorekit.llm.base import Message
from lorekit.llm.roles import Roles

ModelFn = Callable[[tuple[Message, ...]], str]

_GOAL = re.compile(r"^Goal: (.+)$", re.MULTILINE)
_ROOM = re.compile(r"you see (.+?)\.(?:\n|$)")
_PUT_GOAL = re.compile(r"put (?:a |some |an |two )?(?:\w+ )*?(\w+) (?:in|on|in/on) (\w+)")
_ACTION = re.compile(r"^Action: (.+)$", re.MULTILINE)
_PRODUCT = re.compile(r"\[SEP\] (B0[0-9A-Z]{8}) \[SEP\]")
_OPTION = re.compile(r"(\w+): ([\w .-]+?)(?:,| and|$)")
_SEP = " [SEP] "


def _say(thought: str, action: str) -> str:
    return f"Thought: {thought}\nAction: {action}"


def _goal(messages: tuple[Message, ...]) -> str:
    for message in messages[1:]:
        found = _GOAL.search(message.content)
        if found:
            return found.group(1).strip()
    return ""


def _turns(messages: tuple[Message, ...]) -> list[tuple[str, str]]:
    """(action, observation) of each earlier turn of this executor run."""
    out = []
    for i, m in enumerate(messages[2:], start=2):
        if m.role != "assistant":
            continue
        action = _ACTION.search(m.content)
        following = messages[i + 1].content if i + 1 < len(messages) else ""
        out.append((action.group(1).strip() if action else "", following))
    return out


def planner() -> ModelFn:
    """A one-step plan: the goal itself (ADaPT and Plan-and-Execute parse it)."""

    def plan(messages: tuple[Message, ...]) -> str:
        goal = _goal(messages) or "finish the task"
        return f"Thought: I do it in one go.\nStep 1: {goal}\nExecution order: Step 1"

    return plan


def _reflection() -> str:
    return "Reflection: I should look in places I have not visited yet."


def _bare(place: str) -> str:
    """``and a drawer 2`` -> ``drawer 2``."""
    return place.strip().removeprefix("and ").removeprefix("a ").removeprefix("an ")


def _taken(action: str) -> str:
    """``take apple 1 from fridge 1`` -> ``apple 1``."""
    return action.split(" from ")[0].removeprefix("take ")


def alfworld_executor(*, max_visits: int = 12) -> ModelFn:
    """The ALFWorld executor (and reflector); see the module docstring."""

    def act(messages: tuple[Message, ...]) -> str:
        if "Reflection:" in messages[0].content:
            return _reflection()
        first = messages[1].content
        room = _ROOM.search(first)
        places = [_bare(p) for p in room.group(1).split(", ")] if room else []
        goal = _PUT_GOAL.search(_goal(messages))
        turns = _turns(messages)
        if goal is None or not places:
            return _say("I cannot tell what to do here.", "failed")
        thing, target = goal.groups()
        held = next((_taken(a) for a, o in turns if o.startswith("Observation: You pick")), None)
        put_form = "put <object> in/on <receptacle>" in messages[0].content
        if held is not None:
            dest = next((p for p in places if p.startswith(target + " ")), None)
            last = turns[-1][0] if turns else ""
            if dest is None:
                return _say("There is nowhere to put it.", "failed")
            if last.startswith(("put ", "move ")):
                return _say("It is in place.", "completed")
            if last == f"go to {dest}":
                verb = f"put {held} in/on {dest}" if put_form else f"move {held} to {dest}"
                return _say(f"I place the {thing}.", verb)
            return _say(f"I bring the {thing} to the {target}.", f"go to {dest}")
        if turns:
            action, seen = turns[-1]
            found = re.search(rf"\b({re.escape(thing)} \d+)", seen)
            if found and action.startswith(("go to ", "open ")):
                where = action.split(" ", 2)[-1] if action.startswith("go to") else action[5:]
                return _say(f"There is a {thing}.", f"take {found.group(1)} from {where}")
            if "is closed" in seen and action.startswith("go to "):
                return _say("It is closed.", f"open {action[6:]}")
        visited = [a[6:] for a, _ in turns if a.startswith("go to ")]
        todo = [p for p in places if p not in visited]
        if not todo or len(visited) >= max_visits:
            return _say(f"I did not find a {thing}.", "failed")
        return _say(f"I look for a {thing}.", f"go to {todo[0]}")

    return act


def webshop_executor() -> ModelFn:
    """The WebShop executor (and reflector); see the module docstring."""

    def act(messages: tuple[Message, ...]) -> str:
        if "Reflection:" in messages[0].content:
            return _reflection()
        goal = _goal(messages)
        turns = _turns(messages)
        last_action, seen = turns[-1] if turns else ("", messages[1].content)
        if last_action == "click[Buy Now]":
            return _say("Bought.", "completed")
        options = [v.strip() for _, v in _OPTION.findall(goal.split(" with ", 1)[-1])]
        options = [o for o in options if not o[:1].isdigit()]
        clicked = {a[6:-1] for a, _ in turns if a.startswith("click[")}
        if "Buy Now" in seen:
            for option in options:
                if f"{_SEP}{option}{_SEP}" in seen and option not in clicked:
                    return _say(f"I pick {option}.", f"click[{option}]")
            return _say("I buy it.", "click[Buy Now]")
        product = _PRODUCT.search(seen)
        if product and not last_action.startswith("click[B0"):
            return _say("I open the first product.", f"click[{product.group(1)}]")
        if "search[" in seen or not turns:
            words = goal.split(" with ", 1)[0].split(", and price")[0]
            return _say("I search for it.", f"search[{words}]")
        return _say("I cannot find it.", "failed")

    return act


# ------------------------------------------------------------------ roles
CAPABILITY = 2
"""The scripted TextCraft executor of ``reproduce --simulate`` keeps this many
crafting levels in mind ..."""
NOISE = 0.1
"""... and declares success too early on this share of its turns."""


def textcraft_roles(env_kwargs: Mapping[str, Any]) -> Roles:
    """ADaPT's TextCraft study models (:mod:`lorekit.agents.adapt.testing.textcraft`), reading
    the recipes of the env built with ``env_kwargs``."""
    from lorekit.agents.adapt.testing.textcraft import (
        SimulatedLLM,
        textcraft_executor,
        textcraft_planner,
    )
    from lorekit.envs import make

    env = make("textcraft", **dict(env_kwargs))
    try:
        book = env.book  # type: ignore[attr-defined]
    finally:
        env.close()
    executor = SimulatedLLM(
        _either("textcraft", textcraft_executor(book, capability=CAPABILITY, noise=NOISE),
                code_simulation.textcraft_code_executor()),
        model="simulated-textcraft-executor",
    )  # fmt: skip
    planner = SimulatedLLM(
        _either("textcraft", textcraft_planner(book), code_simulation.textcraft_code_planner()),
        model="simulated-textcraft-planner",
    )
    return Roles({"default": executor, "planner": planner})


def _either(env: str, lorekit: Callable[..., str], code: ModelFn) -> Callable[..., str]:
    """Answer the ``code``/``paper`` profiles' prompts with ``code``, the rest with ``lorekit``."""

    def answer(messages: tuple[Message, ...], draw: int = 0) -> str:
        if code_simulation.is_code_prompt(messages, env):
            return code(messages)
        return lorekit(messages, draw) if draw else lorekit(messages)

    return answer


def alfworld_roles(env_kwargs: Mapping[str, Any]) -> Roles:
    """The ALFWorld executor (every role but the planner) and the one-step planner; the
    ``code``/``paper`` profiles' transcript prompts get the same executor through
    :func:`code_simulation.alfworld_code_executor`."""
    from lorekit.llm.scripted import ScriptedLLM

    base = alfworld_executor()
    executor = _either("alfworld", base, code_simulation.alfworld_code_executor(base))
    plan = _either("alfworld", planner(), code_simulation.alfworld_code_planner())
    return Roles(
        {
            "default": ScriptedLLM(fn=executor, model="simulated-alfworld-executor"),
            "planner": ScriptedLLM(fn=plan, model="simulated-planner"),
        }
    )


def webshop_roles(env_kwargs: Mapping[str, Any]) -> Roles:
    """The WebShop executor (every role but the planner) and the one-step planner."""
    return _roles("webshop", webshop_executor())


def _roles(env_name: str, executor: ModelFn) -> Roles:
    from lorekit.llm.scripted import ScriptedLLM

    return Roles(
        {
            "default": ScriptedLLM(fn=executor, model=f"simulated-{env_name}-executor"),
            "planner": ScriptedLLM(fn=planner(), model="simulated-planner"),
        }
    )
