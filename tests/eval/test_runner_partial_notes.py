"""An episode ended by an exception keeps what the agent had built (issue 11, ADaPT item 5)."""

from __future__ import annotations

from pathlib import Path

from lorekit.agents.adapt import AdaptAgent, TryAgainAgent
from lorekit.envs import TextEnv, make
from lorekit.eval.runner import plan_episodes, run_eval
from lorekit.eval.store import RunStore
from lorekit.llm import LLMConnectionError, Message, Roles, ScriptedLLM

PLAN = (
    "Step 1: craft 3 oak planks\nStep 2: craft 2 stick\n"
    "Step 3: craft 1 wooden pickaxe using 3 oak planks, 2 stick\n"
    "Execution order: Step 1 AND Step 2 AND Step 3"
)


def textcraft() -> TextEnv:
    return make("textcraft")


def executor_that_dies(after: int) -> ScriptedLLM:
    """Fails every sub-task honestly, then the server goes away on call ``after``."""
    calls = {"n": 0}

    def answer(messages: tuple[Message, ...]) -> str:
        calls["n"] += 1
        if calls["n"] >= after:
            raise LLMConnectionError("the model server went away", model="m", endpoint="x")
        return "Action: get 1 oak log" if len(messages) == 2 else "Action: failed"

    return ScriptedLLM(fn=answer)


async def _play(tmp_path: Path, agent: object, roles: Roles) -> dict[str, object]:
    env = textcraft()
    task = next(t for t in env.tasks("test") if t.data.get("item") == "wooden_pickaxe")
    with RunStore(tmp_path / "runs.sqlite3") as db:
        result = await run_eval(
            db,
            env_factory=textcraft,
            agent=agent,  # type: ignore[arg-type]
            roles=roles,
            episodes=plan_episodes([task]),
            env_name="textcraft",
        )
        (episode,) = db.episodes(result.run_id)
    assert episode.status == "error" and "went away" in (episode.error or "")
    assert episode.steps > 0  # the steps were recorded as they happened
    return dict(episode.info)


async def test_adapt_tree_survives_a_model_error(tmp_path: Path) -> None:
    roles = Roles({"default": executor_that_dies(after=5), "planner": ScriptedLLM(default=PLAN)})
    info = await _play(tmp_path, AdaptAgent(d_max=3), roles)
    notes = info["notes"]
    assert isinstance(notes, dict)
    tree = notes["tree"]
    assert tree["task"] == "craft wooden pickaxe" and tree["children"]  # it had decomposed
    assert notes["subtasks"] and info["stop_reason"] == "error"
    assert "Crafting commands" in str(info["initial_observation"])


async def test_try_again_trials_survive_a_model_error(tmp_path: Path) -> None:
    info = await _play(tmp_path, TryAgainAgent(d_max=4), Roles(executor_that_dies(after=5)))
    notes = info["notes"]
    assert isinstance(notes, dict)
    assert [t["trial"] for t in notes["trials"]] == [1, 2]  # two whole trials before the error
