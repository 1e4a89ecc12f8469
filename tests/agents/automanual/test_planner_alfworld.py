"""The AutoManual planner on real generated ALFWorld games, through the real sandbox.

The model is scripted; everything else is real: the env (the example's dev
game, "put a soapbottle in drawer"), the code API, the sandbox worker, the
feedback, and the episode's record. Success always comes from the env.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

pytest.importorskip("textworld", reason="the alfworld extra is not installed")

from _planner_support import ISOLATION, LIMITS, ListRecorder, answer, skill

from lorekit.agents.automanual.core import Outcome, PlannerEpisode
from lorekit.agents.automanual.planner import NOTES_KEY, Planner
from lorekit.agents.automanual.profiles import EnvProfile, profile_for
from lorekit.agents.base import Episode
from lorekit.envs import make
from lorekit.llm import ScriptedLLM
from lorekit.llm.base import Message
from lorekit.llm.roles import Roles
from lorekit.sandbox import Limits, WorkerPool

PROFILE: EnvProfile = profile_for("alfworld")
GAME = PROFILE.example.task_id  # a soapbottle on toilet_1; drawer_1 is closed
TYPE = PROFILE.example.task_type

FIND = """
def find_object(agent, receptacles, object_name):
    for receptacle in receptacles:
        observation = agent.go_to(receptacle)
        if "closed" in observation:
            observation = agent.open(receptacle)
        object_ids = get_object_with_id(observation, object_name)
        if object_ids:
            return object_ids, receptacle
    return [], None
"""
#: Finish the task from anywhere, with find_object already defined.
FINISH = """
# [Step 1] Search where the first code did not look
object_ids, found_at = find_object(agent, ['toilet_1', 'garbagecan_1'], 'soapbottle')
assert object_ids, "Error in [Step 1]: still no soapbottle"
# [Step 2] Take it
soapbottle = object_ids[0]
agent.take(soapbottle, found_at)
assert agent.holding == soapbottle, "Error in [Step 2]"
# [Step 3] Put it in drawer_1
if "closed" in agent.go_to('drawer_1'):
    agent.open('drawer_1')
agent.put(soapbottle, 'drawer_1')
"""
SOLVE = FIND + FINISH
WRONG = (
    FIND
    + """
