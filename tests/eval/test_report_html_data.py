"""The report's figures, checked against the run store's own records of real scripted episodes."""

from __future__ import annotations

import asyncio
import math
from collections import Counter
from pathlib import Path

import pytest
from _cli import run_cli
from _report_runs import BROKEN_TASK, HOSTILE, team_run, textcraft_runs

from lorekit.agents import ReActAgent
from lorekit.agents.adapt.testing.textcraft import textcraft_executor
from lorekit.agents.spring.testing import spring_model
from lorekit.envs.crafter.runs import crafter_run_score
from lorekit.envs.textcraft import TextCraftEnv
from lorekit.eval.report_html import build_report
from lorekit.eval.report_html_data import (
    episode_data,
    error_type,
    percentile,
    rl_curves,
    run_figures,
)
from lorekit.eval.runner import plan_episodes, run_eval
from lorekit.eval.store import RunStore
from lorekit.llm import Roles, ScriptedLLM
from lorekit.llm.cache import CachedLLM


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("report") / "runs.sqlite3"
    asyncio.run(textcraft_runs(path))
    asyncio.run(team_run(path))
    return path


@pytest.fixture
def store(store_path: Path) -> RunStore:
    return RunStore.open_readonly(store_path)


def test_success_by_group_counts_the_episodes(store: RunStore) -> None:
    for run_id in ("react", "adapt"):
        figures = run_figures(store, run_id)
        episodes = store.episodes(run_id)
        by_group: dict[str, list[bool]] = {}
        for e in episodes:
            by_group.setdefault(e.task_group or "-", []).append(e.success)
        by_group["all"] = [e.success for e in episodes]
        assert set(figures.groups) == set(by_group)
        for group, outcomes in by_group.items():
            n, ok = len(outcomes), sum(outcomes)
            row = figures.groups[group]
            assert (row["episodes"], row["successes"]) == (n, ok)
            assert row["stderr"] == pytest.approx(math.sqrt(ok / n * (1 - ok / n) / n))
    # the simulated executor plans one level ahead: ADaPT's decomposition reaches deeper tasks
    react, adapt = run_figures(store, "react"), run_figures(store, "adapt")
    assert adapt.groups["depth-3"]["success_rate"] > react.groups["depth-3"]["success_rate"]


def test_steps_calls_tokens_and_cost_per_episode_and_role(store: RunStore) -> None:
    figures = run_figures(store, "adapt")
    for row in figures.per_episode:
        assert row["steps"] == len(store.steps("adapt", row["key"]))
        assert row["calls"] == len(store.llm_calls("adapt", row["key"]))
    assert sum(r["calls"] for r in figures.per_episode) > 20
    usage = store.usage_by_role("adapt")
    assert set(figures.roles) == set(usage) == {"executor", "planner"}
    for role, row in figures.roles.items():
        for key in ("calls", "prompt_tokens", "completion_tokens", "cache_hits", "errors"):
            assert row[key] == usage[role][key], (role, key)
        # the run's config prices the model "scripted" at $1 / $2 per million tokens
        expected = (row["prompt_tokens"] * 1.0 + row["completion_tokens"] * 2.0) / 1e6
        assert row["cost_usd"] == pytest.approx(expected) and row["cost_usd"] > 0
        assert 0 < row["latency_p50"] <= row["latency_p90"] <= row["latency_max"]
    calls = store.llm_calls("adapt")
    assert sorted(figures.latencies) == sorted(c["latency_s"] for c in calls)


def test_errors_by_type(store: RunStore) -> None:
    figures = run_figures(store, "react")
    broken = [e for e in store.episodes("react") if e.status == "error"]
    assert [e.task_id for e in broken] == [BROKEN_TASK]
    failed_calls = [c for c in store.llm_calls("react") if c["error"]]
    assert figures.errors == {
        "episode: RuntimeError": 1,
        "model call: RuntimeError": len(failed_calls),
    }
    assert run_figures(store, "team").errors == {}


def test_error_type_and_percentile() -> None:
    assert error_type("RuntimeError: boom: more") == "RuntimeError"
    assert error_type("episode timed out after 30 s; env 'x' discarded") == "episode timed out"
    assert error_type("openai.APITimeoutError: Request timed out.") == "openai.APITimeoutError"
    assert error_type("") == "error"
    assert percentile([], 0.5) == 0.0
    assert percentile([3.0, 1.0, 2.0], 0.5) == 2.0
    assert percentile([0.0, 10.0], 0.9) == pytest.approx(9.0)


