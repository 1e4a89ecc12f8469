"""ADaPT's bridge to ALFWorld: what carries over, when a sub-task is done, how examples read.

- ``describe_state``: where the agent stands (and whether that receptacle is
  open), what it holds (and whether that is clean, hot or cool), and which lamp
  is on. Sub-tasks play on in one episode, so "find and take a mug" leaves a
  mug in hand for "clean the mug with the sinkbasin"; the next executor must be
  told. The last successful action, which the paper's controller passes on,
  is the controller's own (``Last successful action:`` in every executor prompt).
- ``check_subtask``: the root task by the env's own goal (the same test the
  game's ``won`` makes); any other sub-task by reading it as a condition on
  the state (:mod:`lorekit.agents.adapt.alfworld_checks`); None when the
  sentence cannot be read.
- ``describe_setting``: the room as the opening shows it, without the welcome
  banner and the "Your task is to:" line.
- ``adapt_examples``: the worked examples are written in the env's default
  text (``move X to Y``, arrival sentences, ``mug 1``); this rewrites them to
  the env's options (``put X in/on Y``, ``strip_arrival``, ``object_ids``), so
  what a prompt shows is what that env will answer.

The bridge holds no state and is a module-level class, so it pickles into the
env's process. ALFWorld modules are imported inside the methods: the agent
side never needs the ``alfworld`` extra to build a bridge.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from lorekit.agents.adapt.alfworld_checks import normalize, parse_condition
from lorekit.agents.examples import Demo, DemoTurn, EnvExamples, PlanDemo
from lorekit.envs.base import TextEnv

if TYPE_CHECKING:
    from lorekit.envs.alfworld.env import AlfWorldEnv
    from lorekit.envs.alfworld.world import World

BANNER = "-= Welcome to TextWorld, ALFRED! =-"
TASK_LINE = "your task is to:"
_MOVE_ACTION = re.compile(r"^move (.+?) to (.+)$")
_MOVE_REPLY = re.compile(r"\bYou move the (.+?) to the (.+?)\.")


class AlfworldBridge:
    """ALFWorld's answers to the controller's questions; see the module docstring."""

    def describe_setting(self, opening: str, goal: str) -> str:
        kept = [
            line
            for line in opening.splitlines()
            if line.strip() != BANNER and not line.strip().lower().startswith(TASK_LINE)
        ]
        return re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()

    def describe_state(self, env: TextEnv) -> str:
        alf = _alfworld(env)
        if alf is None or alf.goal is None:
            return ""
        text = state_text(alf.world())
        return _show_ids(text) if alf.object_ids else text

    def check_subtask(self, env: TextEnv, subtask: str) -> bool | None:
        alf = _alfworld(env)
        if alf is None or alf.goal is None:
            return None
        world = alf.world()
        if is_root_goal(subtask, alf):
            return world.satisfied(alf.goal)
        condition = parse_condition(subtask, world)
        return None if condition is None else condition.holds(world)

    def adapt_examples(self, env: TextEnv, examples: EnvExamples) -> EnvExamples:
        alf = _alfworld(env)
        if alf is None:
            return examples
        return adapt_examples(
            examples, syntax=alf.syntax, strip=alf.strip_arrival, object_ids=alf.object_ids
        )


def _alfworld(env: TextEnv) -> AlfWorldEnv | None:
    from lorekit.envs.alfworld.env import AlfWorldEnv

    return env if isinstance(env, AlfWorldEnv) else None


def _show_ids(text: str) -> str:
    from lorekit.envs.alfworld.text import to_object_ids

    return to_object_ids(text)


def is_root_goal(subtask: str, env: AlfWorldEnv) -> bool:
    """Whether ``subtask`` is the episode's task in one of ALFWorld's own wordings."""
    from lorekit.envs.alfworld import rules

    goal = env.goal
    if goal is None:
        return False
    wanted = normalize(subtask)
    for template in rules.goal_templates(goal.task_type):
        text = template.format(obj=goal.obj, recep=goal.recep, toggle=goal.toggle)
        if normalize(text) == wanted:
            return True
    return False


def state_text(world: World) -> str:
    """ "You are at fridge 1 (open). You hold apple 1 (cool)." and any lamp that is on."""
    from lorekit.envs.alfworld.world import name_key

    here = [
        f"{r}{_door(world, r)}"
        for r in sorted((r for r in world.recep_type if world.at(r)), key=name_key)
    ]
    if not here:
        where = "You are in the middle of the room."
    elif len(here) == 1:
        where = f"You are at {here[0]}."
    else:  # receptacles that share one spot, e.g. a microwave above a table
        where = f"You are at a spot shared by {' and '.join(here)}."
    held = world.holding
    if held is None:
        holding = "You hold nothing."
    else:
        states = [s for s in ("clean", "hot", "cool") if world.has_state(held, s)]
        holding = f"You hold {held}" + (f" ({', '.join(states)})" if states else "") + "."
    lit = sorted((o for o in world.toggled if o in world.obj_type), key=name_key)
    lamps = f" The {' and the '.join(lit)} {'is' if len(lit) == 1 else 'are'} on." if lit else ""
    return f"{where} {holding}{lamps}"


def _door(world: World, recep: str) -> str:
    if recep not in world.openable:
        return ""
    return " (open)" if recep in world.opened else " (closed)"


# -- worked examples in the env's text options ----------------------------------------------


def adapt_examples(
    examples: EnvExamples, *, syntax: str = "move", strip: bool = False, object_ids: bool = False
) -> EnvExamples:
    """``examples`` (written in the default text: ``move X to Y``, arrival sentences,
    ``mug 1``) as an env with these options shows and accepts them."""
    if syntax == "move" and not strip and not object_ids:
        return examples

    def text(value: str) -> str:
        return _show_ids(value) if object_ids else value

    def action(value: str) -> str:
        if syntax == "put":
            value = _MOVE_ACTION.sub(r"put \1 in/on \2", value)
        return text(value)

    def reply(value: str | None) -> str | None:
        if value is None:
            return None
        if syntax == "put":
            value = _MOVE_REPLY.sub(r"You put the \1 in/on the \2.", value)
        if strip:
            from lorekit.envs.alfworld.text import strip_arrival

            value = strip_arrival(value)
        return text(value)

    def demo(d: Demo) -> Demo:
        turns = tuple(
            DemoTurn(text(t.thought), action(t.action), reply(t.observation)) for t in d.turns
        )
        return Demo(text(d.setting), text(d.task), text(d.state), turns)

    def plan(p: PlanDemo) -> PlanDemo:
        return PlanDemo(text(p.setting), text(p.task), text(p.state), text(p.plan))

    planner: dict[str, Any] = {
        style: tuple(plan(p) for p in plans) for style, plans in examples.planner.items()
    }
    return replace(
        examples,
        rules=text(examples.rules),
        executor=tuple(demo(d) for d in examples.executor),
        planner=planner,
    )
