"""ADaPT on ALFWorld: the bridge reads the engine's state, and scripted models that
answer like models (a malformed plan, a wrong action, an over-confident claim)
solve a dev game only because the planner decomposes and the env checks."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _adapt_scripts import by_task, planner_by_task
from _cli import run_cli

from lorekit.agents import NullRecorder, make_agent
from lorekit.agents.adapt import AdaptAgent, bridge_for
from lorekit.agents.adapt.alfworld_checks import parse_condition
from lorekit.agents.adapt.bridge_alfworld import AlfworldBridge
from lorekit.envs import make
from lorekit.envs.alfworld import AlfWorldEnv
from lorekit.eval.store import RunStore
from lorekit.llm import Message, Roles, ScriptedLLM

CLOTH_GAME = "pick_clean_then_place_in_recep-Cloth-None-Drawer-409/trial_dev_1012_00020"
ROOT = "put a clean cloth in drawer"
FIND = "find and take a cloth"
CLEAN = "clean the cloth with the sinkbasin"
PUT = "put the clean cloth in/on the drawer"
FROM_TOILET = "find and take a cloth from the toilet"
FROM_COUNTERTOP = "find and take a cloth from the countertop"


@pytest.fixture(scope="module")
def alf() -> Iterator[AlfWorldEnv]:
    env = make("alfworld", split="dev")
    assert isinstance(env, AlfWorldEnv)
    yield env
    env.close()


def game(env: AlfWorldEnv, task_id: str = CLOTH_GAME) -> Any:
    return next(t for t in env.tasks("dev") if t.id == task_id)


def say(thought: str, action: str) -> str:
    return f"Thought: {thought}\nAction: {action}"


# -- the bridge on real states -------------------------------------------------------


def test_bridge_checks_sub_tasks_against_the_engine_state(alf: AlfWorldEnv) -> None:
    bridge = bridge_for("alfworld")
    assert isinstance(bridge, AlfworldBridge)
    opening = alf.reset(game(alf)).text
    setting = bridge.describe_setting(opening, ROOT)
    assert setting.startswith("You are in the middle of a room.") and "towelholder 1" in setting
    assert "Your task is to" not in setting and "Welcome" not in setting
    assert bridge.describe_state(alf) == "You are in the middle of the room. You hold nothing."
    plan = [
        ("go to countertop 1", {"find a cloth": True, FIND: False, "go to the countertop": True}),
        ("take cloth 1 from countertop 1", {FIND: True, "take cloth 9": None, CLEAN: False}),
        ("go to sinkbasin 1", {}),
        ("clean cloth 1 with sinkbasin 1", {CLEAN: True, "heat the cloth": False, PUT: False}),
        ("go to drawer 1", {"open drawer 1": False}),
        ("open drawer 1", {"open drawer 1": True, "put a cloth in the drawer": False}),
        ("move cloth 1 to drawer 1", {PUT: True, "put two cloth in drawer": False, ROOT: True}),
    ]
    for action, checks in plan:
        step = alf.step(action)
        assert step.info["valid"], (action, step.observation)
        for subtask, expected in checks.items():
            assert bridge.check_subtask(alf, subtask) is expected, (action, subtask)
    assert step.info["won"] and bridge.check_subtask(alf, ROOT) is True
    # sentences about nothing in this room, or no action at all: cannot tell
    for unknown in ("find and take a mug", "dance a little", ""):
        assert bridge.check_subtask(alf, unknown) is None


@pytest.mark.parametrize(
    ("text", "kind", "detail"),
    [
        ("Step 2: Clean the cloth using the sink.", "change", ("cloth", None, ("clean",))),
        ("**Find** and take a cloth from the bathtub", "take", ("cloth", None, ())),
        ("put the washed cloth into drawer 1", "place", ("cloth", "drawer 1", ("clean",))),
        ("clean some cloth and put it in drawer", "place", ("cloth", None, ("clean",))),
        ("take the clean cloth", "take", ("cloth", None, ())),
        ("put two cloths in the drawers", "place", ("cloth", None, ())),
        ("find a soap bar", "find", ("soapbar", None, ())),
        ("go to the toilet", "go", (None, None, ())),
        ("take cloth 9 from the countertop", None, None),
    ],
)
def test_sub_task_wordings_read_as_conditions(
    alf: AlfWorldEnv, text: str, kind: str | None, detail: Any
) -> None:
    alf.reset(game(alf))
    found = parse_condition(text, alf.world())
    assert (found.kind if found else None) == kind
    if found is not None and found.kind != "go":
        assert found.obj is not None
        recep = found.recep.name if found.recep else None
        assert (found.obj.type, recep, found.states) == detail
        assert found.count == (2 if "two" in text else 1)


def test_root_task_is_judged_by_the_env_goal(alf: AlfWorldEnv) -> None:
    bridge = AlfworldBridge()
    alf.reset(game(alf))
    for action in ("go to countertop 1", "take cloth 1 from countertop 1", "go to drawer 1"):
        alf.step(action)
    alf.step("open drawer 1")
    alf.step("move cloth 1 to drawer 1")  # placed, but never cleaned
    assert bridge.check_subtask(alf, "put a cloth in the drawer") is True
    assert bridge.check_subtask(alf, ROOT) is False  # the goal wants it clean
    assert bridge.check_subtask(alf, "put a clean cloth in drawer") is False  # the other wording
    assert not alf.done


def test_state_text_follows_the_env_text_options() -> None:
    env = make("alfworld", split="dev", syntax="put", object_ids=True, strip_arrival=True)
    bridge = pickle.loads(pickle.dumps(AlfworldBridge()))  # it must travel to a process env
    env.reset(game(env))
    for action in ("go to countertop 1", "take cloth_1 from countertop_1", "go to drawer_1"):
        assert env.step(action).info["valid"], action
    assert bridge.describe_state(env) == "You are at drawer_1 (closed). You hold cloth_1."
    assert bridge.check_subtask(env, "take cloth_1 from countertop_1") is True
    env.step("open drawer_1")
    assert env.step("put cloth_1 in/on drawer_1").info["valid"]
    assert bridge.check_subtask(env, "put cloth_1 in/on drawer_1") is True
    assert bridge.check_subtask(env, "move cloth 1 to drawer 1") is True  # either syntax reads
    assert bridge.check_subtask(env, ROOT) is False
    env.close()


def test_shared_spots_and_lamps_show_in_the_state(alf: AlfWorldEnv) -> None:
    look = "look_at_obj_in_light-Statue-None-None-211/trial_dev_1012_00097"
    alf.reset(game(alf, look))
    bridge = AlfworldBridge()
    alf.step("go to sidetable 2")
    alf.step("open drawer 1")
    assert bridge.describe_state(alf) == (
        "You are at a spot shared by drawer 1 (open) and sidetable 2. You hold nothing."
    )
    alf.step("go to shelf 1")
    alf.step("take statue 1 from shelf 1")
    alf.step("go to sidetable 2")
    assert bridge.check_subtask(alf, "use the floorlamp") is False
    alf.step("use floorlamp 1")
    assert bridge.describe_state(alf).endswith("You hold statue 1. The floorlamp 1 is on.")
    assert bridge.check_subtask(alf, "use the floorlamp") is True
    assert bridge.check_subtask(alf, "look at statue under the floorlamp") is True
    assert bridge.check_subtask(alf, "examine the statue with the lamp") is True
    assert bridge.check_subtask(alf, "look at the box under the floorlamp") is False


# -- ADaPT with scripted models ------------------------------------------------------

EXECUTOR = {
    ROOT: [
        say("A cloth could be on the towel holder.", "go to towelholder 1"),
        say("I take the cloth.", "take cloth from towelholder 1"),  # no number: invalid
        say("There is no cloth here and I do not know where to look.", "failed"),
    ],
    FIND: [say("I have no idea where a cloth is.", "failed")],
    FROM_TOILET: [
        say("I check the toilet.", "go to toilet 1"),
        say("A toiletpaper is as good as a cloth.", "completed"),  # it is not
    ],
    FROM_COUNTERTOP: [
        say("I check the countertop.", "go to countertop 1"),
        say("Cloth 1 is here.", "take cloth 1 from countertop 1"),
        say("I hold cloth 1.", "completed"),
    ],
    CLEAN: [
        say("I hold the cloth; to the sinkbasin.", "go to sinkbasin 1"),
        say("Clean it.", "clean cloth 1 with sinkbasin 1"),
        say("It is clean.", "completed"),
    ],
    PUT: [
        say("To the drawer.", "go to drawer 1"),
        say("It is closed.", "open drawer 1"),
        say("Place the cloth.", "move cloth 1 to drawer 1"),
    ],
}
PLANS = {
    ROOT: [
        "Thought: find, clean, place.\n1. find a cloth\n2. clean it\n3. put it in the drawer",
        f"Step 1: {FIND}\nStep 2: {CLEAN}\nStep 3: {PUT}\n"
        "Execution order: (Step 1 AND Step 2 AND Step 3)",
    ],
    FIND: f"Step 1: {FROM_TOILET}\nStep 2: {FROM_COUNTERTOP}\n"
    "Step 3: find and take a cloth from the drawers\n"
    "Execution order: (Step 1 OR Step 2 OR Step 3)",
}


def first_prompts(llm: ScriptedLLM) -> dict[str, str]:
    """The user prompt of each executor run's first turn, by its goal."""
    out = {}
    for call in llm.calls:
        if not any(m.role == "assistant" for m in call.messages[2:]):
            text = call.messages[1].content
            out[text.split("Goal: ")[1].split("\n")[0]] = text
    return out


