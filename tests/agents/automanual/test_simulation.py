"""The scripted AutoManual models of the Path Dependence study, on real generated ALFWorld games.

Episodes here run the planner's code through the real sandbox against
``AlfWorldCodeApi``, with a minimal loop written for these tests (the prompt
layout of the issue's contract: ``## Rules``, ``## Skill for a similar task
(TYPE)``, ``## Task``; ``## Feedback``; ``## Conclusion: OUTCOME``) and a tiny
stand-in for the rule system that applies the builder's literal calls.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

import pytest

from lorekit.agents.automanual.profiles import profile_for
from lorekit.agents.automanual.testing.builder import (
    builder_model,
    consolidator_model,
    formulator_model,
    rendered_rules,
)
from lorekit.agents.automanual.testing.code import (
    TaskGoal,
    parse_goal,
    parse_receptacles,
)
from lorekit.agents.automanual.testing.planner import draw, planner_model
from lorekit.agents.automanual.testing.rules import (
    TRANSFORM,
    TWO_APART,
    recognise,
)
from lorekit.envs import make
from lorekit.envs.alfworld import AlfWorldCodeApi
from lorekit.envs.alfworld.env import AlfWorldEnv
from lorekit.envs.alfworld.world import TASK_TYPES
from lorekit.envs.base import Task
from lorekit.llm.base import Message
from lorekit.sandbox import Limits, run_code

CODE = re.compile(r"```python\n(.*?)```", re.S)
TWO = "pick_two_obj_and_place"
NO_SECOND = (
    "AssertionError: Error in [Step 3]: no second soapbottle in drawer_1, where the first one was"
)


@pytest.fixture(scope="module")
def env() -> AlfWorldEnv:
    made = make("alfworld", split="dev", object_ids=True)
    assert isinstance(made, AlfWorldEnv)
    return made


@dataclass
class Run:
    outcome: str
    conclusion: str
    messages: list[Message] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "\n\n".join(m.content for m in self.messages)


def play(
    env: AlfWorldEnv,
    task: Task,
    planner: object,
    *,
    rules: str | None = "(no rules yet)",
    skill: tuple[str, str, str] | None = None,
    replans: int = 3,
) -> Run:
    """One planner episode: code -> sandbox -> feedback, then the conclusion request."""
    opening = env.reset(task).text
    first = "" if rules is None else f"## Rules\n{rules}\n\n"
    if skill is not None:
        first += (
            f"## Skill for a similar task ({skill[0]})\n{skill[1]}\n```python\n{skill[2]}```\n\n"
        )
    messages = [
        Message("system", "You write code."),
        Message("user", first + "## Task\n" + opening),
    ]
    api = AlfWorldCodeApi(env)
    errors = 0
    feedback = ""
    for _ in range(replans + 1):
        answer = planner(tuple(messages))  # type: ignore[operator]
        messages.append(Message("assistant", answer))
        found = CODE.search(answer)
        assert found is not None, answer
        result = run_code(
            found.group(1),
            api,
            api_name="agent",
            api_methods=profile_for("alfworld").callable_methods,
            limits=Limits(max_api_calls=200),
            api_state=api.state,  # agent.holding as the published agent reads it
        )
        feedback = "## Feedback\n" + result.feedback()
        if env.won or env.done:
            break
        errors += 1
        messages.append(Message("user", feedback))
    outcome = "failure" if not env.won else "indirect_success" if errors else "direct_success"
    messages.append(Message("user", f"{feedback}\n\n## Conclusion: {outcome}\nConclude."))
    conclusion = planner(tuple(messages))  # type: ignore[operator]
    messages.append(Message("assistant", conclusion))
    return Run(outcome, conclusion, messages)


def skill_of(run: Run) -> str:
    found = CODE.search(run.conclusion)
    assert found is not None, run.conclusion
    return found.group(1)


def first_game(env: AlfWorldEnv, task_type: str) -> Task:
    return next(t for t in env.tasks("dev") if t.group == task_type)


def two_games(env: AlfWorldEnv, split: str = "dev") -> tuple[list[Task], list[Task]]:
    """Put Two games where the first object the search meets has its twin beside it, and not.

    Read from the env's state (``world()``): the receptacles holding the goal's
    object type, in the order the scripted planner searches them.
    """
    from lorekit.agents.automanual.testing.code import search_order

    together, apart = [], []
    for task in env.tasks(split):
        if task.group != TWO:
            continue
        opening = env.reset(task).text
        goal, world = env.goal, env.world()
        assert goal is not None
        holds: dict[str, int] = {}
        for obj, recep in world.inside.items():
            if world.obj_type[obj] == goal.obj:
                holds[recep.replace(" ", "_")] = holds.get(recep.replace(" ", "_"), 0) + 1
        order = search_order(parse_receptacles(opening), skip_type=goal.recep)
        first = next(r for r in order if r in holds)
        (together if holds[first] >= 2 else apart).append(task)
    return together, apart


# -- reading the prompt --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("put a mug in shelf", TaskGoal("pick_and_place_simple", "mug", "shelf")),
        (
            "put some pencil on coffeetable",
            TaskGoal("pick_and_place_simple", "pencil", "coffeetable"),
        ),
        ("look at cd under the desklamp", TaskGoal("look_at_obj_in_light", "cd", "", "desklamp")),
        (
            "examine the book with the desklamp",
            TaskGoal("look_at_obj_in_light", "book", "", "desklamp"),
        ),
        (
            "put a clean cloth in drawer",
            TaskGoal("pick_clean_then_place_in_recep", "cloth", "drawer"),
        ),
        (
            "put a cleaned cloth in drawer",
            TaskGoal("pick_clean_then_place_in_recep", "cloth", "drawer"),
        ),
        (
            "clean some cloth and put it in drawer",
            TaskGoal("pick_clean_then_place_in_recep", "cloth", "drawer"),
        ),
        (
            "put a hot bread in countertop",
            TaskGoal("pick_heat_then_place_in_recep", "bread", "countertop"),
        ),
        (
            "heat some egg and put it in garbagecan",
            TaskGoal("pick_heat_then_place_in_recep", "egg", "garbagecan"),
        ),
        (
            "put a cool apple in countertop",
            TaskGoal("pick_cool_then_place_in_recep", "apple", "countertop"),
        ),
        (
            "cool some pan and put it in stoveburner",
            TaskGoal("pick_cool_then_place_in_recep", "pan", "stoveburner"),
        ),
        ("put two soapbottle in countertop", TaskGoal(TWO, "soapbottle", "countertop")),
        ("find two pillow and put them in sofa", TaskGoal(TWO, "pillow", "sofa")),
    ],
)
def test_goal_sentences_of_every_task_type(sentence: str, expected: TaskGoal) -> None:
    assert parse_goal(f"You see a fridge_1.\n\nYour task is to: {sentence}.") == expected


def test_rules_are_recognised_by_scope_and_key_phrase() -> None:
    rules = (
        f"rule_0 (Corrected Error): For {TWO} tasks: the two objects {TWO_APART}.\n\n"
        f"rule_1 (Success Process): For pick_heat_then_place_in_recep tasks: take it, "
        f"{TRANSFORM['pick_heat_then_place_in_recep']}, place it.\n\n"
        "rule_2 (Corrected Error): For pick_cool_then_place_in_recep tasks: the objects "
        f"{TWO_APART}."
    )
    assert recognise(rules, TWO).two_apart == ("rule_0",)
    assert recognise(rules, "pick_heat_then_place_in_recep").transform == ("rule_1",)
    cool = recognise(rules, "pick_cool_then_place_in_recep")
    assert cool.two_apart == () and cool.transform == ()  # the phrase counts only for Put Two
    assert recognise(rules.replace(TWO, "all task types"), TWO).two_apart == ("rule_0",)


# -- the planner on real games -------------------------------------------------------------


@pytest.mark.parametrize("task_type", TASK_TYPES)
def test_generic_code_solves_games_of_every_type(env: AlfWorldEnv, task_type: str) -> None:
    """The first three dev games of the type: solved, unless ALFWorld's 50 actions ran out."""
    games = [t for t in env.tasks("dev") if t.group == task_type][:3]
    runs = [play(env, task, planner_model()) for task in games]
    for run in runs:
        assert run.outcome == "direct_success" or "episode is over" in run.text, run.text[-3000:]
        assert "### Related rules\nnone" in run.messages[2].content
    solved = [r for r in runs if r.outcome == "direct_success"]
    assert len(solved) >= 2
    assert "# [Step 1]" in skill_of(solved[0]) and "assert" in skill_of(solved[0])


