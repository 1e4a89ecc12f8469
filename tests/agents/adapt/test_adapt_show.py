"""lorekit.eval.show.render_episode on recorded ADaPT and Reflexion episodes."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

from lorekit.agents.adapt import AdaptAgent, ReflexionAgent
from lorekit.agents.adapt.testing.textcraft import textcraft_executor, textcraft_planner
from lorekit.envs.textcraft import TextCraftEnv
from lorekit.eval.runner import plan_episodes, run_eval
from lorekit.eval.show import render_episode
from lorekit.eval.store import RunStore
from lorekit.llm import Roles, ScriptedLLM


def roles(env: TextCraftEnv, capability: int) -> Roles:
    return Roles(
        {
            "executor": ScriptedLLM(fn=textcraft_executor(env.book, capability=capability)),
            "planner": ScriptedLLM(fn=textcraft_planner(env.book)),
        }
    )


def text_of(store: RunStore, run_id: str, episode: str | int) -> str:
    console = Console(record=True, width=240, color_system=None)
    render_episode(store, run_id, episode, console)
    return console.export_text()


async def test_render_adapt_episode_shows_the_tree(env: TextCraftEnv, tmp_path: Path) -> None:
    tasks = [t for t in env.tasks("all") if t.id in ("wooden_pickaxe", "stick")]
    with RunStore(tmp_path / "r.sqlite3") as store:
        res = await run_eval(
            store,
            env_factory=TextCraftEnv,
            agent=AdaptAgent(d_max=3),
            roles=roles(env, 1),
            episodes=plan_episodes(tasks),
            run_id="r1",
        )
        assert res.successes == 2
        key = next(e.episode_key for e in store.episodes("r1") if e.task_id == "wooden_pickaxe")
        out = text_of(store, "r1", key)
        assert "craft wooden pickaxe" in out and "method=adapt" in out
        assert "d1 craft wooden pickaxe" in out and "d2 craft 3 oak planks" in out
        assert "said failed" in out and "plan ((Step 1 OR Step 2) AND Step 3 AND Step 4)" in out
        assert "get 1 oak log" in out  # the steps table
        assert "executor" in out and "planner" in out  # calls by role
        index = next(e.index for e in store.episodes("r1") if e.task_id == "wooden_pickaxe")
        assert text_of(store, "r1", index) == out == text_of(store, "r1", str(index))
        assert text_of(store, "r1", "wooden_pickaxe") == out
        with pytest.raises(LookupError, match="no episode 'nope'"):
            text_of(store, "r1", "nope")


async def test_render_reflexion_trials(env: TextCraftEnv, tmp_path: Path) -> None:
    tasks = [t for t in env.tasks("all") if t.id == "wooden_pickaxe"]
    with RunStore(tmp_path / "r.sqlite3") as store:
        await run_eval(
            store,
            env_factory=TextCraftEnv,
            agent=ReflexionAgent(d_max=3),
            roles=roles(env, 1),
            episodes=plan_episodes(tasks),
            run_id="r2",
        )
        out = text_of(store, "r2", 0)
        assert "trials" in out and "oak planks cannot be fetched" in out
