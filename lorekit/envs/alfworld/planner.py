"""A task planner for ALFWorld's six task types, from any state.

ALFWorld ships two experts: a hand-coded one (broken for two-object tasks on
0.4.x) and Fast Downward, which plans optimally but takes seconds per call.
This planner knows the six task types and reads the whole state (it is an
oracle, like Fast Downward), so it answers in microseconds from any state,
including ones an agent reached by wandering off the walkthrough. Its plans
are short but not always the shortest: it fetches the first suitable object
in name order rather than searching over all of them.

Actions are :class:`Act` tuples; :mod:`lorekit.envs.alfworld.text` renders
them in either command syntax.
"""

from __future__ import annotations

from dataclasses import dataclass

from lorekit.envs.alfworld.world import STATE_CHANGE, Goal, World

#: A plan longer than this means the planner is going round in circles (a bug).
MAX_PLAN = 200


@dataclass(frozen=True)
class Act:
    """One engine action: ``verb`` is go/open/close/take/put/clean/heat/cool/use."""

    verb: str
    obj: str = ""
    recep: str = ""


class Unsolvable(Exception):
    """No plan reaches the goal from this state (e.g. the only mug is gone)."""


def next_act(world: World, goal: Goal) -> Act | None:
    """The first action of a plan for ``goal`` from ``world``; None once it holds.

    Raises :class:`Unsolvable` when the state offers no way to the goal.
    """
    if world.satisfied(goal):
        return None
    if goal.task_type == "look_at_obj_in_light":
        return _look(world, goal)
    if goal.task_type == "pick_two_obj_and_place":
        return _two(world, goal)
    return _place(world, goal)


def plan(world: World, goal: Goal) -> list[Act]:
    """The whole plan from ``world`` (which is not changed), simulated step by step."""
    state = world.copy()
    acts: list[Act] = []
    while (act := next_act(state, goal)) is not None:
        apply(state, act)
        acts.append(act)
        if len(acts) > MAX_PLAN:
            raise Unsolvable(f"no plan within {MAX_PLAN} actions (planner loop)")
    return acts


def apply(world: World, act: Act) -> None:
    """Apply ``act`` to ``world`` the way the engine would (the planner only
    produces applicable actions, so preconditions are not re-checked here)."""
    if act.verb == "go":
        world.agent_at = world.location[act.recep]
    elif act.verb == "open":
        world.opened.add(act.recep)
    elif act.verb == "close":
        world.opened.discard(act.recep)
    elif act.verb == "take":
        world.inside.pop(act.obj, None)
        world.holding = act.obj
    elif act.verb == "put":
        world.inside[act.obj] = act.recep
        world.holding = None
    elif act.verb == "clean":
        world.clean.add(act.obj)
    elif act.verb == "heat":
        world.hot.add(act.obj)
        world.cool.discard(act.obj)
    elif act.verb == "cool":
        world.cool.add(act.obj)
        world.hot.discard(act.obj)
    elif act.verb == "use":
        world.toggled.add(act.obj)
    else:
        raise ValueError(f"unknown act verb {act.verb!r}")


# -- the task types -------------------------------------------------------------


def _place(world: World, goal: Goal) -> Act:
    change = STATE_CHANGE.get(goal.task_type)
    held = world.holding
    if held is not None and world.obj_type[held] == goal.obj:
        if change is not None and not world.has_state(held, change[0]):
            return _change_state(world, held, change)
        return _put_into(world, held, _target(world, goal, held))
    return _fetch(world, goal.obj, avoid=set())


def _two(world: World, goal: Goal) -> Act:
    placed = world.placed(goal)
    if not placed:
        raise Unsolvable(f"no {goal.recep} in this room")
    # Fill the target that already holds the most, so a head start is kept.
    target = max(placed, key=lambda r: len(placed[r]))
    held = world.holding
    if held is not None and world.obj_type[held] == goal.obj:
        return _put_into(world, held, target)
    return _fetch(world, goal.obj, avoid=set(placed[target]))


def _look(world: World, goal: Goal) -> Act:
    held = world.holding
    if held is None or world.obj_type[held] != goal.obj:
        return _fetch(world, goal.obj, avoid=set())
    lamps = [lamp for lamp in world.objects_of(goal.toggle) if lamp in world.inside]
    if not lamps:
        raise Unsolvable(f"no reachable {goal.toggle} in this room")
    lamp = next((x for x in lamps if world.at(world.inside[x])), lamps[0])
    if not world.at(world.inside[lamp]):
        return Act("go", recep=world.inside[lamp])
    return Act("use", obj=lamp)


# -- building blocks ------------------------------------------------------------


def _fetch(world: World, otype: str, avoid: set[str]) -> Act:
    """Next action towards holding an object of ``otype`` not in ``avoid``."""
    if world.holding is not None:
        return _put_down(world, world.holding)
    candidates = [
        o
        for o in world.objects_of(otype)
        if o in world.inside and o not in avoid and o in world.pickupable
    ]
    if not candidates:
        raise Unsolvable(f"no {otype} left to take")
    # Prefer one where the agent already is, else the first in name order.
    obj = next((o for o in candidates if world.at(world.inside[o])), candidates[0])
    recep = world.inside[obj]
    if not world.at(recep):
        return Act("go", recep=recep)
    if world.is_closed(recep):
        return Act("open", recep=recep)
    return Act("take", obj, recep)


def _put_down(world: World, obj: str) -> Act:
    """Free the hands: put ``obj`` where the agent is if it fits, else somewhere it does."""
    here = [r for r in sorted(world.location) if world.at(r) and world.accepts(r, obj)]
    spot = (
        here[0]
        if here
        else next((r for r in sorted(world.location) if world.accepts(r, obj)), None)
    )
    if spot is None:
        raise Unsolvable(f"{obj} fits in no receptacle and the hands must be free")
    return _put_into(world, obj, spot)


def _put_into(world: World, obj: str, recep: str) -> Act:
    if not world.at(recep):
        return Act("go", recep=recep)
    if world.is_closed(recep):
        return Act("open", recep=recep)
    return Act("put", obj, recep)


def _target(world: World, goal: Goal, obj: str) -> str:
    """The receptacle to place the goal object in: one where the agent is, else
    one that needs no opening, else the first; always one that accepts it."""
    options = [r for r in world.receptacles_of(goal.recep) if world.accepts(r, obj)]
    if not options:
        raise Unsolvable(f"no {goal.recep} here accepts {obj}")
    here = [r for r in options if world.at(r)]
    open_ = [r for r in options if not world.is_closed(r)]
    return (here or open_ or options)[0]


def _change_state(world: World, obj: str, change: tuple[str, str]) -> Act:
    state, appliance_type = change
    appliances = world.receptacles_of(appliance_type)
    if not appliances:
        raise Unsolvable(f"no {appliance_type} to make {obj} {state}")
    here = [r for r in appliances if world.at(r)]
    appliance = (here or appliances)[0]
    if not world.at(appliance):
        return Act("go", recep=appliance)
    verb = {"clean": "clean", "hot": "heat", "cool": "cool"}[state]
    return Act(verb, obj, appliance)