def test_same_prompt_same_answer_and_the_seed_matters(env: AlfWorldEnv) -> None:
    heat = [t for t in env.tasks("dev") if t.group == "pick_heat_then_place_in_recep"][:6]
    prompts = [
        (
            Message("system", "s"),
            Message("user", "## Rules\n(no rules yet)\n\n## Task\n" + env.reset(t).text),
        )
        for t in heat
    ]
    a, b = planner_model(forget=0.5, seed=1), planner_model(forget=0.5, seed=1)
    assert [a(p) for p in prompts] == [b(p) for p in prompts]
    forgot = {
        s: [".heat_with(" not in planner_model(forget=0.5, seed=s)(p) for p in prompts]
        for s in (1, 2, 3)
    }
    assert any(forgot[1]) and not all(forgot[1])
    assert len({tuple(v) for v in forgot.values()}) > 1
    assert draw(1, "x") == draw(1, "x") != draw(2, "x")


def test_a_forgotten_state_change_is_repaired_or_reflected_on(env: AlfWorldEnv) -> None:
    task = first_game(env, "pick_heat_then_place_in_recep")
    fixed = play(env, task, planner_model(forget=1.0, repair=1.0))
    assert fixed.outcome == "indirect_success"
    assert "### Mistakes" in fixed.conclusion and "I forgot to heat" in fixed.conclusion
    assert ".heat_with(" in skill_of(fixed)  # the skill keeps the step it had forgotten
    stuck = play(env, task, planner_model(forget=1.0, repair=0.0))
    assert stuck.outcome == "failure"
    assert "### Reflection" in stuck.conclusion and "# [Step" in stuck.conclusion
    heat = TRANSFORM["pick_heat_then_place_in_recep"]
    rules = f"rule_4 (Success Process): For pick_heat_then_place_in_recep tasks: take it, {heat}."
    ruled = play(env, task, planner_model(forget=1.0, repair=0.0), rules=rules)
    assert ruled.outcome == "direct_success"
    assert "### Related rules\nrule_4" in ruled.messages[2].content


