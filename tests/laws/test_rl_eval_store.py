"""PPO's evaluation episodes, as stored, score what the trainer printed: the run
store's Crafter score, achievements and stop reasons equal the trainer's own."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("crafter")

from lorekit.envs.crafter.runs import crafter_run_score
from lorekit.eval.report import stop_reasons
from lorekit.eval.store import RunStore
from lorekit.laws.rl_env import make_env
from lorekit.laws.rl_eval import evaluate, score_episodes


def test_the_stored_run_scores_as_the_trainer_printed(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    with RunStore(tmp_path / "runs.sqlite3") as store:
        rid = store.create_run("ppo", env="crafter", agent="ppo-health", config={})

        def writer(index: int, world: int):  # type: ignore[no-untyped-def]
            return store.episode(rid, f"eval-{index}", index=index, seed=world)

        summaries = evaluate(
            lambda batch: rng.integers(0, 17, size=len(batch)),
            lambda slot: make_env("health", 3 + slot, length=150),
            seed=3,
            episodes=4,
            slots=2,
            writer=writer,
        )
        printed = score_episodes(summaries)
        stored = crafter_run_score(store, rid)
        assert stored.episodes == 4
        assert stored.score == pytest.approx(printed["score"])
        assert stored.rates == pytest.approx(printed["success_rates"])
        assert any(stored.rates.values())  # random play unlocks something in 4 x 150 steps
        reasons = stop_reasons(store.episodes(rid))
        assert set(reasons) <= {"died", "time_limit"} and sum(reasons.values()) == 4
