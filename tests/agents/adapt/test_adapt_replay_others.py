"""ADaPT's published ALFWorld and WebShop runs: what their readers replay, and what they say
they cannot (the shared data beside the repository; made-up records where it has none)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from _published import ALFWORLD, WEBSHOP, published

from lorekit.agents.adapt.replay_alfworld import READER as ALFWORLD_READER
from lorekit.agents.adapt.replay_webshop import READER as WEBSHOP_READER
from lorekit.envs.webshop.env import WebShopEnv
from lorekit.eval.replay import replay
from lorekit.eval.store import RunStore

ROOT = Path(__file__).resolve().parents[3]
ALFWORLD_DATA = [
    ROOT.parent / "shared" / "data" / "alfworld-2.1.1",
    Path("/work/shared/data/alfworld-2.1.1"),
]


def play(source: Any, tmp_path: Path, tasks: list[Any] | None = None) -> dict[str, dict[str, Any]]:
    with RunStore(tmp_path / "runs.sqlite3") as db:
        return asyncio.run(replay(source, db, tasks=tasks, concurrency=2)).summaries


def test_the_alfworld_record_is_read_whole_with_its_gaps_counted() -> None:
    source = ALFWORLD_READER.open(published(ALFWORLD))
    runs = [run for r in source.records.values() for run in r.runs]
    assert (len(source.records), len(runs), sum(run.turns is None for run in runs)) == (
        134,
        298,
        120,
    )
    assert sum(r.reward for r in source.records.values()) == 107
    assert any("120 of 298 executor runs have no transcript" in line for line in source.limits)


@pytest.mark.slow
def test_on_automanuals_copy_the_alfworld_replay_names_the_missing_games_and_plays_the_rest(
    tmp_path: Path,
) -> None:
    data = next((d for d in ALFWORLD_DATA if (d / "json_2.1.1").is_dir()), None)
    if data is None:
        pytest.skip("ALFWorld 2.1.1 games not found in ../shared/data/alfworld-2.1.1")
    options = {"data_dir": str(data), "variant": "automanual"}
    source = ALFWORLD_READER.open(published(ALFWORLD), env_options=options)
    tasks = source.tasks()
    assert len(tasks) == 132 and len(source.missing) == 2
    assert all("CoffeeMachine-10" in m for m in source.missing)
    # A game whose task sentence AutoManual's copy kept: the recorded decisions are taken and
    # the outcome is the record's, though every reply reads in the copy's grammar.
    game = "pick_and_place_simple-Mug-None-Desk-308/trial_T20190908_125200_737896"
    summary = play(source, tmp_path, [t for t in tasks if t.id == game])[game]
    assert summary["decided"] and summary["published"] == summary["replayed"] == 1.0
    seen = [d for d in summary["divergences"] if d["kind"] == "observation"]
    assert seen and all(d["asked"] != d["recorded"] for d in seen)
    # One whose sentence it drew anew: the replay stops at the first call, naming both.
    other = "pick_and_place_simple-Mug-None-Desk-308/trial_T20190909_203041_433487"
    summary = play(source, tmp_path / "b", [t for t in tasks if t.id == other])[other]
    call = next(d for d in summary["divergences"] if d["kind"] == "call")
    assert "'put some mug on desk.'" in call["recorded"] and "'put a mug in desk.'" in call["asked"]


def test_the_webshop_record_cannot_play_on_the_generated_catalogue_and_says_why(
    tmp_path: Path,
) -> None:
    source = WEBSHOP_READER.open(published(WEBSHOP))
    summaries = play(source, tmp_path)
    assert len(summaries) == 100
    assert sum(s["published"] for s in summaries.values()) == 44
    assert all(s["replayed"] is None and not s["decided"] for s in summaries.values())
    kinds = {d["kind"] for s in summaries.values() for d in s["divergences"]}
    assert kinds == {"unplayable"}
    text = " ".join(source.limits)
    assert "0 of 100 recorded instructions are this shop's" in text
    assert "the product clicks name 89 products, 0 of them in this shop" in text
    assert "the file holds no model output" in text


def test_a_recorded_purchase_of_this_shop_replays_to_its_recorded_success(tmp_path: Path) -> None:
    env = WebShopEnv(max_steps=None)
    goal = env.tasks("test")[0]
    env.reset(goal)
    actions = []
    while (action := env.expert_action()) is not None:
        actions.append(action)
        env.step(action)
    record = {
        "fixed_0": {"problem": f"I am looking to buy a product. {goal.goal} ", "score": 1.0,
                    "success": True, "action_history": ["think[I look.]", *actions]},
        "fixed_1": {"problem": "something else", "score": 0.0, "success": False,
                    "action_history": ["search[x]"]},
    }  # fmt: skip
    path = tmp_path / "ADaPT_webshop.json"
    path.write_text(json.dumps(record))
    summaries = play(WEBSHOP_READER.open(path), tmp_path)
    first = summaries[goal.id]
    assert first["decided"] and (first["published"], first["replayed"]) == (1.0, 1.0)
    assert (first["played"], first["thoughts"]) == (len(actions), 1)
    assert [d["kind"] for d in summaries["test-1"]["divergences"]] == ["unplayable"]