# [Step 1] Only the basins (wrongly assumed to hold the soap)
object_ids, found_at = find_object(agent, ['sinkbasin_1', 'bathtubbasin_1'], 'soapbottle')
assert object_ids, "Error in [Step 1]: no soapbottle in the basins"
"""
)
REFLECTION = "### Reflection\nThe segment `agent.look()` never searched the room."


@pytest.fixture(scope="module")
def pool() -> Iterator[WorkerPool]:
    with WorkerPool(size=2, isolation=ISOLATION) as shared:
        yield shared


@dataclass
class Played:
    planned: PlannerEpisode
    ep: Episode
    llm: ScriptedLLM
    recorder: ListRecorder


async def play(
    pool: WorkerPool,
    answers: list[str | BaseException] | None = None,
    *,
    fn: object = None,
    limits: Limits = LIMITS,
    max_steps: int | None = 50,
    **options: object,
) -> Played:
    env = make("alfworld", split="dev", max_steps=max_steps, **PROFILE.env_options)
    recorder = ListRecorder()
    ep = await Episode.start(env, GAME, recorder)
    llm = ScriptedLLM(answers) if fn is None else ScriptedLLM(fn=fn)  # type: ignore[arg-type]
    planner = Planner(PROFILE, limits=limits, pool=pool, **options)  # type: ignore[arg-type]
    planned = await planner.play(
        ep, Roles({"planner": llm}), rules_text="", episode_id="ep-1", task_type=TYPE
    )
    return Played(planned, ep, llm, recorder)


def _check_record(played: Played) -> None:
    """Every env step is in the trajectory and the recorder, once, in order."""
    t = played.ep.trajectory
    assert [s[0] for s in played.recorder.steps] == t.actions
    assert len(t.actions) == sum(turn.actions for turn in played.planned.turns)
    assert t.notes[NOTES_KEY] == played.planned.to_dict()


async def test_direct_success_with_the_example_answer(pool: WorkerPool) -> None:
    code = SOLVE.replace("['toilet_1', 'garbagecan_1']", "['sidetable_1', 'toilet_1']")
    played = await play(pool, [PROFILE.example.turns[0].answer, skill(code)])
    t, planned = played.ep.trajectory, played.planned
    assert t.success and t.done  # the engine's verdict
    assert planned.outcome is Outcome.DIRECT_SUCCESS
    assert len(planned.turns) == 1 and planned.turns[0].error is None
    assert planned.goal == "put a soapbottle in drawer"
    assert planned.skill_code.startswith("def find_object") and planned.reflection == ""
    _check_record(played)
    assert t.actions[-1] == "move soapbottle 1 to drawer 1"
    feedback = planned.turns[0].feedback
    assert "agent.go_to('sidetable_1') -> You arrive at sidetable_1." in feedback
    assert "The episode is over: the task was accomplished." in feedback
    # The prompt: the system message, then the sections of the contract, in order.
    first = played.llm.calls[0].messages
    assert first[0].role == "system" and "agent.go_to(recep: str) -> str" in first[0].content
    assert "get_object_with_id(observation, object_name)" in first[0].content
    user = first[1].content
    assert user.index("## Rules\n(no rules yet)") < user.index("## Task\n")
    assert "Your task is to: put a soapbottle in drawer." in user
    closing = played.llm.calls[1].messages[-1].content
    assert closing.startswith("## Conclusion: direct_success\n")


async def test_indirect_success_reuses_the_defs_of_the_failed_turn(pool: WorkerPool) -> None:
    mistakes = "I searched only the basins."
    played = await play(pool, [answer(WRONG), answer(FINISH), skill(SOLVE, mistakes)])
    planned, t = played.planned, played.ep.trajectory
    assert t.success and planned.outcome is Outcome.INDIRECT_SUCCESS
    first, second = planned.turns
    assert first.error == "AssertionFailed" and second.error is None
    assert "Error in [Step 1]: no soapbottle in the basins" in first.feedback
    assert "at: assert object_ids" in first.feedback
    # The second code only calls find_object: the first turn's def was preloaded,
    # and nothing the first turn did was done again.
    assert "def find_object" not in second.code
    assert t.actions.count("go to sinkbasin 1") == 1
    assert t.actions[:2] == ["go to sinkbasin 1", "go to bathtubbasin 1"]
    assert t.actions[2] == "go to toilet 1"
    second_prompt = played.llm.calls[1].messages[-1].content
    assert second_prompt.startswith("## Feedback\nThe code stopped early: AssertionError")
    closing = played.llm.calls[2].messages[-1].content
    assert closing.startswith("## Conclusion: indirect_success\n")
    assert planned.reflection == mistakes and "def find_object" in planned.skill_code
    _check_record(played)


async def test_failure_after_max_replans(pool: WorkerPool) -> None:
    def model(messages: tuple[Message, ...]) -> str:
        if messages[-1].content.startswith("## Conclusion: failure"):
            return REFLECTION
        return answer("print(agent.look())")

    played = await play(pool, fn=model)
    planned = played.planned
    assert planned.outcome is Outcome.FAILURE and not played.ep.trajectory.success
    assert len(planned.turns) == 1 + PROFILE.max_replans == 4
    assert len(played.llm.calls) == 5  # four turns, one conclusion
    assert planned.reflection == "The segment `agent.look()` never searched the room."
    assert planned.skill_code == ""
    assert "Actions used so far: 4 of 50." in planned.turns[-1].feedback
    _check_record(played)


async def test_the_env_action_limit_ends_the_episode(pool: WorkerPool) -> None:
    code = "for _ in range(9):\n    agent.go_to('toilet_1')\n    agent.go_to('drawer_1')"
    played = await play(pool, [answer(code), REFLECTION], max_steps=5)
    planned, t = played.planned, played.ep.trajectory
    assert len(planned.turns) == 1 and planned.outcome is Outcome.FAILURE
    assert t.done and not t.success and len(t.actions) == 5  # refused calls are no steps
    assert "The episode is over: the limit of actions was reached." in planned.turns[0].feedback
    assert "The episode is over; call reset() to start a new one." in planned.turns[0].feedback
    _check_record(played)


async def test_escape_attempts_come_back_as_feedback_and_the_episode_goes_on(
    pool: WorkerPool,
) -> None:
    attempts = [
        "print(open('/etc/passwd').read())",
        "import os\nprint(os.listdir('/'))",
        "import subprocess\nsubprocess.run(['id'])",
        "while True:\n    pass",
        "print('x' * 100_000_000)",
    ]
    quick = Limits(wall_s=2.0, cpu_s=2.0, max_api_calls=200, grace_s=0.5)
    answers = [answer(c) for c in attempts] + [answer(SOLVE), skill(SOLVE)]
    played = await play(pool, answers, limits=quick, max_replans=5)
    planned = played.planned
    errors = [turn.error for turn in planned.turns]
    assert errors[:3] == ["ForbiddenOperation", "ForbiddenImport", "ForbiddenImport"]
    assert errors[3] in ("TimeLimitExceeded", "CpuLimitExceeded")
    assert errors[4] is not None and errors[5] is None
    assert "/etc/passwd" in planned.turns[0].feedback and "root:" not in planned.turns[0].feedback
    assert planned.outcome is Outcome.INDIRECT_SUCCESS and played.ep.trajectory.success
    _check_record(played)


async def test_an_answer_without_code_is_asked_again(pool: WorkerPool) -> None:
    played = await play(pool, ["I will look around first.", answer(SOLVE), skill(SOLVE)])
    planned = played.planned
    assert [call.last.split("\n")[0] for call in played.llm.calls[1:2]] == ["## Feedback"]
    assert "no ```python code block" in played.llm.calls[1].last
    assert len(planned.turns) == 1 and planned.turns[0].error is None
    assert planned.outcome is Outcome.DIRECT_SUCCESS


async def test_a_turn_without_code_after_the_retries_is_a_failed_turn(pool: WorkerPool) -> None:
    answers = ["No code.", "Still no code.", answer(SOLVE), skill(SOLVE)]
    played = await play(pool, answers, format_retries=1)
    first, second = played.planned.turns
    assert first.error == "AnswerFormatError" and first.actions == 0
    assert first.answer == "Still no code." and "No code ran this turn" in first.feedback
    assert second.error is None and played.planned.outcome is Outcome.INDIRECT_SUCCESS


async def test_helper_rules_preload_their_defs_only(pool: WorkerPool) -> None:
    helper_rule = """
