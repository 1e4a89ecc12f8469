"""Every experiment row plays with the settings that made its published figure: the
paper's, or where the authors' code exists, the code's. Each expectation cites its
source; a change to a number here must come with a reading of that source.

The agents are built from the rows' options and their effective settings read back
(turn budgets, the executor's examples, the env cap the agent asks for), so a default
that moves under a row shows here too."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from lorekit.agents import make_agent
from lorekit.eval.prices import price_table
from lorekit.eval.reproduce import Experiment, Row, find_experiment, load_all
from lorekit.eval.reproduce_plan import TaskSample, select_tasks

EXPERIMENTS = load_all()


def _row(experiment: str, row: str) -> tuple[Experiment, Row]:
    exp = find_experiment(experiment)
    return exp, exp.row(row)


def _agent(row: Row) -> Any:
    return make_agent(row.agent, **dict(row.options))


# --------------------------------------------------------------------------- ADaPT
WEBSHOP = ["adapt-table2-webshop", "adapt-table7-webshop-score", "adapt-table8-webshop-products"]


@pytest.mark.parametrize("experiment", WEBSHOP)
def test_adapt_webshop_gives_each_executor_run_15_turns_and_caps_no_episode(
    experiment: str,
) -> None:
    """App. A: executor 15 iterations, ReAct 45, d_max 3; nothing bounds the episode,
    so the env's own 15-step cap (docs/webshop.md) must be lifted for every row."""
    exp = find_experiment(experiment)
    assert exp.env_options["max_steps"] is None
    for row in exp.runnable_rows:
        agent = _agent(row)
        assert row.env_options.get("max_steps", None) is None, row.id
        if row.agent == "react":
            assert agent.max_turns == 45, row.id
            continue
        assert agent.executor.max_turns == 15, row.id
        assert agent.max_calls is None, row.id  # the paper sets no call budget
        if row.agent != "plan-execute":
            assert agent.d_max == 3, row.id


@pytest.mark.parametrize("experiment", ["adapt-table2-webshop", "adapt-table7-webshop-score"])
def test_adapt_webshop_test_rows_show_3_products_as_the_code(experiment: str) -> None:
    """run_webshop.py: ``page_len = 3`` (App. D: Yao et al.'s top-3 results)."""
    assert find_experiment(experiment).env_options["page_products"] == 3


def test_table8_plays_40_dev_goals_with_3_or_10_products_per_row() -> None:
    """Sec. 4.1: "a different subset of 40 queries as the dev set"; Table 8's #Products."""
    exp = find_experiment("adapt-table8-webshop-products")
    assert (exp.split, exp.episodes) == ("eval", 40)
    products = {r.id: r.env_options["page_products"] for r in exp.runnable_rows}
    assert products == {"react-3": 3, "adapt-3": 3, "react-10": 10, "adapt-10": 10}


@pytest.mark.parametrize(
    ("experiment", "examples"),
    [
        ("adapt-table1-alfworld", "atomic"),  # Table 1: the standardized executor
        ("adapt-table4-alfworld-models", "atomic"),
        ("adapt-table6-alfworld-executors", "task_type"),  # App. C: Yao et al.'s executors
    ],
)
def test_alfworld_react_and_adapt_show_their_tables_executor_examples(
    experiment: str, examples: str
) -> None:
    exp = find_experiment(experiment)
    rows = [r for r in exp.runnable_rows if r.agent in ("react", "adapt")]
    assert {r.agent for r in rows} == {"react", "adapt"}
    for row in rows:
        settings = _agent(row).code.settings("alfworld")
        assert settings.examples == examples, row.id
        if row.agent == "react":  # App. A: 60 iterations
            assert (settings.profile, settings.executor_turns) == ("paper", 60), row.id


def test_table6_runs_only_the_rows_with_a_task_specific_executor() -> None:
    exp = find_experiment("adapt-table6-alfworld-executors")
    assert {r.id for r in exp.runnable_rows} == {"react", "adapt"}
    assert exp.row("adapt").published["All"].value == 79.8  # the published result file


@pytest.mark.parametrize(
    ("experiment", "patience", "turns", "d_max"),
    [
        ("adapt-table1-alfworld", 5, 20, 3),  # run_alfworld.py: max_patience = 5
        ("adapt-table2-textcraft", 8, 20, 4),  # run_textcraft.py: max_patience = 8
        ("adapt-table2-webshop", 3, 15, 3),  # run_webshop.py: max_pat = 3
    ],
)
def test_the_baselines_share_the_papers_executor_settings(
    experiment: str, patience: int, turns: int, d_max: int
) -> None:
    """Sec. 4.2: every method shares one executor; App. A gives its budget; the code's
    executor its patience. Plan-and-Execute judges a step by the executor's verdict."""
    exp = find_experiment(experiment)
    for row in (
        r for r in exp.runnable_rows if r.agent in ("plan-execute", "try-again", "reflexion")
    ):
        agent = _agent(row)
        assert (agent.executor.max_turns, agent.executor.patience) == (turns, patience), row.id
        assert agent.max_calls is None, row.id
        if row.agent == "plan-execute":
            assert agent.trust == "self", row.id
        else:
            assert agent.d_max == d_max, row.id


