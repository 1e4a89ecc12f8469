"""What the scripted AutoManual planner knows of ALFWorld: goal sentences, rooms, its code.

Shared by the scripted planner (:mod:`lorekit.agents.automanual.testing.planner`)
and the scripted builder (:mod:`lorekit.agents.automanual.testing.builder`).
The code is real Python for :class:`~lorekit.envs.alfworld.AlfWorldCodeApi`
(``agent.go_to``, ``take``, ``put``, ``heat``, ...), split into ``# [Step N]``
steps that end in asserts, and it prints ``found X in Y`` whenever it finds
an object, which the planner reads back from the feedback.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from lorekit.agents.automanual.testing.rules import LOOK_TYPE, TRANSFORM, TWO_TYPE

_CHANGE = {  # task type -> (code API method, receptacle type, past participle)
    "pick_clean_then_place_in_recep": ("clean", "sinkbasin", "cleaned"),
    "pick_heat_then_place_in_recep": ("heat", "microwave", "heated"),
    "pick_cool_then_place_in_recep": ("cool", "fridge", "cooled"),
}
CLOSED_TYPES = frozenset({"cabinet", "drawer", "fridge", "microwave", "safe"})
"""Receptacle types the planner expects to find closed (the env's manual says so)."""

_TEMPLATES = (  # ALFWorld's goal sentences (alfworld gen/goal_library.py), as regexes
    (
        "pick_two_obj_and_place",
        r"(?:put two|find two) (?P<obj>\w+) (?:and put them )?in (?P<recep>\w+)",
    ),
    (
        "look_at_obj_in_light",
        r"(?:look at|examine the) (?P<obj>\w+) (?:under|with) the (?P<toggle>\w+)",
    ),
    # "put a cleaned X": the published agent's form of ALFWorld's "put a clean X"
    ("pick_clean_then_place_in_recep", r"put a clean(?:ed)? (?P<obj>\w+) in (?P<recep>\w+)"),
    ("pick_clean_then_place_in_recep", r"clean some (?P<obj>\w+) and put it in (?P<recep>\w+)"),
    ("pick_heat_then_place_in_recep", r"put a hot (?P<obj>\w+) in (?P<recep>\w+)"),
    ("pick_heat_then_place_in_recep", r"heat some (?P<obj>\w+) and put it in (?P<recep>\w+)"),
    ("pick_cool_then_place_in_recep", r"put a cool (?P<obj>\w+) in (?P<recep>\w+)"),
    ("pick_cool_then_place_in_recep", r"cool some (?P<obj>\w+) and put it in (?P<recep>\w+)"),
    ("pick_and_place_simple", r"put (?:a|some) (?P<obj>\w+) (?:in|on) (?P<recep>\w+)"),
)
_GOAL_LINE = re.compile(r"Your task is to:\s*(.+?)\.?\s*$", re.M)
_SEEN = re.compile(r"you see (.+?)\.\s*$", re.M)
_NAME = re.compile(r"\b([a-z]+)_(\d+)\b")


@dataclass(frozen=True)
class TaskGoal:
    """A goal sentence read as ALFWorld's task type and object types."""

    task_type: str
    obj: str
    recep: str = ""
    toggle: str = ""


def parse_goal(text: str) -> TaskGoal | None:
    """The (last) ``Your task is to: ...`` line of ``text`` as a goal, or None."""
    lines = _GOAL_LINE.findall(text)
    if not lines:
        return None
    sentence = lines[-1].strip().lower()
    for task_type, pattern in _TEMPLATES:
        m = re.fullmatch(pattern, sentence)
        if m is not None:
            return TaskGoal(task_type, **m.groupdict())
    return None


def parse_receptacles(text: str) -> list[str]:
    """The receptacles the opening lists ("you see cabinet_2, ..., and toaster_1.")."""
    m = _SEEN.search(text)
    if m is None:
        return []
    return [f"{a}_{b}" for a, b in _NAME.findall(m.group(1))]


def kind(name: str) -> str:
    """``"cabinet_12"`` -> ``"cabinet"``."""
    return name.rsplit("_", 1)[0]


def _number(name: str) -> int:
    tail = name.rsplit("_", 1)[-1]
    return int(tail) if tail.isdigit() else 0


def search_order(receptacles: list[str], skip_type: str = "") -> list[str]:
    """Open receptacles first, then the ones that must be opened, each in name order.

    Cheap places first keeps a search inside ALFWorld's 50-action limit in
    nearly every generated game (a closed one costs two actions).
    """
    places = sorted(
        (r for r in receptacles if kind(r) != skip_type), key=lambda r: (kind(r), _number(r))
    )
    return [r for r in places if kind(r) not in CLOSED_TYPES] + [
        r for r in places if kind(r) in CLOSED_TYPES
    ]


def first_of(receptacles: list[str], rtype: str) -> str:
    """The lowest-numbered receptacle of ``rtype`` (``<rtype>_1`` if the room lists none)."""
    mine = sorted((r for r in receptacles if kind(r) == rtype), key=_number)
    return mine[0] if mine else f"{rtype}_1"


# -- the code the planner writes ---------------------------------------------------------


@dataclass(frozen=True)
class Strategy:
    """How the code goes about a task: the knobs a skill or a rule can set.

    ``second``: for Put Two, ``"search"`` (search again for the second object)
    or ``"same"`` (take it from the receptacle where the first one was: the
    path-dependent shortcut). ``transform``: whether the code does the state
    change (clean/heat/cool, or switching the lamp on).
    """

    second: str = "search"
    transform: bool = True

    def but(self, **changes: object) -> Strategy:
        return replace(self, **changes)  # type: ignore[arg-type]


HELPERS = '''def objects_named(observation, name):
    """Ids of the `name` objects the text mentions, in order (e.g. ["mug_2", "mug_1"])."""
    words = observation.replace(",", " ").replace(".", " ").split()
    return [w for w in words if w.rsplit("_", 1)[0] == name and w.rsplit("_", 1)[-1].isdigit()]


def find_object(agent, receptacles, name):
    """Visit the receptacles in order, opening closed ones, until one holds a `name`."""
    for receptacle in receptacles:
        observation = agent.go_to(receptacle)
        if "closed" in observation:
            observation = agent.open(receptacle)
        found = objects_named(observation, name)
        if found:
            print("found", found[0], "in", receptacle)
            return found[0], receptacle
    return None, None


def place_object(agent, obj, target):
    """Go to the target, open it if closed, and put the held object there."""
    observation = agent.go_to(target)
    if "closed" in observation:
        observation = agent.open(target)
    return agent.put_in_or_on(obj, target)
'''


class _Writer:
    """Builds one code block step by step, numbering the ``# [Step N]`` comments."""

    def __init__(self) -> None:
        self.lines: list[str] = [HELPERS]
        self.n = 0

    def step(self, title: str, *body: str) -> None:
        self.n += 1
        self.lines.append(f"\n# [Step {self.n}] {title}")
        self.add(*body)

    def add(self, *body: str) -> None:
        self.lines.extend(line.replace("[Step @]", f"[Step {self.n}]") for line in body)

    @staticmethod
    def error(what: str) -> str:
        """An assert message naming the step it is in (numbered when the line is added)."""
        return f'"Error in [Step @]: {what}"'

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def _take_steps(w: _Writer, goal: TaskGoal, places: list[str], var: str, what: str) -> None:
    w.step(
        f"Search the receptacles for {what} {goal.obj} and take it.",
        f"places = {places!r}",
        f"{var}, found_at = find_object(agent, places, {goal.obj!r})",
    )
    w.add(f"assert {var} is not None, {w.error(f'no {goal.obj} in or on any place searched')}")
    w.lines.append(f"agent.take_from({var}, found_at)")
    w.add(f"assert agent.holding == {var}, {w.error(f'could not take the {goal.obj}')}")


def _place_step(w: _Writer, var: str, target: str) -> None:
    w.step(
        f"Put it in/on {target}.",
        f"observation = place_object(agent, {var}, {target!r})",
        "assert agent.holding == 'nothing', "
        + w.error(f"could not put it in/on {target}: ")
        + " + observation",
    )


def _change_step(w: _Writer, goal: TaskGoal, receptacles: list[str], var: str) -> None:
    method, rtype, done = _CHANGE[goal.task_type]
    where = first_of(receptacles, rtype)
    w.step(
        f"{TRANSFORM[goal.task_type].capitalize()}.",
        f"agent.go_to({where!r})",
        f"observation = agent.{method}_with({var}, {where!r})",
        f"assert {method!r} in observation, "
        + w.error(f"the {goal.obj} was not {done}: ")
        + " + observation",
    )


def write_code(goal: TaskGoal, receptacles: list[str], strategy: Strategy) -> str:
    """A complete program for the task from the start of an episode."""
    w = _Writer()
    w.lines.append(f"receptacles = {receptacles!r}")
    if goal.task_type == LOOK_TYPE:
        _take_steps(w, goal, search_order(receptacles), "obj", "a")
        lamp = goal.toggle or "desklamp"
        w.step(
            f"Find the {lamp} and look at the {goal.obj} under it.",
            f"lamp, lamp_at = find_object(agent, {search_order(receptacles)!r}, {lamp!r})",
            f"assert lamp is not None, {w.error(f'no {lamp} found')}",
        )
        if strategy.transform:
            w.lines.append("observation = agent.use(lamp)")
            w.add(f"assert 'turn on' in observation, {w.error('the lamp did not turn on')}")
        else:
            w.lines.append("observation = agent.examine(obj)")
        return w.text()
    target = first_of(receptacles, goal.recep)
    places = search_order(receptacles, skip_type=goal.recep)
    _take_steps(w, goal, places, "obj", "a")
    if goal.task_type in _CHANGE and strategy.transform:
        _change_step(w, goal, receptacles, "obj")
    _place_step(w, "obj", target)
    if goal.task_type != TWO_TYPE:
        return w.text()
    if strategy.second == "same":
        w.step(
            f"The second {goal.obj} is in the same receptacle as the first: take it there.",
            "observation = agent.go_to(found_at)",
            f"others = [o for o in objects_named(observation, {goal.obj!r}) if o != obj]",
            f"assert others, {w.error(f'no second {goal.obj} in ')} + found_at + "
            '", where the first one was"',
            "second = others[0]",
            'print("found", second, "in", found_at)',
            "agent.take_from(second, found_at)",
        )
        w.add(f"assert agent.holding == second, {w.error('could not take it')}")
    else:
        _take_steps(w, goal, places, "second", "a second")
    _place_step(w, "second", target)
    return w.text()


def write_second_search(goal: TaskGoal, receptacles: list[str]) -> str:
    """Put Two, the first object placed: search every receptacle for the second one."""
    w = _Writer()
    _take_steps(w, goal, search_order(receptacles, skip_type=goal.recep), "second", "a second")
    _place_step(w, "second", first_of(receptacles, goal.recep))
    return w.text()


def write_redo_change(goal: TaskGoal, receptacles: list[str], obj: str, lamp: str) -> str:
    """The forgotten state change, from where the object was left (placed, or held by a lamp)."""
    w = _Writer()
    if goal.task_type == LOOK_TYPE:
        w.step(
            f"Switch on {lamp} while holding the {goal.obj}.",
            "observation = agent.use(" + repr(lamp) + ")",
            f"assert 'turn on' in observation, {w.error('the lamp did not turn on')}",
        )
        return w.text()
    target = first_of(receptacles, goal.recep)
    w.step(
        f"Take {obj} back from {target}.",
        f"agent.go_to({target!r})",
        f"agent.take_from({obj!r}, {target!r})",
        f"assert agent.holding == {obj!r}, {w.error('could not take it back')}",
        f"obj = {obj!r}",
    )
    _change_step(w, goal, receptacles, "obj")
    _place_step(w, "obj", target)
    return w.text()


def write_recheck(goal: TaskGoal, receptacles: list[str], found: list[tuple[str, str]]) -> str:
    """What a planner that has not understood its error tries: looking again, changing nothing.

    Put Two: another look for a second object where the first one was (it
    fails again when they lie apart). Other types: a check that the object is
    where the code left it (it is, and the task stays undone).
    """
    w = _Writer()
    mine = [(o, p) for o, p in found if kind(o) == goal.obj]
    if goal.task_type == TWO_TYPE:
        place = mine[0][1] if mine else first_of(receptacles, goal.recep)
        w.step(
            f"Look again at {place} for a second {goal.obj}.",
            f"observation = agent.go_to({place!r})",
            f"seen = {[o for o, _ in mine]!r}",
            f"others = [o for o in objects_named(observation, {goal.obj!r}) if o not in seen]",
            f"assert others, {w.error(f'no second {goal.obj} in ')} + {place!r} + "
            '", where the first one was"',
        )
        return w.text()
    obj = mine[0][0] if mine else f"{goal.obj}_1"
    if goal.task_type == LOOK_TYPE:
        w.step(f"Check that I hold {obj}.", f"print(agent.holding == {obj!r})")
        return w.text()
    target = first_of(receptacles, goal.recep)
    w.step(
        f"Check that {obj} is in/on {target}.",
        f"observation = agent.go_to({target!r})",
        f"print({obj!r} in observation)",
    )
    return w.text()


FOUND = re.compile(r"^found ([a-z]+_\d+) in ([a-z]+_\d+)\s*$", re.M)
"""The lines the code prints when it finds something (read back from feedback)."""
