"""The ALFWorld code API: model-style code solving real generated games through the sandbox."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

import pytest

pytest.importorskip("textworld", reason="the alfworld extra is not installed")

from lorekit.envs import make
from lorekit.envs.alfworld import TASK_TYPES, AlfWorldCodeApi, AlfWorldEnv, BadName
from lorekit.envs.alfworld.code_api import entity_name
from lorekit.envs.episodes import texts as episode_texts
from lorekit.sandbox import (
    ActionBudgetExceeded,
    ApiCallRejected,
    CodeError,
    Limits,
    WorkerPool,
    run_code,
)

#: As in tests/sandbox/conftest.py: every OS layer the machine allows; CI insists on all.
ISOLATION = "required" if os.environ.get("CI") else "auto"
#: Enough for a search over a whole room on a loaded machine; the env has no step cap here.
SOLVE = Limits(wall_s=30.0, cpu_s=30.0, max_api_calls=300, grace_s=1.0)
FAST = Limits(wall_s=5.0, cpu_s=5.0, grace_s=0.5)

#: AutoManual-style code: search the room's receptacles in turn, opening closed
#: ones, for the task's object; take it; change its state; place it. It knows only
#: the first observation (INTRO) and the task's types, as a planner would.
SOLVER = r"""
import re

def names(text, kind=r"[a-z]+"):
    return [m.group(0) for m in re.finditer(r"\b" + kind + r"[ _]\d+\b", text)]

def arg(name):
    return name.replace(" ", "_") if UNDERSCORE else name

def same(a, b):
    return a is not None and a.replace("_", " ") == b.replace("_", " ")

receps = names(INTRO.split("Your task")[0].split("you see")[1])

def look_in(recep):
    obs = agent.go_to(arg(recep))
    if "Nothing happens" in obs:  # already standing there (shared spot)
        obs = agent.examine(arg(recep))
    if "closed" in obs:
        obs = agent.open(arg(recep))
    return obs

def find(kind, skip=()):
    for recep in receps:
        for found in names(look_in(recep), kind):
            if found not in skip:
                return found, recep
    return None, None

def of_kind(kind):
    return [r for r in receps if re.fullmatch(kind + r"[ _]\d+", r)]

def place(obj):
    for target in of_kind(RECEP):
        look_in(target)
        obs = agent.put(arg(obj), arg(target))
        if "Nothing happens" not in obs:
            return obs
    raise AssertionError(f"could not place {obj}")

def fetch(skip=()):
    obj, source = find(OBJ, skip)
    assert obj is not None, f"no {OBJ} in {receps}"
    print(agent.take(arg(obj), arg(source)))
    assert same(agent.holding(), obj), agent.holding()
    return obj

obj = fetch()
if TASK_TYPE == "look_at_obj_in_light":
    lamp, _ = find(LAMP)
    print(agent.use(arg(lamp)))
else:
    if TASK_TYPE == "pick_clean_then_place_in_recep":
        sink = of_kind("sinkbasin")[0]
        look_in(sink)
        print(agent.clean(arg(obj), arg(sink)))
    elif TASK_TYPE == "pick_heat_then_place_in_recep":
        oven = of_kind("microwave")[0]
        look_in(oven)
        print(agent.heat(arg(obj), arg(oven)))
    elif TASK_TYPE == "pick_cool_then_place_in_recep":
        fridge = of_kind("fridge")[0]
        look_in(fridge)
        print(agent.cool(arg(obj), arg(fridge)))
    print(place(obj))
    if TASK_TYPE == "pick_two_obj_and_place":
        print(place(fetch(skip=(obj,))))
assert agent.done() and agent.won()
"""


@pytest.fixture(scope="module")
def pool() -> Iterator[WorkerPool]:
    with WorkerPool(size=2, isolation=ISOLATION) as shared:
        yield shared


def new_env(**options: object) -> AlfWorldEnv:
    env = make("alfworld", split="dev", **options)
    assert isinstance(env, AlfWorldEnv)
    return env


def started(task_index: int, **options: object) -> tuple[AlfWorldEnv, str]:
    """An env reset on the dev split's ``task_index``-th game, and its first observation."""
    env = new_env(**options)
    first = env.reset(env.tasks("dev")[task_index]).text
    return env, first


