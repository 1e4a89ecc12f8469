"""The planner's env profiles: they load, match the code APIs, and their examples work."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from _planner_support import ISOLATION, LIMITS

from lorekit.agents.automanual.agent import AutoManualAgent
from lorekit.agents.automanual.core import RuleType
from lorekit.agents.automanual.planner import Planner
from lorekit.agents.automanual.planner_parse import definitions, parse_answer
from lorekit.agents.automanual.profiles import (
    ProfileError,
    available,
    parse_profile,
    profile_for,
)
from lorekit.sandbox import WorkerPool, run_code

ENVS = ["alfworld", "miniwob"]


@pytest.fixture(scope="module")
def pool() -> Iterator[WorkerPool]:
    with WorkerPool(size=1, isolation=ISOLATION) as shared:
        yield shared


def test_profiles_exist_for_both_envs() -> None:
    assert available() == ENVS


def test_an_env_without_a_profile_is_a_clear_error() -> None:
    with pytest.raises(ProfileError, match=r"no planner profile for env 'crafter'.*alfworld"):
        profile_for("crafter")


@pytest.mark.parametrize("env", ENVS)
def test_documented_methods_are_the_code_apis_own(env: str) -> None:
    profile = profile_for(env)
    cls = profile.api_type()
    assert set(profile.callable_methods) <= set(cls.ACTIONS) | set(cls.QUERIES)
    assert set(cls.ACTIONS) <= set(profile.callable_methods)  # every action is offered
    lines = profile.api_description().splitlines()
    assert len(lines) == len(profile.api_methods) + len(profile.api_attributes)
    for name, line in zip(profile.api_methods, lines, strict=False):
        assert callable(getattr(cls, name))
        assert line.startswith(f"agent.{name}(") and "  # " in line
    assert "(no description)" not in profile.api_description()


@pytest.mark.parametrize(
    ("env", "answers", "types"),
    [
        (
            "alfworld",
            (3, 5, 4),  # the authors' MAX_REPLAN_STEP at build and test; the paper's 3 replans
            [RuleType.SPECIAL_MECHANISM, RuleType.USEFUL_HELPER_METHOD, RuleType.SUCCESS_PROCESS],
        ),
        ("miniwob", (6, 6, 7), [RuleType.USEFUL_HELPER_METHOD, RuleType.SUCCESS_PROCESS]),
    ],
)
def test_seed_rules_and_budgets(
    env: str, answers: tuple[int, int, int], types: list[RuleType]
) -> None:
    profile = profile_for(env)
    build, test, paper = answers
    assert 1 + Planner(profile).max_replans == build
    assert 1 + Planner(profile, build=False).max_replans == test
    for stage in (True, False):
        assert 1 + Planner(profile, build=stage, max_replans="paper").max_replans == paper
        assert Planner(profile, build=stage, max_replans="1").max_replans == 1
    with pytest.raises(ValueError, match="max_replans must be a whole number >= 0 or 'paper'"):
        Planner(profile, max_replans="twice")
    rules = profile.initial_rules
    assert [RuleType.parse(r["type"]) for r in rules] == types
    assert [r["type"] for r in rules] == [t.value for t in types]  # canonical names, as data
    assert all(r["rule"] and set(r) == {"rule", "type", "example"} for r in rules)
    # The helper rule's example is the helper the human example defines, unchanged.
    helper = next(r for r in rules if r["type"] == RuleType.USEFUL_HELPER_METHOD.value)
    defined = definitions(helper["example"])
    assert defined and ast.parse(defined).body
    example_code = "\n".join(parse_answer(t.answer).code for t in profile.example.turns)
    assert defined in definitions(example_code)


def test_alfworld_options_and_limits() -> None:
    profile = profile_for("alfworld")
    # AutoManual's text form, and no "You arrive at loc 12." (the authors' wrapper drops it)
    assert profile.env_options == {"object_ids": True, "arrival": "loc"}
    assert profile.limits.max_api_calls >= 100 and profile.limits.wall_s >= 30
    assert profile.goal("...\nYour task is to: put a mug in cabinet.\n") == "put a mug in cabinet"


@pytest.mark.parametrize("env", ENVS)
def test_system_prompt_carries_the_pieces(env: str) -> None:
    profile = profile_for(env)
    text = Planner(profile).system_prompt()
    assert profile.role in text and profile.api_description() in text
    assert profile.title and profile.api_text.startswith(profile.api_description())
    for example in profile.examples:
        assert example.task in text
        for turn in example.turns:
            assert turn.answer in text and turn.feedback in text
    assert "\n## " not in text  # the H2 headings belong to the user messages


def test_examples_are_shown_all_at_once_in_order() -> None:
    """Several examples: one section, counted, each numbered and named by its type
    (the authors' code shows its whole list after "Here are N examples")."""
    text = Planner(profile_for("miniwob")).system_prompt()
    assert text.count("# Examples\nHere are 4 examples,") == 1 and "# Example\n" not in text
    types = ["search-engine", "click-menu", "enter-date", "social-media-some"]
    where = [text.index(f"--- Example {n}: {t} ---\n") for n, t in enumerate(types, 1)]
    assert where == sorted(where)
    # One example (ALFWorld): the section as it always was.
    one = Planner(profile_for("alfworld")).system_prompt()
    assert "# Example\nThe task (first observation):\n" in one and "Here are" not in one


def _profile_data(**examples: object) -> dict[str, object]:
    example = {"task_type": "t", "task_id": "t#1", "task": "do it", "turns": [{"answer": "a"}]}
    data: dict[str, object] = {
        "env": "x",
        "title": "X",
        "role": "r",
        "api": {"class": "m:C", "methods": []},
        "rules": [],
        "max_replans": 1,
    }
    data.update({k: example if v == "one" else v for k, v in examples.items()})
    return data


def test_a_profile_holds_one_example_or_a_list() -> None:
    one = parse_profile(_profile_data(example="one"), "x.yaml")
    assert [e.task_id for e in one.examples] == ["t#1"] and one.example is one.examples[0]
    second = {"task_type": "u", "task_id": "u#2", "task": "t", "turns": [{"answer": "b"}]}
    first = _profile_data(example="one")["example"]
    listed = parse_profile(_profile_data(examples=[first, second]), "x.yaml")
    assert [e.task_type for e in listed.examples] == ["t", "u"] and listed.example.task_id == "t#1"
    with pytest.raises(ProfileError, match=r"either example .* or examples"):
        parse_profile(_profile_data(example="one", examples=[second]), "x.yaml")
    with pytest.raises(ProfileError, match="share a task type"):
        parse_profile(_profile_data(examples=[first, first]), "x.yaml")
    with pytest.raises(ProfileError, match="non-empty list"):
        parse_profile(_profile_data(examples=[]), "x.yaml")


def test_get_object_with_id_as_the_authors_wrote_it(pool: WorkerPool) -> None:
    """Case as written, repeats kept, a longer name's ids never taken for a shorter one's."""
    helpers = profile_for("alfworld").helpers
    code = """
obs = "On countertop_1, you see butterknife_1, knife_2, Knife_3, knife_2, and knifeblock_1."
print(get_object_with_id(obs, 'knife'))
print(get_object_with_id(obs, 'butterknife'), get_object_with_id(obs, 'fork'))
"""
    result = run_code(code, preload=[helpers], pool=pool)
    assert result.ok, result.feedback()
    assert result.output.splitlines() == ["['knife_2', 'knife_2']", "['butterknife_1'] []"]


class _Rooms:
    """A stand-in agent: each receptacle's text, and the calls made."""

    def __init__(self, seen: dict[str, str]) -> None:
        self.seen, self.calls = seen, []

    def go_to(self, place: str) -> str:
        self.calls.append(f"go_to {place}")
        return self.seen[place]

    def open(self, place: str) -> str:
        self.calls.append(f"open {place}")
        return f"You open {place}. In it, you see mug_3."


def test_find_object_as_the_authors_wrapper_has_it(pool: WorkerPool) -> None:
    """Closed receptacles are opened; the name is looked for in the whole text (so
    "pen" shows in "open"); nothing found is (None, None), which the published
    skills test for."""
    rooms = _Rooms({"drawer_1": "The drawer_1 is closed.", "desk_1": "On desk_1, you see a pen."})
    code = """
print(find_object(agent, ['drawer_1'], 'mug'))
print(find_object(agent, ['desk_1'], 'fork'))
print(find_object(agent, ['drawer_1'], 'pen'))
"""
    result = run_code(
        code, rooms, preload=[profile_for("alfworld").helpers], api_name="agent", pool=pool
    )
    assert result.ok, result.feedback()
    assert result.output.splitlines() == [
        "(['mug_3'], 'drawer_1')",
        "(None, None)",
        "([], 'drawer_1')",
    ]
    first, second, third = ["go_to drawer_1", "open drawer_1"], ["go_to desk_1"], ["go_to drawer_1"]
    assert rooms.calls == [*first, *second, *third, "open drawer_1"]


def test_the_alfworld_example_solves_its_game(pool: WorkerPool) -> None:
    pytest.importorskip("textworld", reason="the alfworld extra is not installed")
    from lorekit.envs import make

    profile = profile_for("alfworld")
    env = make("alfworld", split="dev", **profile.env_options)
    first = env.reset(profile.example.task_id).text
    # the example shows the game's real opening, in the published form
    assert profile.example.task in profile.opening(first)
    assert not profile.opening(first).startswith("-=")
    (turn,) = profile.example.turns
    api = profile.code_api(env)
    result = run_code(
        parse_answer(turn.answer).code,
        api,
        api_name="agent",
        api_methods=profile.callable_methods,
        api_state=api.state,
        preload=[profile.helpers],
        limits=LIMITS,
        pool=pool,
    )
    assert result.ok, result.feedback()
    assert env.won and env.done


@dataclass(frozen=True)
class Found:
    kind: str
    task_type: str = "pick_and_place_simple"
    goal: str = "put a mug in cabinet"
    text: str = "x = 1"


def test_first_message_sections_in_contract_order() -> None:
    planner = Planner("alfworld")
    opening = "You are in the middle of a room.\n\nYour task is to: put a pen in drawer."
    with_skill = planner.first_message(
        opening, rules_text="rule_0 ...", rules_heading="Manual", retrieved=Found("skill")
    )
    heads = [line for line in with_skill.splitlines() if line.startswith("## ")]
    assert heads == ["## Manual", "## Skill for a similar task (pick_and_place_simple)", "## Task"]
    assert "```python\nx = 1\n```" in with_skill and with_skill.endswith(opening)
    with_reflection = planner.first_message(opening, rules_text="", retrieved=Found("reflection"))
    heads = [line for line in with_reflection.splitlines() if line.startswith("## ")]
    assert heads == [
        "## Rules",
        "## Reflection from an earlier failure (pick_and_place_simple)",
        "## Task",
    ]
    assert "## Rules\n(no rules yet)" in with_reflection


def test_the_planner_shows_as_many_examples_as_asked(tmp_path: Path) -> None:
    """``examples=N`` shows the first N (the paper's 9-type MiniWoB++ build had the
    search-engine one alone); the test agent passes its option on."""
    profile = profile_for("miniwob")
    one = Planner(profile, examples=1).system_prompt()
    assert "# Example\nThe task (first observation):\nTask: Use the textbox" in one
    assert "click-menu" not in one and "Here are" not in one
    two = Planner(profile, examples=2).system_prompt()
    assert "Here are 2 examples" in two and "--- Example 2: click-menu ---" in two
    assert "enter-date" not in two
    assert Planner(profile).system_prompt() == Planner(profile, examples=4).system_prompt()
    for wrong in (0, 5, True):
        with pytest.raises(ValueError, match="from 1 to 4"):
            Planner(profile, examples=wrong)
    manual = tmp_path / "manual.md"
    manual.write_text("# A manual\n", encoding="utf-8")
    agent = AutoManualAgent(str(manual), examples=1)
    assert agent._planner("miniwob").system_prompt() == one
