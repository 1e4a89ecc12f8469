"""The code and paper profiles hold the published code's and the paper's settings, and the
experiment rows use the one that made each published figure. A change to a number here
must come with a reading of the source it cites (profiles.yaml names each)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from lorekit.agents.adapt import AdaptAgent
from lorekit.agents.adapt.profiles import settings_for
from lorekit.agents.adapt.react import ReActAgent
from lorekit.agents.registry import make_agent
from lorekit.eval.reproduce import find_experiment

# archiki/ADaPT run_textcraft.py: max_depth = 4; max_runs = 40 and `for i in range(1, max_runs)`;
# max_patience = 8 over '"Could not" in observation or observation == "OK."'; thoughts
# (`action.startswith('think')`) answered 'OK.'; 'task completed'/'task failed' in any
# action; after a success '> inventory' + the inventory; llm(max_tokens=150), plan_llm 800.
TEXTCRAFT_CODE: dict[str, Any] = {
    "d_max": 4,
    "executor_turns": 39,
    "patience": 8,
    "stall_contains": ("Could not",),
    "stall_equals": ("OK.",),
    "thought_prefix": "think",
    "thought_reply": "OK.",
    "verdict_anywhere": True,
    "completed": "task completed",
    "failed": "task failed",
    "state": "inventory",
    "reset_between": False,
    "goal_step": "crafted_goal",
    "executor_tokens": 150,
    "planner_tokens": 800,
}
# run_alfworld.py: --max-depth 3; turns: the default --max-runs 20 (range(1, max_runs)) gives
# 19, but the published file holds successful 28-turn runs, so 29 (see profiles.yaml and
# test_the_alfworld_budget_fits_the_published_runs); max_patience = 5 over
# "Nothing happens." / "OK.", thoughts `startswith('think:')` with 'task completed!' /
# 'task failed!' only there, `put` -> `in/on`, process_ob's arrival text, info_prop
# 'last-step-last-act', env.reset() + the checkpoint replayed in every plan_and_run.
ALFWORLD_CODE: dict[str, Any] = {
    "d_max": 3,
    "executor_turns": 29,
    "patience": 5,
    "stall_equals": ("Nothing happens.", "OK."),
    "thought_prefix": "think:",
    "verdict_anywhere": False,
    "completed": "task completed!",
    "failed": "task failed!",
    "rewrite_put": True,
    "arrival_rewrite": True,
    "state": "last_action",
    "reset_between": True,
    "executor_tokens": 100,
    "planner_tokens": 400,
}
# The paper, Appendix A: executor budgets 20 (ALFWorld), 15 (WebShop), 20 (TextCraft);
# ReAct 60, 45, 60 iterations.
PAPER = {"textcraft": (20, 60), "alfworld": (20, 60), "webshop": (15, 45)}


@pytest.mark.parametrize(
    ("env", "expected"), [("textcraft", TEXTCRAFT_CODE), ("alfworld", ALFWORLD_CODE)]
)
def test_the_code_profile_is_the_published_code(env: str, expected: dict[str, Any]) -> None:
    settings = settings_for(env, "code")
    assert {k: getattr(settings, k) for k in expected} == expected


@pytest.mark.parametrize("env", sorted(PAPER))
def test_the_paper_profile_has_the_papers_budgets_and_the_codes_mechanics(env: str) -> None:
    paper, code = settings_for(env, "paper"), settings_for(env, "code")
    assert (paper.executor_turns, paper.react_turns) == PAPER[env]
    assert (paper.patience, paper.d_max, paper.stall_equals) == (
        code.patience,
        code.d_max,
        code.stall_equals,
    )


def _agent(experiment: str, row_id: str) -> tuple[Any, Any]:
    exp = find_experiment(experiment)
    row = exp.row(row_id)
    return exp, make_agent(row.agent, **row.options)


@pytest.mark.parametrize("experiment", ["adapt-table2-textcraft", "adapt-table3-textcraft-depth"])
def test_textcraft_rows_play_the_code_that_made_their_figures(experiment: str) -> None:
    exp, adapt = _agent(experiment, "adapt")
    assert isinstance(adapt, AdaptAgent) and adapt.code is not None
    settings = adapt.code.settings("textcraft")
    assert settings.profile == "code"
    assert {k: getattr(settings, k) for k in TEXTCRAFT_CODE} == TEXTCRAFT_CODE
    assert dict(exp.env_options) == {
        "source": "datapack", "compat": True, "max_steps": None, "after_goal": "continue",
    }  # fmt: skip
    assert adapt.env_defaults("textcraft") == {"after_goal": "continue"}
    _, react = _agent(experiment, "react")
    assert isinstance(react, ReActAgent) and react.code is not None
    s = react.code.settings("textcraft")  # the code has no ReAct run: the paper's 60 turns
    assert (s.profile, s.d_max, s.executor_turns, s.patience) == ("paper", 1, 60, 8)


def test_the_alfworld_budget_fits_the_published_runs() -> None:
    from _published import ALFWORLD, published

    from lorekit.agents.adapt.replay_record import read_episode

    data = json.loads(published(ALFWORLD).read_text())
    longest = max(
        len(run.turns or ())
        for kind, games in data.items()
        if kind != "overall"
        for game, entry in games.items()
        for run in read_episode(game, entry, 3).runs
    )
    assert longest == 28 <= settings_for("alfworld", "code").executor_turns


@pytest.mark.parametrize("experiment", ["adapt-table1-alfworld", "adapt-table4-alfworld-models"])
def test_alfworld_rows_play_the_published_code(experiment: str) -> None:
    exp = find_experiment(experiment)
    release = {"source": "official", "variant": "release", "arrival": "location", "max_steps": None}
    assert dict(exp.env_options) == release
    for row in (r for r in exp.runnable_rows if r.agent in ("react", "adapt")):
        agent = make_agent(row.agent, **row.options)
        assert agent.code is not None, row.id  # type: ignore[attr-defined]
        s = agent.code.settings("alfworld")  # type: ignore[attr-defined]
        if row.agent == "adapt":
            assert (s.profile, s.examples) == ("code", "atomic")
            assert {k: getattr(s, k) for k in ALFWORLD_CODE} == ALFWORLD_CODE
        else:  # ReAct: the executor alone, the paper's 60 iterations
            assert (s.profile, s.d_max, s.executor_turns, s.reset_between) == ("paper", 1, 60, True)


@pytest.mark.parametrize("experiment", ["adapt-table2-webshop", "adapt-table8-webshop-products"])
def test_webshop_rows_have_the_papers_budgets(experiment: str) -> None:
    # run_webshop.py's module-based ADaPT is not LoreKit's; the rows keep the paper's budgets.
    exp = find_experiment(experiment)
    rows = {r.agent: r for r in exp.runnable_rows if r.agent in ("react", "adapt")}
    react, adapt = (make_agent(rows[a].agent, **rows[a].options) for a in ("react", "adapt"))
    assert isinstance(react, ReActAgent) and react.max_turns == 45
    assert isinstance(adapt, AdaptAgent) and adapt.d_max == 3 and adapt.executor.max_turns == 15
    with pytest.raises(ValueError, match="WebShop ADaPT plans over its own modules"):
        AdaptAgent(profile="code").env_defaults("webshop")