@pytest.mark.slow
def test_put_two_skill_is_path_dependent_and_a_rule_fixes_it(env: AlfWorldEnv) -> None:
    together, apart_games = two_games(env)
    planner = planner_model(repair=0.0)
    # an apart game the generic program (search for each object) solves within 50 actions
    apart = [t for t in apart_games if play(env, t, planner).outcome == "direct_success"][:1]
    assert len(together) >= 2 and apart
    origin = play(env, together[0], planner)
    assert origin.outcome == "direct_success"
    skill = skill_of(origin)
    assert "same receptacle as the first" in skill  # what this episode saw, baked in
    goal_line = "Your task is to: " + together[0].goal
    copied = (TWO, goal_line, skill)
    ok = play(env, together[1], planner, skill=copied)
    assert ok.outcome == "direct_success"
    bad = play(env, apart[0], planner, skill=copied)
    assert bad.outcome == "failure"
    assert re.search(r"no second \w+ in \w+_\d+, where the first one was", bad.text)
    rule = f"rule_7 (Corrected Error): For {TWO} tasks: the two objects {TWO_APART}; search again."
    fixed = play(env, apart[0], planner, skill=copied, rules=rule)
    assert fixed.outcome == "direct_success"
    assert "same receptacle" not in skill_of(fixed)
    # With a repair, the apart game succeeds indirectly and the planner names the reason.
    repaired = play(env, apart[0], planner_model(repair=1.0), skill=copied)
    assert repaired.outcome == "indirect_success" and TWO_APART in repaired.conclusion