async def test_adapt_decomposes_after_failure_and_the_env_decides(alf: AlfWorldEnv) -> None:
    executor, planner = by_task(EXECUTOR), planner_by_task(PLANS)
    roles = Roles({"executor": executor, "planner": planner})
    traj = await AdaptAgent(d_max=3).run(alf, game(alf), roles, NullRecorder())
    assert traj.success and traj.stop_reason == "done" and traj.steps[-1].info["won"]
    assert traj.steps[1].observation == "Nothing happens." and not traj.steps[1].info["valid"]
    tree = traj.notes["tree"]
    assert tree["executor"]["claimed"] is False and tree["executor"]["invalid"] == 1
    assert len(tree["plan"]["errors"]) == 1 and "Step 1:" in tree["plan"]["errors"][0]
    find, clean, put = tree["children"]
    assert find["plan"]["order"] == "(Step 1 OR Step 2 OR Step 3)"
    toilet, countertop = find["children"]  # OR stopped at the first real success
    assert toilet["executor"]["overclaimed"] and toilet["success"] is False
    assert countertop["success"] and countertop["verified"] is True and find["verified"] is True
    assert clean["success"] and put["executor"]["stop"] == "env_done"
    assert traj.notes["overclaims"] == 1 and traj.notes["depth_reached"] == 3
    # what carried over: the state read from the env, the last action of a success
    prompts = first_prompts(executor)
    assert "Current state: You are at countertop 1. You hold cloth 1." in prompts[CLEAN]
    assert "Last successful action: take cloth 1 from countertop 1" in prompts[CLEAN]
    assert "You hold cloth 1 (clean)." in prompts[PUT]
    assert "Last successful action: clean cloth 1 with sinkbasin 1" in prompts[PUT]
    # the failed toilet branch passed nothing on to the countertop branch
    assert "Last successful action: none yet" in prompts[FROM_COUNTERTOP]
    assert "Your task is to" not in prompts[CLEAN] and ROOT not in prompts[CLEAN]
    system = executor.calls[0].messages[0].content
    assert "Rules that matter in ALFWorld" in system and "Example 2" in system
    assert "move <object> to <receptacle>" in system  # the env's own action forms


