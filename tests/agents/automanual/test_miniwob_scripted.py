"""The scripted AutoManual models for MiniWoB++ (``testing.miniwob``): their answers parse,
a build with them writes rules, a skill and a manual, a shown skill plays its own task
type and fails on another's page, and ``reproduce run --simulate`` plays a MiniWoB++
table end to end. They show the plumbing, never a model's ability."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("selenium", reason="the web extra is not installed")

from _planner_support import ISOLATION, LIMITS

from lorekit.agents.automanual.core import Outcome
from lorekit.agents.automanual.planner import Planner
from lorekit.agents.automanual.planner_parse import parse_answer, parse_conclusion
from lorekit.agents.automanual.profiles import profile_for
from lorekit.agents.automanual.testing.builder import rendered_rules
from lorekit.agents.automanual.testing.miniwob import (
    PAUSE,
    builder_model,
    plan_parts,
    planner_model,
    shown_examples,
    stage_roles,
)
from lorekit.agents.base import Episode
from lorekit.envs.base import Task
from lorekit.envs.miniwob import BrowserMissing, BrowserPool, MiniWoBEnv, find_browser
from lorekit.llm import ScriptedLLM
from lorekit.llm.base import Message
from lorekit.llm.roles import Roles
from lorekit.sandbox import WorkerPool

try:
    find_browser()
except BrowserMissing as missing:  # pragma: no cover - depends on the machine
    pytest.skip(f"MiniWoB++ needs a browser: {missing}", allow_module_level=True)

PROFILE = profile_for("miniwob")
ONE = Planner(PROFILE, examples=1)  # the search-engine example alone, as Table 5 builds
SEARCH = 'Use the textbox to enter "{name}" and press "Search", then find and click the {nth}.'


@dataclass(frozen=True)
class Shown:
    """A skill as the libraries hand it to the planner."""

    text: str
    goal: str
    task_type: str = "search-engine"
    kind: str = "skill"


def example_skill() -> Shown:
    """The search-engine example's two answers as one skill, as the scripted planner
    concludes it (the first part ends where the example paused)."""
    goal, codes = shown_examples(ONE.system_prompt())[0]
    return Shown(f"\n{PAUSE}\n\n".join(codes), goal)


def opening(sentence: str) -> str:
    return f'Task: {sentence}\nPage:\n<div id="wrap"><div id="query">{sentence}</div></div>'


def first(skill: Shown | None, sentence: str) -> tuple[Message, ...]:
    text = ONE.first_message(opening(sentence), rules_text="", retrieved=skill)
    return (Message("system", ONE.system_prompt()), Message("user", text))


# -- answers, without a browser ------------------------------------------------------------


def test_the_planner_plays_the_example_adapted_and_its_answers_parse() -> None:
    planner = planner_model()
    messages = first(None, SEARCH.format(name="Juan", nth="4th search result"))
    one = planner(messages)
    code = parse_answer(one).code
    assert 'agent.type("Juan")' in code and "Tora" not in code
    messages += (Message("assistant", one), Message("user", "## Feedback\nAll done."))
    two = parse_answer(planner(messages)).code
    assert "@data-result='3'" in two and "turn_to_next_page(agent)" in two
    messages += (Message("assistant", planner(messages)),)
    done = "## Conclusion: indirect_success\nConclude.\n\nWhat your last code did:\nok"
    skill = parse_conclusion(planner((*messages, Message("user", done))), succeeded=True)
    head, *rest = plan_parts(skill.skill_code)
    assert head.startswith('# Task: Use the textbox to enter "Juan"')
    assert [p.strip() for p in [head.split("\n", 1)[1], *rest]] == [code.strip(), two.strip()]


def test_the_planner_plays_a_shown_skill_and_stops_after_an_error() -> None:
    planner = planner_model()
    messages = first(example_skill(), SEARCH.format(name="Keli", nth="6th search result"))
    one = planner(messages)
    assert "Playing" not in one and 'agent.type("Keli")' in parse_answer(one).code
    refused = "## Feedback\nThe code stopped early: ApiError: no element matches //x"
    messages += (Message("assistant", one), Message("user", refused))
    after = parse_answer(planner(messages))
    assert after.code.strip() == "pass" and "no element matches" in after.analysis
    failed = f"## Conclusion: failure\nReflect.\n\nWhat your last code did:\n{refused}"
    reflection = planner((*messages, Message("assistant", "x"), Message("user", failed)))
    assert "### Reflection" in reflection and "no element matches //x" in reflection


def test_a_built_skill_is_adapted_from_the_task_it_notes() -> None:
    """A MiniWoB++ skill's stored goal is its page's name; the scripted planner's skills
    open with the sentence of their task, which the planner adapts them from."""
    noted = f"# Task: {SEARCH.format(name='Juan', nth='4th search result')}\n"
    code = example_skill().text.replace('"Tora"', '"Juan"').replace("'4'", "'3'")
    skill = Shown(noted + code, goal="search-engine")
    messages = first(skill, SEARCH.format(name="Keli", nth="6th search result"))
    one = parse_answer(planner_model()(messages)).code
    assert 'agent.type("Keli")' in one


def trajectory(task_type: str, feedback: str, outcome: str, rules: str = "") -> tuple[Message, ...]:
    episode = (
        f"## Current rules\n{rules or '(no rules yet)'}\n\n## Trajectory\nEpisode: e1\n"
        f"Task type: {task_type}\nOpening observation:\nTask: Do it.\n\n### Turn 1\n"
        f"Code:\n```python\n# [Step 1] Click the box\nagent.click_xpath('//b')\n```\n"
        f"Feedback:\n{feedback}\n\nOutcome: {outcome}\n\n## Result: {outcome}"
    )
    return (Message("system", "You keep rules."), Message("user", episode))


def test_the_builder_writes_an_error_rule_naming_the_type_and_a_success_process() -> None:
    builder = builder_model()
    lost = trajectory("tic-tac-toe", "The code stopped early: no element matches //b", "failure")
    assert "Diagnosis: rules" in builder(lost)
    calls = builder(
        (*lost, Message("assistant", "Diagnosis: rules"), Message("user", "## Manage rules"))
    )
    assert "For tic-tac-toe tasks: no element matches //b" in calls and "Unsolved Error" in calls
    won = trajectory(
        "click-button", "The episode is over: the task was accomplished.", "direct_success"
    )
    calls = builder((*won[:1], Message("user", won[1].content + "\n\n## Manage rules")))
    assert "'Success Process'" in calls and "Click the box" in calls
    ruled = (
        "rule_3 (Unsolved Error): For tic-tac-toe tasks: no element matches //b; "
        "the episode failed there."
    )
    again = trajectory(
        "tic-tac-toe", "The code stopped early: no element matches //b", "failure", ruled
    )
    assert "Diagnosis: agent" in builder(again)  # it says nothing the rules do not


# -- in Chromium ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browsers() -> Iterator[BrowserPool]:
    pool = BrowserPool(1)
    try:
        yield pool
    finally:
        pool.close()


@pytest.fixture(scope="module")
def sandbox() -> Iterator[WorkerPool]:
    with WorkerPool(size=1, isolation=ISOLATION) as shared:
        yield shared


def on_page_two(env: MiniWoBEnv, split: str) -> Task:
    """A search-engine task whose result is the 4th to 6th (one page turn, as the example)."""
    for task in env.tasks(split)[:8]:
        if re.search(r"click the [456]th search result", env.reset(task).text):
            return task
    raise AssertionError(f"no search-engine task of {split} asks for the 4th to 6th result")


async def play(env: MiniWoBEnv, task: Task, sandbox: WorkerPool, skill: Shown) -> Outcome:
    ep = await Episode.start(env, task.id)
    llm = ScriptedLLM(fn=planner_model())
    planned = await Planner(PROFILE, limits=LIMITS, pool=sandbox, examples=1).play(
        ep, Roles(llm), rules_text="", retrieved=skill, episode_id="t", task_type=task.group or ""
    )
    return planned.outcome


@pytest.mark.slow
async def test_a_shown_skill_accomplishes_its_type_and_fails_on_another(
    browsers: BrowserPool, sandbox: WorkerPool
) -> None:
    skill = example_skill()
    search = MiniWoBEnv("search-engine", pool=browsers, **PROFILE.env_options)
    login = MiniWoBEnv("login-user-popup", pool=browsers, **PROFILE.env_options)
    try:
        task = on_page_two(search, "test")
        assert (await play(search, task, sandbox, skill)).succeeded
        other = login.tasks("test")[0]
        assert await play(login, other, sandbox, skill) is Outcome.FAILURE
    finally:
        search.close()
        login.close()


@pytest.mark.slow
def test_a_build_on_two_types_writes_rules_a_skill_and_a_manual(tmp_path: Path) -> None:
    from lorekit.agents.automanual.build import run_build
    from lorekit.agents.automanual.formulate import formulate_build
    from lorekit.agents.automanual.libraries import Libraries
    from lorekit.agents.automanual.manuals import latest_manual
    from lorekit.agents.automanual.rules import RuleSystem
    from lorekit.agents.automanual.store import open_db
    from lorekit.eval.store import RunStore

    kwargs = {**PROFILE.env_options, "tasks": "search-engine,login-user-popup"}
    env = MiniWoBEnv(**kwargs)
    try:
        tasks = [
            on_page_two(env, "dev"),
            *(t for t in env.tasks("dev") if t.group != "search-engine"),
        ][:2]
    finally:
        env.close()
    store = tmp_path / "runs.sqlite3"
    roles = stage_roles(kwargs)
    done = asyncio.run(
        run_build(store, env_name="miniwob", env_kwargs=kwargs, tasks=tasks, roles=roles,
                  run_id="b", per_type=1, shuffle=False, examples=1)
    )  # fmt: skip
    assert done.errors == 0 and done.played == 2
    with RunStore(store) as db:
        outcomes = {
            e.task_group: e.info["notes"]["automanual"]["outcome"] for e in db.episodes("b")
        }
    assert outcomes == {"search-engine": "indirect_success", "login-user-popup": "failure"}
    rules = rendered_rules(RuleSystem(open_db(str(store)), "b").render())
    unsolved = [r for r in rules if r.type == "Unsolved Error"]
    assert [r.content.split(":")[0] for r in unsolved] == ["For login-user-popup tasks"]
    assert "no element matches" in unsolved[0].content
    skills = list(Libraries(open_db(str(store)), "b", readonly=True).skills().values())
    assert [s.task_type for s in skills] == ["search-engine"]
    assert skills[0].text.startswith("# Task: Use the textbox") and "# Pause" in skills[0].text
    asyncio.run(formulate_build(store, "b", roles))
    manual = latest_manual(open_db(str(store)), "b")
    assert manual is not None and "login-user-popup" in manual.markdown


@pytest.mark.slow
def test_reproduce_simulates_a_miniwob_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from _cli import run_cli

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LOREKIT_STORE", raising=False)
    args = ["reproduce", "run", "automanual-table5-miniwob-feedback", "--simulate", "-n", "1"]
    code, out, err = run_cli([*args, "--rows", "automanual-gpt35", "--no-progress"], capsys)
    assert code == 0, err[-3000:]
    assert "NOT a reproduction" in " ".join(out.split())