# One dev game of each task type (the split cycles through the six types in
# TASK_TYPES order; these are ones a room search solves in few steps), each under
# another syntax / name-form combination. "cross" passes "mug_1" to an env that
# shows "mug 1".
SOLVE_CASES = [
    pytest.param(0, "move", False, False, id="simple-move-spaces"),
    pytest.param(1, "put", True, True, id="light-put-ids"),
    pytest.param(2, "move", True, True, id="clean-move-ids"),
    pytest.param(27, "put", False, True, id="heat-put-cross"),
    pytest.param(10, "move", False, True, id="cool-move-cross"),
    pytest.param(17, "put", False, False, id="two-put-spaces"),
]


@pytest.mark.parametrize(("index", "syntax", "object_ids", "underscore"), SOLVE_CASES)
def test_sandboxed_code_solves_each_task_type(
    pool: WorkerPool, index: int, syntax: str, object_ids: bool, underscore: bool
) -> None:
    env, first = started(index, syntax=syntax, object_ids=object_ids, max_steps=None)
    goal = env.goal
    assert goal is not None and goal.task_type == TASK_TYPES[index % 6]
    api = AlfWorldCodeApi(env)
    constants = (
        f"INTRO = {first!r}\nTASK_TYPE = {goal.task_type!r}\nOBJ = {goal.obj!r}\n"
        f"RECEP = {goal.recep!r}\nLAMP = {goal.toggle!r}\nUNDERSCORE = {underscore!r}\n"
    )
    result = run_code(SOLVER, api, api_name="agent", preload=[constants], pool=pool, limits=SOLVE)
    assert result.ok, result.feedback()
    # Only the engine decides: its won signal, and the last step the code made.
    assert env.won and env.done
    last = api.history[-1]
    assert last.step.done and last.step.info["success"] is True
    # The code's calls and the env's record agree, command for command.
    stepped = [c for c in result.calls if c.method in AlfWorldCodeApi.ACTIONS]
    assert [c.result for c in stepped] == [h.step.observation for h in api.history]
    placing = [h.command for h in api.history if h.command.startswith(("move ", "put "))]
    if goal.task_type != "look_at_obj_in_light":
        assert placing and all(
            (" to " in c) if syntax == "move" else (" in/on " in c) for c in placing
        )
    shown = " ".join(str(c.result) for c in stepped)
    assert bool(re.search(r"[a-z]_\d", shown)) == object_ids
    assert bool(re.search(r"[a-z] \d", shown)) != object_ids


def test_command_text_of_each_method(monkeypatch: pytest.MonkeyPatch) -> None:
    for syntax, place in (
        ("move", "move mug 1 to countertop 2"),
        ("put", "put mug 1 in/on countertop 2"),
    ):
        env = new_env(syntax=syntax)
        sent: list[str] = []

        def step(command: str, sent: list[str] = sent) -> object:
            from lorekit.envs.base import Step

            sent.append(command)
            return Step(f"echo {command}", 0.0, False, {"valid": True})

        monkeypatch.setattr(env, "step", step)
        api = AlfWorldCodeApi(env)
        answers = [
            api.go_to("fridge_1"),
            api.open("Fridge 1"),
            api.close(" fridge  1 "),
            api.take("mug_1", "cabinet 10"),
            api.put("mug 1", "countertop_2"),
            api.heat("mug_1", "microwave_1"),
            api.cool("mug 1", "fridge 1"),
            api.clean("mug_1", "sinkbasin_1"),
            api.use("desklamp_1"),
            api.examine("mug_1"),
            api.inventory(),
            api.look(),
        ]
        assert sent == [
            "go to fridge 1",
            "open fridge 1",
            "close fridge 1",
            "take mug 1 from cabinet 10",
            place,
            "heat mug 1 with microwave 1",
            "cool mug 1 with fridge 1",
            "clean mug 1 with sinkbasin 1",
            "use desklamp 1",
            "examine mug 1",
            "inventory",
            "look",
        ]
        assert answers == [f"echo {c}" for c in sent]
        assert [h.command for h in api.history] == sent


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "   ",
        "mug",
        "1",
        "a mug 1",
        "mug 1.",
        "mug-1",
        "mug 1 and mug 2",
        "mug1",
        "müg 1",
        "mug \u0661",
    ],
)
def test_odd_names_are_refused(bad: str) -> None:
    with pytest.raises(BadName, match="mug 1' or 'mug_1'"):
        entity_name(bad)