async def test_believing_the_executor_stops_at_its_false_claim(alf: AlfWorldEnv) -> None:
    roles = Roles({"executor": by_task(EXECUTOR), "planner": planner_by_task(PLANS)})
    traj = await AdaptAgent(d_max=3, trust="self").run(alf, game(alf), roles, NullRecorder())
    # the toiletpaper claim is believed, so no cloth is ever taken: the env says no
    assert not traj.success and traj.notes["tree"]["children"][0]["children"][0]["success"]


async def test_prompts_show_examples_in_the_env_syntax() -> None:
    env = make("alfworld", split="dev", syntax="put")
    executor = by_task({ROOT: [say("Let me stop.", "failed")]})
    roles = Roles({"executor": executor, "planner": ScriptedLLM(default="no plan")})
    await AdaptAgent(d_max=2, plan_retries=0).run(env, game(env), roles, NullRecorder())
    system = executor.calls[0].messages[0].content
    assert "Action: put cup 1 in/on shelf 1" in system
    assert "You put the cup 1 in/on the shelf 1." in system
    assert "move cup 1" not in system and "put <object> in/on <receptacle>" in system
    env.close()


STATUE = [  # dev game 0: put some statue on diningtable
    "go to coffeetable 1",
    "take statue 1 from coffeetable 1",
    "go to diningtable 1",
    "move statue 1 to diningtable 1",
]