agent.go_to('garbagecan_1')  # a statement: must never run

def fetch_from(agent, where, name):
    ids = get_object_with_id(agent.go_to(where), name)
    agent.take(ids[0], where)
    return ids[0]

@print
def decorated(agent):
    pass

def acts_when_defined(x=agent.go_to('garbagecan_1')):
    pass
"""
    code = """
try:
    decorated
    print('decorated defined')
except NameError:
    print('decorated missing')
try:
    acts_when_defined
    print('acts_when_defined defined')
except NameError:
    print('acts_when_defined missing')
soapbottle = fetch_from(agent, 'toilet_1', 'soapbottle')
agent.go_to('drawer_1')
agent.open('drawer_1')
agent.put(soapbottle, 'drawer_1')
"""
    env = make("alfworld", split="dev", **PROFILE.env_options)
    ep = await Episode.start(env, GAME)
    llm = ScriptedLLM([answer(code), skill(code)])
    planned = await Planner(PROFILE, limits=LIMITS, pool=pool).play(
        ep,
        Roles(llm),
        rules_text="rule_1 (Useful Helper Method): use fetch_from",
        episode_id="ep-2",
        task_type=TYPE,
        helper_sources=[helper_rule],
    )
    assert planned.outcome is Outcome.DIRECT_SUCCESS, planned.turns[0].feedback
    assert "garbagecan" not in " ".join(ep.trajectory.actions)
    assert ep.trajectory.actions[0] == "go to toilet 1"
    feedback = planned.turns[0].feedback
    assert "decorated missing" in feedback and "acts_when_defined missing" in feedback


async def test_notes_hold_the_turns_played_before_a_crash(pool: WorkerPool) -> None:
    env = make("alfworld", split="dev", **PROFILE.env_options)
    ep = await Episode.start(env, GAME)
    llm = ScriptedLLM([answer(WRONG), RuntimeError("backend down")])
    planner = Planner(PROFILE, limits=LIMITS, pool=pool)
    with pytest.raises(RuntimeError):
        await planner.play(ep, Roles(llm), rules_text="", episode_id="ep-3", task_type=TYPE)
    kept = PlannerEpisode.from_dict(ep.trajectory.notes[NOTES_KEY])
    assert kept.episode_id == "ep-3" and len(kept.turns) == 1
    assert kept.turns[0].error == "AssertionFailed" and kept.turns[0].actions == 2
    assert len(ep.trajectory.actions) == 2


async def test_the_latest_definition_of_a_function_is_carried(pool: WorkerPool) -> None:
    codes = [
        "def version():\n    return 1\n\ndef other():\n    return 'kept'",
        "def version():\n    return 2",
        "print(version(), other())",
    ]
    answers = [answer(c) for c in codes] + [REFLECTION]
    played = await play(pool, answers, max_replans=2)
    last = played.planned.turns[-1]
    # version() is its second definition, and other() from the first turn is still there.
    assert last.error is None and "Printed output:\n2 kept" in last.feedback
    assert played.ep.trajectory.actions == []


async def test_under_the_harness_env_in_its_own_process(pool: WorkerPool) -> None:
    """As the harness runs ALFWorld: the env in a child process, an awaitable handle."""
    from lorekit.envs import open_env
    from lorekit.envs.registry import EnvSpec

    spec = EnvSpec("alfworld", {"split": "dev", **PROFILE.env_options}, execution="process")
    env = await open_env(spec)
    try:
        recorder = ListRecorder()
        ep = await Episode.start(env, GAME, recorder)
        llm = ScriptedLLM([answer(WRONG), answer(FINISH), skill(SOLVE)])
        planned = await Planner(PROFILE, limits=LIMITS, pool=pool).play(
            ep, Roles(llm), rules_text="", episode_id="ep-4", task_type=TYPE
        )
    finally:
        env.close()
    assert type(env).__name__ == "ProcessEnv"
    assert planned.outcome is Outcome.INDIRECT_SUCCESS and ep.trajectory.success
    assert [s[0] for s in recorder.steps] == ep.trajectory.actions
    assert len(ep.trajectory.actions) == sum(t.actions for t in planned.turns) > 5


async def test_variables_of_an_earlier_turn_are_still_there(pool: WorkerPool) -> None:
    # Turn 1 sets plain variables and stops; turn 2 uses them: one namespace per episode.
    first = FIND + "\nplaces = ['toilet_1', 'garbagecan_1']\ntarget = 'drawer_1'\n"
    second = """