# -- builder, consolidator, formulator ------------------------------------------------------


class Rules:
    """A stand-in for the rule system: applies the literal calls of a model's code block."""

    def __init__(self) -> None:
        self.rules: dict[str, tuple[str, str]] = {}
        self.next = 0
        self.calls: list[str] = []

    def apply(self, answer: str) -> None:
        block = CODE.search(answer)
        assert block is not None, answer
        for stmt in ast.parse(block.group(1)).body:
            assert isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
            func = stmt.value.func
            assert isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
            assert func.value.id == "rule_system" and not stmt.value.args
            kw = {k.arg: ast.literal_eval(k.value) for k in stmt.value.keywords}
            self.calls.append(func.attr)
            if func.attr == "write_rule":
                self.rules[f"rule_{self.next}"] = (kw["type"], kw["rule"])
                self.next += 1
            elif func.attr == "update_rule":
                old = self.rules[kw["rule_id"]]
                self.rules[kw["rule_id"]] = (kw.get("type", old[0]), kw.get("rule", old[1]))
            elif func.attr == "delete_rule":
                del self.rules[kw["rule_id"]]

    def render(self) -> str:
        return (
            "\n\n".join(f"{i} ({t}): {c}" for i, (t, c) in self.rules.items()) or "(no rules yet)"
        )


def build(rules: Rules, run: Run, builder: object) -> str:
    """The builder's two requests on one trajectory; applies its calls; returns its diagnosis."""
    prompt = (
        f"## Trajectory\n{run.text}\n\n## Result: {run.outcome}\n\n"
        f"## Current rules\n{rules.render()}\n\nDiagnose; end with 'Diagnosis: rules|agent'."
    )
    msgs = [Message("system", "You manage rules."), Message("user", prompt)]
    diagnosis = builder(tuple(msgs))  # type: ignore[operator]
    msgs += [Message("assistant", diagnosis), Message("user", "Now call the rule system.")]
    rules.apply(builder(tuple(msgs)))  # type: ignore[operator]
    return diagnosis.strip().splitlines()[-1]


def fake_run(outcome: str, *texts: str) -> Run:
    opening = (
        "You see drawer_1, countertop_1.\n\nYour task is to: put two soapbottle in countertop."
    )
    return Run(
        outcome, "", [Message("user", "## Task\n" + opening), *(Message("user", t) for t in texts)]
    )


def test_builder_turns_an_unsolved_error_into_a_corrected_one() -> None:
    rules, builder = Rules(), builder_model()
    failed = fake_run(
        "failure",
        NO_SECOND,
    )
    assert build(rules, failed, builder) == "Diagnosis: rules"
    assert [t for t, _ in rules.rules.values()] == [
        "Unsolved Error"
    ]  # nothing of success from a failure
    assert build(rules, failed, builder) == "Diagnosis: agent"  # already recorded
    assert rules.calls[-1] == "stop_generating" and len(rules.rules) == 1
    fixed = fake_run(
        "indirect_success",
        NO_SECOND,
        f"The two objects {TWO_APART}, so I search every receptacle for the second one.",
    )
    assert build(rules, fixed, builder) == "Diagnosis: rules"
    assert rules.rules["rule_0"][0] == "Corrected Error"  # updated in place, same id
    assert TWO_APART in rules.rules["rule_0"][1] and "update_rule" in rules.calls
    assert [t for t, _ in rules.rules.values()] == ["Corrected Error", "Success Process"]
    # the new Success Process carries what was learned too
    assert recognise(rules.render(), TWO).two_apart == ("rule_0", "rule_1")
    assert build(rules, fixed, builder) == "Diagnosis: agent"