def test_textcraft_react_says_why_60_and_not_80() -> None:
    """Sec. 4.2's rule (20 x d_max = 80) against App. A's list (60): the file says so."""
    exp = find_experiment("adapt-table2-textcraft")
    text = exp.path.read_text(encoding="utf-8")
    assert "Sec. 4.2" in text and "80" in text and "Appendix A" in text
    settings = _agent(exp.row("react")).code.settings("textcraft")
    assert settings.executor_turns == 60


@pytest.mark.parametrize(
    ("env", "model"),
    [("alfworld", "text-davinci-003"), ("textcraft", "gpt-3.5-turbo-instruct"),
     ("webshop", "gpt-3.5-turbo")],
)  # fmt: skip
def test_adapt_rows_name_the_model_of_appendix_a(env: str, model: str) -> None:
    for exp in (e for e in EXPERIMENTS if e.paper.startswith("ADaPT") and e.env == env):
        for row in exp.runnable_rows:
            named = set(row.paper_models.values()) - {"LLaMA-2-70B-chat"}  # Table 4's
            assert named <= {model} and (named or "llama" in row.id), (exp.id, row.id)


def test_text_davinci_003_is_priced_as_the_completion_model_it_was() -> None:
    price = price_table().find("text-davinci-003")
    assert price is not None and (price.prompt, price.completion) == (20.0, 20.0)


def test_every_runnable_rows_paper_model_has_a_price() -> None:
    table = price_table()
    unpriced = {"PaLM-540B"}  # Yao et al.'s figure; no API to price
    for exp in EXPERIMENTS:
        for row in exp.runnable_rows:
            for model in row.paper_models.values():
                parts = [m.strip() for m in model.split("+")]
                assert model in unpriced or all(table.find(p) for p in parts), (exp.id, model)


def test_table4_plays_10_dev_games_per_type_drawn_as_run_alfworld_py() -> None:
    """run_alfworld.py: game files sorted, grouped in its `prefixes` order,
    ``random.seed(0)``, then ``random.sample(lst, k=num_task_samples)`` per type."""
    exp = find_experiment("adapt-table4-alfworld-models")
    assert exp.split == "dev" and exp.select is not None
    assert (exp.select.per_group, exp.select.seed) == (10, 0)
    assert exp.select.order == (
        "pick_and_place_simple", "pick_clean_then_place_in_recep",
        "pick_heat_then_place_in_recep", "pick_cool_then_place_in_recep",
        "look_at_obj_in_light", "pick_two_obj_and_place",
    )  # fmt: skip


class _T:
    def __init__(self, id: str, group: str) -> None:
        self.id, self.group = id, group


def test_the_sample_is_the_one_the_codes_procedure_draws() -> None:
    """The same draw as the original's loop, on games listed in any order."""
    groups = {"put": 14, "clean": 12, "heat": 11}
    games = [_T(f"{g}-{i:02d}/trial", g) for g, n in groups.items() for i in range(n)]
    shuffled = list(games)
    random.Random(5).shuffle(shuffled)
    picked = select_tasks(shuffled, TaskSample(10, 0, ("put", "clean", "heat")))
    random.seed(0)  # run_alfworld.py, word for word in effect
    expected = []
    for name in ("put", "clean", "heat"):
        files = sorted(t.id for t in games if t.group == name)
        expected.extend(random.sample(files, k=10))
    assert [t.id for t in picked] == expected


def test_a_sample_larger_than_a_group_is_refused_naming_it() -> None:
    with pytest.raises(ValueError, match="task group 'heat' has 2 tasks, fewer than the 3"):
        select_tasks([_T("a", "heat"), _T("b", "heat")], TaskSample(3))


# ------------------------------------------------------------------------ AgentKit
def test_agentkit_webshop_is_told_and_given_25_steps_react_15() -> None:
    """App. D.2: the agent's instructions ask for a purchase within 25 steps; Yao et
    al.'s ReAct played 15 actions on 3 products a page."""
    exp = find_experiment("agentkit-table2-webshop")
    for row in (r for r in exp.runnable_rows if r.agent == "agentkit-webshop"):
        assert _agent(row).env_defaults("webshop") == {"max_steps": 25}, row.id
    assert exp.row("react").env_options == {"max_steps": 15, "page_products": 3}


def test_agentkit_table1_llm_rows_play_whole_games() -> None:
    """AgentKit plays until death; SPRING's notebook and AgentKit's baseline.py until
    the game is done (crafter's 10,000 steps): no row stops at SPRING's 200 default."""
    exp = find_experiment("agentkit-table1-crafter")
    for row in (r for r in exp.runnable_rows if r.agent != "random"):
        assert _agent(row).max_steps >= 10_000, row.id
    cot = _agent(exp.row("cot"))
    assert [n.key for n in cot.spec.nodes] == ["think", "action"]
    assert exp.row("cot").env_options["area"] == 256  # baseline.py: crafter.Env(area=(256, 256))