def statue_player(messages: tuple[Message, ...]) -> str:
    """Plays the statue game from the start of each executor run, or plans it in one step."""
    if "Execution order" in messages[0].content:
        return "Step 1: put some statue on diningtable\nExecution order: Step 1"
    if messages[0].content.startswith("You look back"):
        return "Reflection: look on the coffeetable first."
    turn = sum(1 for m in messages[2:] if m.role == "assistant")
    return say("Next step.", STATUE[turn] if turn < len(STATUE) else "failed")


@pytest.mark.parametrize("agent", ["react", "plan-execute", "try-again", "reflexion", "adapt"])
async def test_every_method_on_the_shared_executor_plays_alfworld(
    alf: AlfWorldEnv, agent: str
) -> None:
    first = alf.tasks("dev")[0]
    llm = ScriptedLLM(fn=statue_player)
    traj = await make_agent(agent).run(alf, first, Roles(llm), NullRecorder())
    assert traj.success and traj.actions == STATUE
    assert "Rules that matter in ALFWorld" in llm.calls[0].messages[0].content


# -- the CLI ---------------------------------------------------------------------------


def test_cli_runs_adapt_on_alfworld(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    executor = [
        say("Statues stand on dressers; there is one.", "go to dresser 1"),
        say("No statue on the dresser. I give up.", "failed"),
        *(say("Next.", a) for a in STATUE[:2]),
        say("I hold statue 1.", "completed"),
        *(say("Next.", a) for a in STATUE[2:]),
    ]
    plan = (
        "Thought: take it, then place it.\nStep 1: find and take a statue\n"
        "Step 2: put the statue in/on the diningtable\nExecution order: (Step 1 AND Step 2)"
    )
    scripted = {"provider": "scripted", "model": "s"}
    roles = {
        "default": {"provider": "scripted", "model": "echo"},
        "executor": {**scripted, "answers": executor},
        "planner": {**scripted, "answers": [plan]},
    }
    config = tmp_path / "run.yaml"
    config.write_text(json.dumps({"roles": roles}))
    store = tmp_path / "runs.sqlite3"
    args = ["run", "alfworld", "--agent", "adapt", "-n", "1", "--split", "dev", "-c", str(config)]
    code, _, err = run_cli(
        [*args, "--store", str(store), "--run-id", "alf", "--no-progress"], capsys
    )
    assert code == 0, err
    with RunStore(store) as db:
        (episode,) = db.episodes("alf")
    assert (
        episode.success
        and episode.steps == 1 + len(STATUE)
        and episode.task_group == "pick_and_place_simple"
    )


def test_the_agent_side_needs_no_alfworld_import() -> None:
    """The bridge is built where agents run; ALFWorld itself loads only where the env does."""
    code = (
        "import sys; from lorekit.agents.adapt import bridge_for; bridge_for('alfworld'); "
        "print(sorted(m for m in ('alfworld', 'textworld') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stderr