def test_a_careless_builder_writes_rules_the_planner_cannot_use() -> None:
    rules = Rules()
    fixed = fake_run(
        "indirect_success",
        NO_SECOND,
        f"The two objects {TWO_APART}.",
    )
    build(rules, fixed, builder_model(mistake=1.0))
    assert rules.rules and recognise(rules.render(), TWO).two_apart == ()
    # the code block in a trajectory is not an error report
    quiet = fake_run(
        "direct_success", '```python\nassert others, "no second soapbottle in " + found_at\n```'
    )
    fresh = Rules()
    build(fresh, quiet, builder_model())
    assert [t for t, _ in fresh.rules.values()] == ["Success Process"]


def test_consolidator_merges_by_task_type_until_under_the_limit() -> None:
    rules = Rules()
    for i in range(14):
        task_type = TASK_TYPES[i % 3]
        key = f" the two objects {TWO_APART}" if i == 2 else ""
        rtype = "Success Process" if i in (4, 5) else "Corrected Error"
        rules.rules[f"rule_{i}"] = (rtype, f"For {task_type} tasks: point {i}.{key}")
    rules.next = 14
    shown = rules.render().replace("point 7.", "point 7.\n```python\nlook_here()\n```")
    prompt = f"Rules:\n{shown}\n\nMerge or delete rules until there are at most 8."
    answer = consolidator_model()((Message("user", prompt),))
    rules.apply(answer)
    assert len(rules.rules) <= 8
    assert {"update_rule", "delete_rule"} <= set(rules.calls)
    text = rules.render().lower()
    assert all(f"point {i}." in text for i in range(14))  # merged, not lost
    assert "update_rule(rule_id='rule_4'" in answer and "look_here()" in answer  # its example
    for r in rendered_rules(text):
        assert len({t for t in TASK_TYPES if t in r.content}) == 1  # one task type per rule
    # rules holding code survive, and the others of their type (and examples) folded into them
    assert rules.rules["rule_4"][0] == rules.rules["rule_5"][0] == "Success Process"
    assert "point 7." in rules.rules["rule_4"][1].lower()


def test_formulator_lists_every_rule_and_the_planner_reads_the_manual() -> None:
    rules = Rules()
    rules.rules = {
        "rule_0": ("Special Mechanism", "For all task types: closed receptacles must be opened."),
        "rule_3": ("Corrected Error", f"For {TWO} tasks: the two objects {TWO_APART}."),
        "rule_5": (
            "Success Process",
            "For pick_heat_then_place_in_recep tasks: "
            + TRANSFORM["pick_heat_then_place_in_recep"],
        ),
    }
    blocks = "\n\n".join(f"### {i}\nType: {t}\nRule: {c}" for i, (t, c) in rules.rules.items())
    assert rendered_rules(blocks) == rendered_rules(rules.render())  # both layouts read alike
    answer = formulator_model()((Message("user", blocks),))
    manual = re.search(r"```markdown\n(.*?)```", answer, re.S)
    assert manual is not None
    assert all(f"**{i}**" in manual.group(1) for i in rules.rules)
    assert "## General rules" in manual.group(1) and f"## Tasks of type {TWO}" in manual.group(1)
    assert recognise(manual.group(1), TWO).two_apart == ("rule_3",)
    prompt = (
        "## Manual\n"
        + manual.group(1)
        + "\n## Task\nYou see a shelf_1.\n\nYour task is to: put two cd in shelf."
    )
    assert "### Related rules\nrule_3" in planner_model()((Message("user", prompt),))