def test_names_accept_both_forms() -> None:
    assert entity_name("mug_1") == entity_name(" Mug  1 ") == "mug 1"
    assert entity_name("butterknife_12") == "butterknife 12"


def test_gate_rejects_wrong_argument_types(pool: WorkerPool) -> None:
    env, _ = started(0)
    api = AlfWorldCodeApi(env)
    for code in ("agent.go_to(1)", "agent.take('mug 1')", "agent.put(['mug 1'], 'cabinet 1')"):
        result = run_code(code, api, api_name="agent", pool=pool, limits=FAST)
        assert isinstance(result.error, ApiCallRejected), (code, result.feedback())
    assert "argument 'recep' must be str" in str(
        run_code("agent.go_to(None)", api, api_name="agent", pool=pool, limits=FAST).error
    )
    assert api.history == []  # nothing reached the env


def test_bad_names_reach_the_code_as_errors_without_a_step(pool: WorkerPool) -> None:
    env, _ = started(0)
    api = AlfWorldCodeApi(env)
    code = (
        "for name in ['', 'drawer', 'a drawer 1']:\n"
        "    try:\n"
        "        agent.go_to(name)\n"
        "    except Exception as exc:\n"
        "        print(exc)\n"
    )
    result = run_code(code, api, api_name="agent", pool=pool, limits=FAST)
    assert result.ok, result.feedback()
    lines = result.output.splitlines()
    assert len(lines) == 3 and all("BadName" in line for line in lines)
    assert "'' is empty" in lines[0] and "'drawer' is not an ALFWorld name" in lines[1]
    uncaught = run_code(
        "agent.take('mug', 'drawer 1')", api, api_name="agent", pool=pool, limits=FAST
    )
    assert isinstance(uncaught.error, CodeError) and uncaught.error.exc_type == "ApiError"
    assert "take: obj 'mug'" in uncaught.error.message
    assert api.history == [] and not env.done


def test_unknown_names_get_the_engines_answer(pool: WorkerPool) -> None:
    env, _ = started(0)
    api = AlfWorldCodeApi(env)
    code = "print(agent.go_to('spaceship_1'))\nprint(agent.take('pencil 1', 'drawer 5'))"
    result = run_code(code, api, api_name="agent", pool=pool, limits=FAST)
    assert result.ok, result.feedback()
    assert result.output == "Nothing happens.\nNothing happens.\n"
    assert [(h.command, h.step.info["valid"]) for h in api.history] == [
        ("go to spaceship 1", False),
        ("take pencil 1 from drawer 5", False),
    ]
    assert api.history[-1].step.info["steps"] == 2  # invalid moves still count, as typed ones do


def test_calls_after_the_episode_say_so(pool: WorkerPool) -> None:
    finished = str(episode_texts()["finished"])  # the shared episode rules' wording
    won_env, _ = started(0)
    api = AlfWorldCodeApi(won_env)
    while (command := won_env.expert_action()) is not None:
        won_env.step(command)
    code = (
        "print(agent.look())\n"
        "print(agent.put('pencil 1', 'coffeetable 1'))\n"
        "print(agent.done(), agent.won())"
    )
    result = run_code(code, api, api_name="agent", pool=pool, limits=FAST)
    assert result.ok, result.feedback()
    assert result.output == f"{finished}\n{finished}\nTrue True\n"
    # Out of steps: the last counted step says why, later ones that it is over.
    capped, _ = started(0, max_steps=2)
    api = AlfWorldCodeApi(capped)
    code = "for _ in range(4):\n    print(agent.look())\nprint(agent.done(), agent.won())"
    result = run_code(code, api, api_name="agent", pool=pool, limits=FAST)
    assert result.ok, result.feedback()
    lines = result.output.splitlines()
    assert "Step limit of 2 reached" in lines[1]
    assert lines[2:] == [finished, finished, "True False"]
    assert [h.step.info["steps"] for h in api.history] == [1, 2, 2, 2]