async def test_cache_hit_rate(tmp_path: Path) -> None:
    env = TextCraftEnv()
    tasks = [t for t in env.tasks("all") if t.group == "depth-1"][:3]
    model = ScriptedLLM(fn=textcraft_executor(env.book, capability=2))
    roles = Roles(CachedLLM(model, tmp_path / "cache.sqlite3"))
    with RunStore(tmp_path / "r.sqlite3") as db:
        for run_id in ("cold", "warm"):
            await run_eval(
                db,
                env_factory=TextCraftEnv,
                agent=ReActAgent(),
                roles=roles,
                episodes=plan_episodes(tasks),
                run_id=run_id,
            )
        cold, warm = run_figures(db, "cold"), run_figures(db, "warm")
        assert cold.cache_hit_rate == 0.0
        assert (
            warm.cache_hit_rate == 1.0
        )  # the same prompts again: every call answered by the cache
        [role] = warm.roles  # ReAct asks one role
        assert warm.roles[role]["prompt_tokens"] == 0  # hits cost nothing
        assert warm.latencies == []  # and their latency is not the model's
        assert warm.roles[role]["cache_hits"] == len(db.llm_calls("warm")) > 0


def test_episode_data_keeps_calls_in_order_and_text_intact(store: RunStore) -> None:
    episode = next(e for e in store.episodes("adapt") if e.task_group == "depth-3" and e.success)
    data = episode_data(store, episode)
    calls = store.llm_calls("adapt", episode.episode_key)
    assert [c["role"] for c in data["calls"]] == [c["role"] for c in calls]
    assert "planner" in {c["role"] for c in data["calls"]}
    assert data["calls"][0]["messages"] == calls[0]["messages"]
    assert any(HOSTILE in (c["answer"] or "") for c in data["calls"])  # kept verbatim
    assert [s["action"] for s in data["steps"]] == [
        s.action for s in store.steps("adapt", episode.episode_key)
    ]
    tree = data["notes"]["tree"]
    assert tree["depth"] == 1 and tree["children"]  # decomposed


def test_crafter_score_and_graph_passes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "runs.sqlite3"
    llm = ScriptedLLM(fn=spring_model(seek="tree"))
    monkeypatch.setattr("lorekit.cli.checks.build_models", lambda *a, **k: Roles(llm))
    code, _, err = run_cli(
        ["run", "crafter", "--agent", "spring", "--store", str(path), "--run-id", "wood",
         "--agent-opt", "context=paper", "--agent-opt", "max_steps=10", "-n", "1",
         "--cache", "off", "--model", "sim", "--base-url", "http://127.0.0.1:9/v1"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    with RunStore.open_readonly(path) as db:
        figures = run_figures(db, "wood")
        score = crafter_run_score(db, "wood")
        assert figures.summary is not None and figures.summary["section"] == "crafter"
        assert figures.summary["figures"]["score"] == score.score > 0
        assert figures.summary["figures"]["rates"]["collect_wood"] == 100.0
        page = build_report(db, ["wood"])
        data = episode_data(db, db.episodes("wood")[0])
    assert 'data-plot="crafter"' in page and "collect_wood" in page
    steps = data["notes"]["spring"]["steps"]
    assert steps and all(isinstance(n["key"], str) for n in steps[0]["nodes"])


def test_rl_learning_curves(tmp_path: Path) -> None:
    out = tmp_path / "laws-rl" / "crafter"
    for seed, scale in ((0, 1.0), (1, 2.0)):
        folder = out / f"seed-{seed}"
        folder.mkdir(parents=True)
        rows = ["time/total_timesteps,rollout/ep_rew_mean,crafter/score,train/loss"]
        rows += [f"{1024 * k},{scale * k},{0.5 * k},0.1" for k in range(1, 4)]
        rows.append("4096,,,0.1")  # a row without the drawn figures
        (folder / "progress.csv").write_text("\n".join(rows) + "\n")
    with RunStore(tmp_path / "r.sqlite3") as db:
        db.create_run("ppo", env="crafter", agent="ppo:crafter", config={}, meta={"out": str(out)})
        figures = run_figures(db, "ppo")
        assert figures.rl is not None
        curves = figures.rl["columns"]
        assert curves["rollout/ep_rew_mean"]["seed-1"] == [[1024, 2.0], [2048, 4.0], [3072, 6.0]]
        assert curves["crafter/score"]["seed-0"][-1] == [3072, 1.5]
        assert "train/loss" not in curves
        page = build_report(db, ["ppo"])
        assert 'data-plot="rl-crafter/score"' in page
        assert any("no finished episode" in n for n in figures.notes)  # no evaluation yet
        elsewhere = run_figures(db, "ppo", rl_dir=tmp_path / "nothing")
        assert elsewhere.rl is None and any("progress.csv" in n for n in elsewhere.notes)
    assert rl_curves(tmp_path / "nothing") is None


def test_unknown_run(store: RunStore) -> None:
    with pytest.raises(LookupError, match="no run 'nope'"):
        run_figures(store, "nope")


def test_per_group_status_counts_match(store: RunStore) -> None:
    figures = run_figures(store, "react")
    counted = Counter(p["status"] for p in figures.per_episode)
    assert counted == Counter(e.status for e in store.episodes("react"))