def test_agentkit_table1_has_its_spring_cot_and_cost_columns() -> None:
    exp = find_experiment("agentkit-table1-crafter")
    assert {"spring", "spring-gpt4-turbo", "cot", "random"} <= {r.id for r in exp.runnable_rows}
    cost = next(c for c in exp.columns if c.name == "cost")
    assert cost.metric == "usd"
    assert {r: exp.row(r).published["cost"].value for r in ("agentkit", "spring", "cot")} == {
        "agentkit": 138.0,
        "spring": 243.0,
        "cot": 20.0,
    }


# ---------------------------------------------------------------------------- Laws
def test_laws_rows_name_deepseek_v2_and_the_experience_row_runs(tmp_path: Path) -> None:
    """App. D: DeepSeek-V2 for every LLM part. The experience row is runnable; without
    its laws file a plain run leaves it out, with it the row plays."""
    exp = find_experiment("laws-table1-spring-contexts")
    assert all(r.paper_models == {"default": "DeepSeek-V2"} for r in exp.rows)
    row = exp.row("experience")
    assert row.runnable and row.needs_file is not None and row.needs_file.path == "laws.json"
    assert "experience" not in {r.id for r in exp.default_rows(tmp_path)}
    (tmp_path / "laws.json").write_text("{}", encoding="utf-8")
    assert "experience" in {r.id for r in exp.default_rows(tmp_path)}


# ------------------------------------------------------------------------ S-Agents
@pytest.mark.parametrize(
    "experiment",
    ["sagents-fig7-organizations", "sagents-fig7b-team-size", "sagents-fig7c-team-vs-solo"],
)
def test_sagents_rows_plan_the_root_on_gpt4_and_run(experiment: str) -> None:
    """Sec. IV-A: gpt-4 plans for the root agent (and evaluates tasks), gpt-3.5-turbo-16k
    the rest; GoA's planning was upgraded to gpt-4 (Fig. 7's caption)."""
    exp = find_experiment(experiment)
    assert exp.runnable and exp.runnable_rows == exp.rows
    for row in exp.rows:
        team = _agent(row)
        if team.spec.org in ("tree", "chain"):
            assert row.paper_models.get("leader") == "gpt-4", row.id
            assert row.paper_models.get("worker") == "gpt-3.5-turbo-16k", row.id
        elif team.spec.org == "graph":
            assert row.paper_models == {"leader": "gpt-4", "worker": "gpt-4"}
        assert row.tasks and team.spec.cutoff_s == 2400  # the paper's NaN: 40 minutes


# ---------------------------------------------------------------------- AutoManual
AUTOMANUAL = [e for e in EXPERIMENTS if e.paper.startswith("AutoManual") and e.runnable]
DISTINCT_7 = {
    "search-engine", "tic-tac-toe", "terminal", "login-user-popup", "guess-number",
    "email-inbox", "email-inbox-forward-nl",
}  # fmt: skip


@pytest.mark.parametrize("exp", AUTOMANUAL, ids=lambda e: e.id)
def test_automanual_figures_are_the_mean_of_3_runs_built_with_gpt4_turbo(exp: Experiment) -> None:
    """Sec. 4: "we performed each experiment three times and reported the average";
    building and formulating with GPT-4-turbo (gpt-4-1106-preview)."""
    assert exp.repeats == 3
    for build in exp.builds:
        assert set(build.paper_models.values()) == {"gpt-4-1106-preview"}, build.id
    tested = {r.paper_models["planner"] for r in exp.runnable_rows}
    assert tested <= {"gpt-3.5-turbo-1106", "gpt-4-1106-preview"}


def test_miniwob_builds_are_the_papers_task_sets_and_examples() -> None:
    """Sec. 4: one human example on the 9 types with feedback, 4 on all 53; App. D: the
    building stage on the 7 distinct types with feedback (6 tasks each), and for the 53
    a second pass over the 44 without feedback that grows only the libraries."""
    for name in ("automanual-table2-miniwob", "automanual-table5-miniwob-feedback"):
        exp = find_experiment(name)
        for build in exp.builds:
            if build.variant == "published":  # the authors' build, imported, never played
                assert "tasks" not in build.env_options and not build.from_build, build.id
                continue
            if build.library_only:
                assert build.env_options["tasks"] == "no-feedback-44" and build.from_build
                continue
            assert set(build.env_options["tasks"].split(",")) == DISTINCT_7, build.id
            assert build.per_type == 6
        for row in exp.runnable_rows:
            build = next(b for b in exp.builds if b.id == row.build)
            if build.variant == "published":
                continue
            on_53 = row.env_options.get("tasks", exp.env_options.get("tasks")) == "automanual-53"
            assert row.options["examples"] == build.examples == (4 if on_53 else 1), row.id
            assert on_53 == build.library_only, row.id