object_ids, found_at = find_object(agent, places, 'soapbottle')
soapbottle = object_ids[0]
agent.take(soapbottle, found_at)
if "closed" in agent.go_to(target):
    agent.open(target)
agent.put(soapbottle, target)
"""
    played = await play(pool, [answer(first), answer(second), skill(first + second)])
    planned = played.planned
    assert planned.turns[1].error is None, planned.turns[1].feedback
    assert played.ep.trajectory.success and planned.outcome is Outcome.INDIRECT_SUCCESS
    system = played.llm.calls[0].messages[0].content
    assert "one namespace" in system


async def test_the_shown_skills_functions_are_defined_and_both_items_shown(
    pool: WorkerPool,
) -> None:
    # as in the authors' code: the retrieved skill's functions exist before the
    # planner's first code runs, and a similar skill and the type's failure
    # record are shown together
    from lorekit.agents.automanual.libraries import Retrieved

    shown = [
        Retrieved("skill", "pick_heat_then_place_in_recep", "heat some egg", SOLVE, False),
        Retrieved("reflection", TYPE, "put a soapbar in cabinet", "The drawer was shut.", True),
    ]
    env = make("alfworld", split="dev", **PROFILE.env_options)
    ep = await Episode.start(env, GAME)
    llm = ScriptedLLM([answer(FINISH), skill(SOLVE)])  # FINISH calls find_object, undefined
    planned = await Planner(PROFILE, limits=LIMITS, pool=pool).play(
        ep, Roles(llm), rules_text="", retrieved=shown, episode_id="ep-s", task_type=TYPE
    )
    assert planned.outcome is Outcome.DIRECT_SUCCESS, planned.turns[0].feedback
    user = llm.calls[0].messages[1].content
    skill_at = user.index("## Skill for a similar task (pick_heat_then_place_in_recep)")
    assert skill_at < user.index(f"## Reflection from an earlier failure ({TYPE})")
    assert "The drawer was shut." in user
    # switched off, the same answer finds no find_object
    ep = await Episode.start(make("alfworld", split="dev", **PROFILE.env_options), GAME)
    llm = ScriptedLLM([answer(FINISH), REFLECTION, REFLECTION])
    off = Planner(PROFILE, limits=LIMITS, pool=pool, max_replans=0, predefine_skills=False)
    planned = await off.play(
        ep, Roles(llm), rules_text="", retrieved=shown, episode_id="ep-t", task_type=TYPE
    )
    assert planned.outcome is Outcome.FAILURE and "find_object" in planned.turns[0].feedback