@pytest.mark.slow
def test_rules_stop_the_path_dependence_that_skills_repeat(env: AlfWorldEnv) -> None:
    """Together, apart, together, apart: Planner+Lib. copies its newest skill, AutoManual also
    keeps rules. After the apart episode the builder writes the corrected rule; the next
    together episode bakes "same receptacle" into the skill again, and only the planner with
    rules searches for the second object in the last apart game."""
    together, apart_games = two_games(env)
    planner = planner_model(repair=1.0)
    apart = [t for t in apart_games if play(env, t, planner).outcome == "direct_success"][:2]
    sequence = [together[0], apart[0], together[1], apart[1]]
    outcomes: dict[str, list[str]] = {}
    for method in ("planner+lib", "automanual"):
        rules, skill = Rules(), None
        builder = builder_model()
        for task in sequence:
            text = rules.render() if method == "automanual" else None
            run = play(env, task, planner, rules=text, skill=skill)
            outcomes.setdefault(method, []).append(run.outcome)
            if run.outcome != "failure":
                skill = (TWO, "Your task is to: " + task.goal, skill_of(run))
            if method == "automanual":
                build(rules, run, builder)
    assert outcomes["planner+lib"] == ["direct_success", "indirect_success"] * 2
    assert outcomes["automanual"] == [
        "direct_success",
        "indirect_success",
        "direct_success",
        "direct_success",
    ]


# -- rules that hurt: the study's conditions where AutoManual's assumption fails ------------


def test_wrong_rules_are_followed_and_the_newest_rule_decides() -> None:
    from lorekit.agents.automanual.testing.rules import SKIP_CHANGE, TWO_SAME

    heat = "pick_heat_then_place_in_recep"
    right = f"rule_3 (Corrected Error): For {TWO} tasks: the two objects {TWO_APART}."
    wrong = f"rule_5 (Success Process): For {TWO} tasks: the two objects {TWO_SAME}."
    assert recognise(f"{right}\n{wrong}", TWO).second == "same"  # the newer one, wrong
    assert recognise(wrong.replace("rule_5", "rule_2") + "\n" + right, TWO).second == "search"
    skip = f"rule_4 (Success Process): For {heat} tasks: it {SKIP_CHANGE[heat]}."
    know = recognise(skip, heat)
    assert know.change is False and know.used == ["rule_4"]
    # the planner writes what the wrong rule says, with no skill to copy
    opening = (
        "You are in the middle of a room. Looking quickly around you, you see cabinet_1, "
        "countertop_1, and microwave_1.\n\nYour task is to: heat some egg and put it in "
        "countertop."
    )
    for rules, heats in ((skip, False), (skip.replace(SKIP_CHANGE[heat], TRANSFORM[heat]), True)):
        messages = (Message("user", f"## Rules\n{rules}\n\n## Task\n{opening}"),)
        code = CODE.search(planner_model()(messages))
        assert code is not None and ("heat_with" in code.group(1)) is heats
    # a planner that does not obey ignores them (drawn per task, the same for every method)
    messages = (Message("user", f"## Rules\n{skip}\n\n## Task\n{opening}"),)
    code = CODE.search(planner_model(obey=0.0)(messages))
    assert code is not None and "heat_with" in code.group(1)


def test_a_wrong_builder_writes_the_opposite_and_rewrites_it_when_it_misleads() -> None:
    from lorekit.agents.automanual.testing.rules import TWO_SAME

    rules = Rules()
    fixed = fake_run("indirect_success", NO_SECOND, f"The two objects {TWO_APART}.")
    build(rules, fixed, builder_model(wrong=1.0))
    assert recognise(rules.render(), TWO).second == "same"  # the rule hurts
    assert all(TWO_APART not in c for _, c in rules.rules.values())
    # the planner follows it into the error again; a builder drawing right this time
    # outranks the wrong Success Process with a newer Corrected Error
    build(rules, fixed, builder_model(wrong=0.0))
    assert recognise(rules.render(), TWO).second == "search"
    assert any(TWO_SAME in c for _, c in rules.rules.values())  # still there, outranked


def test_a_skill_may_keep_no_shortcut(env: AlfWorldEnv) -> None:
    together, _ = two_games(env)
    for bake, shortcut in ((1.0, True), (0.0, False)):
        run = play(env, together[0], planner_model(bake=bake))
        assert run.outcome == "direct_success"
        assert ("same receptacle as the first" in skill_of(run)) is shortcut
