"""ALFWorld's release rebuilt from public parts, and LoreKit's env against
ADaPT's published run on it (issue 38, items 1 and 4).

Reads the project's shared data (AutoManual's copy of ALFWorld 2.1.1 and
ADaPT's record) from ``../shared/data`` beside the repository, or
/work/shared/data; never copies it. The two trials AutoManual's copy lacks are
rebuilt too when ``$LOREKIT_ALFWORLD_CANDIDATES`` points at a copy of the games'
files (a checkout of the repository ``release.yaml`` names).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from _cli import run_cli

from lorekit.envs import make
from lorekit.envs.alfworld import release, variants
from lorekit.envs.alfworld.games import GameSourceError
from lorekit.envs.alfworld.rebuild import Rebuilt
from lorekit.envs.alfworld.record import read_record


def _shared_data() -> Path | None:
    beside = Path(__file__).resolve().parents[3].parent / "shared" / "data"
    for folder in (beside, Path("/work/shared/data")):
        if (folder / "alfworld-2.1.1").is_dir() and (folder / "published-runs").is_dir():
            return folder
    return None


SHARED = _shared_data()
pytestmark = [
    pytest.mark.skipif(
        SHARED is None,
        reason="needs ../shared/data (AutoManual's ALFWorld copy and ADaPT's record)",
    ),
    pytest.mark.slow,  # the rebuild replays 1,444 recorded commands: minutes on a busy machine
]
COPY = (SHARED or Path()) / "alfworld-2.1.1"
RECORD = (SHARED or Path()) / "published-runs" / "adapt" / str(release.manifest()["record"]["name"])
CANDIDATES = os.environ.get("LOREKIT_ALFWORLD_CANDIDATES")
MISSING = {  # the two trials of ADaPT's 134 that AutoManual's copy lacks
    "pick_cool_then_place_in_recep-Mug-None-CoffeeMachine-10/trial_T20190907_183715_299073",
    "pick_cool_then_place_in_recep-Mug-None-CoffeeMachine-10/trial_T20190907_183807_477267",
}


@pytest.fixture
def rebuilt(alfworld_release: Rebuilt) -> Rebuilt:
    """The session's rebuild (tests/conftest.py): the replays of ADaPT's run play on it too."""
    return alfworld_release


def test_every_recorded_observation_and_outcome_replays_equal(rebuilt: Rebuilt) -> None:
    """Every command of ADaPT's record through LoreKit's env on the rebuilt
    release (each executor run after a restore of the runs before it): the first
    observation, every observation after a command and every game's outcome."""
    record = read_record(RECORD)
    games = rebuilt.replay.games
    assert len(games) >= 132 and not rebuilt.replay.failed, rebuilt.replay.failed[:2]
    assert rebuilt.replay.equal == rebuilt.replay.steps
    assert rebuilt.replay.outcomes_equal == len(games)
    from_copy = [g for g in games if g.id not in MISSING]
    assert len(from_copy) == 132 and sum(g.steps for g in from_copy) == 1444
    for game in games:  # every command of the record was compared, none skipped
        recorded = [s for s in record[game.id].steps() if not s.thought]
        assert game.steps == len(recorded) and game.won == record[game.id].reward
    won = sum(g.won for g in from_copy)
    assert won == sum(record[g.id].reward for g in from_copy)


def test_the_rebuilt_games_are_what_their_pins_say(rebuilt: Rebuilt) -> None:
    root = rebuilt.dest / "json_2.1.1" / release.UNSEEN
    installed = sorted(p.parent for p in root.glob("*/*/game.tw-pddl"))
    assert len(installed) == rebuilt.installed >= 132
    record = read_record(RECORD)
    for folder in installed:
        game_id = folder.relative_to(root).as_posix()
        game = json.loads((folder / "game.tw-pddl").read_text())
        assert release.sha256_text(game["pddl_problem"]) == release.game_pins()[game_id]
        assert game["pddl_domain"] == release.game_domain()
        assert game["grammar"] == release.grammar_with_goal(record[game_id].sentence)
        assert (folder / "initial_state.pddl").read_text() == game["pddl_problem"]
    logic = rebuilt.dest / "logic"
    assert (logic / "alfred.twl2").read_text() == release.release_grammar()
    marker = variants.marker(rebuilt.dest / "json_2.1.1")
    assert marker["variant"] == "release" and "verified against ADaPT's record" in marker["made"]
    if not CANDIDATES:
        assert set(rebuilt.left_out) == MISSING
        assert all("give --candidates" in why for why in rebuilt.left_out.values())


@pytest.mark.skipif(
    not CANDIDATES, reason="LOREKIT_ALFWORLD_CANDIDATES: no copy of the two missing trials"
)
def test_the_two_missing_trials_are_rebuilt_from_the_candidates(rebuilt: Rebuilt) -> None:
    assert rebuilt.installed == 134 and not rebuilt.left_out
    assert {g.id for g in rebuilt.replay.games if g.ok} >= MISSING
    assert {rebuilt.sources[g] for g in MISSING} == {"candidates"}


def test_the_env_says_which_games_it_plays(
    rebuilt: Rebuilt, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("LOREKIT_DATA", str(rebuilt.dest.parent / "home"))
    monkeypatch.delenv("ALFWORLD_DATA", raising=False)
    env = make("alfworld", source="official", data_dir=str(rebuilt.dest), split="test")
    assert env.syntax == "put" and len(env.tasks("test")) == rebuilt.installed
    text = env.describe_split("test")
    assert text.startswith(f"{rebuilt.installed} games of ALFWorld's 2.1.1 release (test,")
    assert "verified against ADaPT's record" in text
    assert env.reset(env.tasks("test")[0]).info["variant"] == "release"
    # AutoManual's copy is its own variant, found in the project's shared data.
    edit = make("alfworld", source="official", variant="automanual", split="valid_unseen")
    assert len(edit.tasks("valid_unseen")) == 135
    assert "games of AutoManual's edit of ALFWorld 2.1.1" in edit.describe_split("valid_unseen")
    with pytest.raises(GameSourceError, match=r"AutoManual's edit of ALFWorld 2\.1\.1, not"):
        make("alfworld", source="official", data_dir=str(COPY))
    # The run's summary and `reproduce list` say the same.
    store = str(rebuilt.dest.parent / "runs.db")
    opts = ["--env-opt", "source=official", "--env-opt", f"data_dir={rebuilt.dest}"]
    args = ["run", "alfworld", "--agent", "oracle", "-n", "2", "--store", store, *opts]
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    assert "games of ALFWorld's 2.1.1 release" in out and "100.0%" in out
    monkeypatch.setenv("ALFWORLD_DATA", str(rebuilt.dest))
    code, out, err = run_cli(["reproduce", "list"], capsys)
    assert code == 0, err
    assert f"ALFWorld data: ALFWorld's 2.1.1 release: valid_unseen {rebuilt.installed}" in out


def test_rebuilding_from_a_folder_without_the_games_installs_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dest = tmp_path / "release"
    args = ["alfworld", "rebuild-release", "--copy", str(tmp_path), "--record", str(RECORD)]
    code, _, err = run_cli([*args, "--dest", str(dest)], capsys)
    assert code == 1 and "no game could be rebuilt and verified; nothing installed" in err
    assert not dest.exists()