def test_the_call_budget_stops_the_code(pool: WorkerPool) -> None:
    env, _ = started(0)
    api = AlfWorldCodeApi(env)
    limits = Limits(wall_s=5.0, cpu_s=5.0, max_api_calls=4)
    code = "for i in range(1, 7):\n    agent.go_to(f'drawer {i}')"
    result = run_code(code, api, api_name="agent", pool=pool, limits=limits)
    assert isinstance(result.error, ActionBudgetExceeded)
    assert [h.command for h in api.history] == [f"go to drawer {i}" for i in (1, 2, 3, 4)]


def test_queries_read_the_engine_state() -> None:
    env = new_env(object_ids=True)
    api = AlfWorldCodeApi(env)
    assert (api.holding(), api.location(), api.done(), api.won()) == (None, None, False, False)
    env.reset(env.tasks("dev")[55])  # a room where drawer 2 and drawer 3 share a spot
    assert api.location() is None  # the middle of the room
    api.go_to("drawer 2")
    assert api.location() == "drawer_2" and env.step("look").info["valid"]
    assert api.go_to("drawer_3") == "Nothing happens."  # the engine: already there
    assert api.location() == "drawer_2"
    api.go_to("dresser 1")
    api.take("cd_2", "dresser_1")
    assert (api.holding(), api.location()) == ("cd_2", "dresser_1")
    assert len(api.history) == 4  # the direct env.step above is not the API's


def test_action_methods_are_the_gates_schema() -> None:
    from lorekit.sandbox.proxy import ApiGate

    env = new_env()
    described = ApiGate(AlfWorldCodeApi(env), None, 10).describe()
    assert set(described) == set(AlfWorldCodeApi.ACTIONS) | set(AlfWorldCodeApi.QUERIES)
    assert described["take"] == "(obj: str, recep: str) -> str"
    assert described["holding"] == "() -> str | None"


SIMPLE_TASK = "pick_and_place_simple-Book-None-Desk-309/trial_dev_1012_00012"


async def test_code_drives_the_harness_process_env(pool: WorkerPool) -> None:
    from lorekit.envs import open_env
    from lorekit.envs.registry import EnvSpec
    from lorekit.sandbox import run_code_async

    handle = await open_env(EnvSpec("alfworld", {"split": "dev", "object_ids": True}))
    try:
        assert handle.execution == "process"
        await handle.reset(SIMPLE_TASK)
        api = AlfWorldCodeApi(handle)
        code = (
            "print(agent.go_to('drawer_3'))\nprint(agent.open('drawer 3'))\n"
            "print(agent.take('book_1', 'drawer_3'))\nprint(agent.holding(), agent.location())\n"
            "agent.go_to('desk_1')\nprint(agent.put('book_1', 'desk_1'))\n"
            "print(agent.won())"
        )
        result = await run_code_async(code, api, api_name="agent", pool=pool, limits=FAST)
        assert result.ok, result.feedback()
        lines = result.output.splitlines()
        assert lines[0] == "You arrive at drawer_3. drawer_3 is closed."
        assert lines[3] == "book_1 drawer_3"
        assert lines[4] == "You move book_1 to desk_1." and lines[5] == "True"
        assert api.history[-1].step.info["success"] is True
        # Run on the loop itself, the API would wait on the loop it blocks: it says so instead.
        blocked = run_code("agent.look()", api, api_name="agent", pool=pool, limits=FAST)
        assert isinstance(blocked.error, CodeError) and "run_code_async" in blocked.error.message
    finally:
        handle.close()


def test_the_api_needs_an_alfworld_env() -> None:
    from lorekit.envs.textcraft import TextCraftEnv

    with pytest.raises(TypeError, match="needs an AlfWorldEnv"):
        AlfWorldCodeApi(TextCraftEnv())  # type: ignore[arg-type]
