"""``lorekit reproduce replay FILE``: a published result file played through LoreKit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli import run_cli

from lorekit.envs.textcraft.env import TextCraftEnv
from lorekit.eval.store import RunStore

ROOT = "craft chiseled nether bricks."
SLAB = "fetch 2 nether brick slab"
CHISEL = "craft 1 chiseled nether bricks using 2 nether brick slab"
SLAB_RUN = (
    " get 12 nether brick\nGot 12 nether brick\n"
    + "> craft 1 nether bricks using 4 nether brick\nCrafted 1 minecraft:nether_bricks\n" * 3
    + "> craft 6 nether brick slab using 3 nether bricks\nCrafted 6 minecraft:nether_brick_slab\n"
    "> think: Task Completed!\nOK.\n>"
)


@pytest.fixture
def result_file(tmp_path: Path) -> Path:
    env = TextCraftEnv("datapack", compat=True, max_steps=None)
    task = next(t for t in env.tasks("adapt-200") if t.id == "chiseled_nether_bricks")
    entry = {
        "problem": ROOT,
        "commands": env.reset(task).text.split("Goal: ")[0],
        "plans": [
            f"{ROOT} at depth 1, success: False",
            f"['{SLAB}', '{CHISEL}'] at depth 2 and logic AND",
            f"{SLAB} at depth 2, success: True",
            f"{CHISEL} at depth 2, success: True",
        ],
        "trace": f"{SLAB_RUN}\n\n {CHISEL}\nCrafted 1 minecraft:chiseled_nether_bricks\n>\n\n",
        "reward": 1,
    }
    path = tmp_path / "ADaPT_maxd3_textcraft_test.json"
    path.write_text(json.dumps({f"env_{task.data['seed']}": entry, "overall": {"rate": 1.0}}))
    return path


def test_replay_prints_the_figures_stores_a_run_and_saves_the_table(
    result_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "runs.sqlite3"
    args = ["reproduce", "replay", str(result_file), "--store", str(store), "--run-id", "r1"]
    code, out, err = run_cli([*args, "--out", str(tmp_path / "out")], capsys)
    assert code == 0, err
    flat = " ".join(out.split())
    assert "Replay: ADaPT on TextCraft" in flat
    assert "1 of 3 executor runs have no transcript in the record" in flat
    row = next(line for line in out.splitlines() if line.startswith("│ depth-3"))
    assert [c.strip() for c in row.split("│")[1:-1]][:6] == [
        "depth-3",
        "1",
        "100.0",
        "100.0",
        "1/1",
        "1/1",
    ]
    saved = json.loads((tmp_path / "out" / "ADaPT_maxd3_textcraft_test-r1.json").read_text())
    assert saved["reader"] == "adapt-textcraft" and saved["replay"]["agent_options"] == {
        "profile": "code"
    }
    with RunStore(store) as db:
        (episode,) = db.episodes("r1")
        assert episode.info["notes"]["replay"]["decided"] is True
    code, out, _ = run_cli(["show", "r1", "0", "--store", str(store)], capsys)
    assert code == 0 and "fetch 2 nether brick slab" in out


def test_a_file_no_reader_knows_is_one_line_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"rows": []}))
    code, _, err = run_cli(["reproduce", "replay", str(other)], capsys)
    assert code == 2 and "other.json: no replay reader recognises this file" in err
    code, _, err = run_cli(["reproduce", "replay", str(other), "--format", "nope"], capsys)
    assert code == 2 and "--format: unknown replay format 'nope'; known: adapt-" in err


def test_tasks_the_file_does_not_hold_are_refused(
    result_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(
        ["reproduce", "replay", str(result_file), "--tasks", "lodestone"], capsys
    )
    assert code == 2 and "--tasks: not in ADaPT_maxd3_textcraft_test.json: lodestone" in err


def test_env_options_reach_the_readers_env_and_bad_ones_are_one_line(
    result_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["reproduce", "replay", str(result_file), "--store", str(tmp_path / "s.sqlite3")]
    code, _, err = run_cli([*args, "--env-opt", "source=/nowhere/recipes"], capsys)
    assert code == 2 and "unknown recipe source '/nowhere/recipes'" in err
    code, _, err = run_cli([*args, "--env-opt", "colour=blue"], capsys)
    assert code == 2 and "unexpected keyword argument 'colour'" in err
