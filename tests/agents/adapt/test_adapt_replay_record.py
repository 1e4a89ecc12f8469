"""Reading an ADaPT result file's episode, and replaying a small made-up one (no shared data)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from lorekit.agents.adapt.replay_record import RecordError, read_episode
from lorekit.agents.adapt.replay_textcraft import READER, start_state
from lorekit.envs.textcraft.env import TextCraftEnv
from lorekit.eval.replay import replay
from lorekit.eval.store import RunStore

ROOT = "craft chiseled nether bricks."
SLAB = "fetch 2 nether brick slab"
CHISEL = "craft 1 chiseled nether bricks using 2 nether brick slab"
PLANS = [
    f"{ROOT} at depth 1, success: False",
    f"['{SLAB}', '{CHISEL}'] at depth 2 and logic AND",
    f"{SLAB} at depth 2, success: True",
    f"{CHISEL} at depth 2, success: True",
]
SLAB_RUN = (
    " get 12 nether brick\nGot 12 nether brick\n"
    + "> craft 1 nether bricks using 4 nether brick\nCrafted 1 minecraft:nether_bricks\n" * 3
    + "> craft 6 nether brick slab using 3 nether bricks\nCrafted 6 minecraft:nether_brick_slab\n"
    "> think: Task Completed!\nOK.\n>"
)
CHISEL_RUN = f" {CHISEL}\nCrafted 1 minecraft:chiseled_nether_bricks\n>"


def entry(plans: list[str], trace: str, reward: int = 1) -> dict[str, Any]:
    return {"problem": ROOT, "commands": "", "trace": trace, "plans": plans, "reward": reward}


def test_runs_are_placed_and_only_kept_transcripts_attached() -> None:
    record = read_episode("env_53", entry(PLANS, f"{SLAB_RUN}\n\n{CHISEL_RUN}\n\n"), 4)
    root, slab, chisel = record.runs
    assert (root.kept, root.turns) == (False, None)  # the failed root's transcript was dropped
    assert slab.turns is not None and slab.turns[0] == (
        "get 12 nether brick",
        "Got 12 nether brick",
    )
    assert chisel.turns == [(CHISEL, "Crafted 1 minecraft:chiseled_nether_bricks")]


def test_a_record_that_does_not_fit_its_code_is_refused_naming_the_entry() -> None:
    with pytest.raises(RecordError, match=r"env_53.trace: 1 transcripts for 2 kept executor runs"):
        read_episode("env_53", entry(PLANS, SLAB_RUN), 4)
    swapped = [PLANS[0], PLANS[1], PLANS[3], PLANS[2]]
    with pytest.raises(RecordError, match=r"env_53.plans\[2\]: expected the run of"):
        read_episode("env_53", entry(swapped, ""), 4)
    with pytest.raises(RecordError, match=r"env_53.plans\[4\]: entries after"):
        read_episode("env_53", entry([*PLANS, PLANS[2]], ""), 4)


def test_the_start_of_a_kept_run_is_read_back_from_its_first_inventory_line() -> None:
    turns = [
        ("get 2 bamboo", "Got 2 bamboo"),
        ("craft 1 stick using 2 bamboo", "Crafted 1 minecraft:stick"),
        ("inventory", "Inventory: [oak planks] (4) [stick] (1) "),
    ]
    assert start_state(turns) == [("oak_planks", 4)]
    assert start_state([("get 1 x", "Got 1 x")]) is None


def write(tmp_path: Path, plans: list[str], trace: str, reward: int = 1) -> Path:
    env = TextCraftEnv("datapack", compat=True, max_steps=None)
    task = next(t for t in env.tasks("adapt-200") if t.id == "chiseled_nether_bricks")
    opening = env.reset(task).text
    commands = opening.split("Goal: ")[0]
    data = {f"env_{task.data['seed']}": {**entry(plans, trace, reward), "commands": commands}}
    path = tmp_path / "ADaPT_textcraft.json"
    path.write_text(json.dumps(data))
    return path


def play(path: Path, tmp_path: Path) -> dict[str, Any]:
    source = READER.open(path)
    with RunStore(tmp_path / "runs.sqlite3") as db:
        result = asyncio.run(replay(source, db, concurrency=1))
    (summary,) = result.summaries.values()
    return summary


def test_a_made_up_record_replays_its_decisions_with_the_root_gap_filled(tmp_path: Path) -> None:
    summary = play(write(tmp_path, PLANS, f"{SLAB_RUN}\n\n{CHISEL_RUN}\n\n"), tmp_path)
    assert summary["decided"] and (summary["published"], summary["replayed"]) == (1.0, 1.0)
    (gap,) = [d for d in summary["divergences"] if d["kind"] == "gap"]
    assert "task failed (replay stand-in" in gap["asked"] and gap["role"] == "executor"


def test_a_reply_the_env_does_not_give_is_an_observation_divergence(tmp_path: Path) -> None:
    trace = f"{SLAB_RUN}\n\n{CHISEL_RUN}\n\n".replace(
        "Got 12 nether brick", "Got 12 nether bricks", 1
    )
    summary = play(write(tmp_path, PLANS, trace), tmp_path)
    (seen,) = [d for d in summary["divergences"] if d["kind"] == "observation"]
    assert (seen["recorded"], seen["asked"]) == ("Got 12 nether bricks", "Got 12 nether brick")
    assert summary["decided"]  # the decisions do not depend on that reply


def test_a_run_that_lorekit_would_not_end_where_the_record_does_is_named(tmp_path: Path) -> None:
    # The record says the slab run succeeded, but its transcript never claims it: the code's
    # executor would go on, so LoreKit asks for a line the record does not have.
    trace = (
        f"{SLAB_RUN.replace('> think: Task Completed!', '> think: done here')}\n\n{CHISEL_RUN}\n\n"
    )
    summary = play(write(tmp_path, PLANS, trace), tmp_path)
    kinds = [d["kind"] for d in summary["divergences"]]
    assert "call" in kinds and not summary["decided"]
    call = next(d for d in summary["divergences"] if d["kind"] == "call")
    assert call["recorded"].startswith(f"the run of '{SLAB}' ends after")
