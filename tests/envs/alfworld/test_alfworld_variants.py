"""Official ALFWorld data: the release's logic, telling variants apart, the
options that make the env answer as ADaPT's run saw it (issue 38)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lorekit.envs import make
from lorekit.envs.alfworld import GeneratedGame, generate_games, release, variants
from lorekit.envs.alfworld.games import GameSourceError
from lorekit.envs.alfworld.record import (
    RecordedGame,
    RecordedStep,
    RecordError,
    parse_trace,
    read_record,
    replay_game,
)
from lorekit.envs.alfworld.release import ReleaseError
from lorekit.envs.alfworld.text import show_arrival


def test_the_release_logic_is_derived_from_the_wheel_and_pinned() -> None:
    grammar = release.release_grammar()
    assert release.sha256_text(grammar) == release.manifest()["logic"]["grammar_sha256"]
    assert 'template :: "put {o} in/on {r}";' in grammar and "action help" not in grammar
    assert "You arrive at {lend.name}." in grammar and "UNKNOWN GOAL" in grammar
    domain = release.game_domain()
    assert "\n                (receptacleType ?r SinkType)" in domain
    assert ";(receptacleType ?r SinkType)" in release.release_domain()
    assert "Your task is to: put a mug in desk." in release.grammar_with_goal("put a mug in desk")
    with pytest.raises(ReleaseError, match="does not apply"):
        release._edited("text", [["absent", "x"]], "alfred.twl2")
    with pytest.raises(ReleaseError, match="not the release's"):
        release._checked("other text", "0" * 64, "alfred.twl2")
    pins = release.game_pins()
    assert len(pins) == 134 and all(len(d) == 64 for d in pins.values())


def _write(folder: Path, grammar: str, traj: dict[str, object] | None = None) -> Path:
    folder.mkdir(parents=True)
    game = {"pddl_domain": "", "grammar": grammar, "pddl_problem": "", "solvable": True}
    (folder / "game.tw-pddl").write_text(json.dumps(game))
    (folder / "traj_data.json").write_text(json.dumps(traj or {"task_type": "x"}))
    return folder


def test_a_game_is_known_by_what_it_says_not_where_it_lies(tmp_path: Path) -> None:
    wheel = (Path(variants.__file__).parent / "data.yaml").read_text()  # any other text
    automanual = '"You take {o.name} from {r.name}." ' + wheel
    assert variants.game_variant(release.release_grammar(), {}) == "release"
    assert variants.game_variant(automanual, {}) == "automanual"
    generated: GeneratedGame = generate_games(1, seed=3)[0]
    assert variants.game_variant(str(generated.game["grammar"]), {}) == "release-2.1.3"
    assert variants.game_variant(str(generated.game["grammar"]), generated.traj_data) == (
        "generated"
    )
    assert variants.game_variant("anything", {}) == "unknown"
    # A folder called like the release but holding AutoManual's games is AutoManual's.
    root = tmp_path / "alfworld-release" / "json_2.1.1"
    _write(root / "valid_unseen" / "pick_and_place_simple-A-None-B-1" / "trial_1", automanual)
    assert variants.folder_variant(root) == "automanual"
    with pytest.raises(GameSourceError, match=r"AutoManual's edit.*pass variant=automanual"):
        variants.locate("release", tmp_path / "alfworld-release")
    assert variants.locate("automanual", tmp_path / "alfworld-release") == root
    with pytest.raises(GameSourceError, match="variant must be one of"):
        variants.locate("pristine")


def test_official_data_is_found_by_its_variant(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """$ALFWORLD_DATA holding AutoManual's copy is skipped when the release is
    wanted, and LoreKit's own data folder is tried next; the error says where."""
    monkeypatch.setenv("LOREKIT_DATA", str(tmp_path / "home"))
    copy = tmp_path / "copy" / "json_2.1.1" / "valid_unseen" / "t-A-None-B-1" / "trial_1"
    _write(copy, '"You take {o.name} from {r.name}."')
    monkeypatch.setenv("ALFWORLD_DATA", str(tmp_path / "copy"))
    with pytest.raises(GameSourceError) as caught:
        variants.locate("release")
    message = str(caught.value)
    assert "$ALFWORLD_DATA" in message and "AutoManual's edit" in message
    assert "lorekit alfworld fetch-data" in message and "alfworld-release: missing" in message
    assert message.endswith("To play what is there, pass variant=automanual.")
    home = variants.default_home("release") / "json_2.1.1" / "valid_unseen" / "t-A-None-B-1"
    _write(home / "trial_1", release.release_grammar())
    assert variants.locate("release") == variants.default_home("release") / "json_2.1.1"
    assert variants.locate("automanual") == tmp_path / "copy" / "json_2.1.1"
    lines = variants.installed()
    assert lines[0].startswith("ALFWorld's 2.1.1 release: valid_unseen 1 games at")


def test_a_folder_must_hold_one_kind_of_game(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ALFWORLD_DATA", raising=False)
    root = tmp_path / "json_2.1.1" / "valid_unseen"
    games = generate_games(2, seed=5)
    for game in games:
        game.write(root)
    # Make the first game (in path order) say the release's grammar, as a mixed folder would.
    first = root / min(game.path for game in games)
    data = json.loads((first / "game.tw-pddl").read_text())
    data["grammar"] = release.grammar_with_goal("put a mug in desk")
    (first / "game.tw-pddl").write_text(json.dumps(data))
    traj = json.loads((first / "traj_data.json").read_text())
    del traj["lorekit"]
    (first / "traj_data.json").write_text(json.dumps(traj))
    env = make("alfworld", source="official", data_dir=str(tmp_path), split="valid_unseen")
    assert env.syntax == "put"  # the release's own placing command
    with pytest.raises(GameSourceError, match=r"one of LoreKit's generated games, among games"):
        env.tasks("valid_unseen")
    with pytest.raises(ValueError, match="variant='release' applies to source='official' only"):
        make("alfworld", variant="release")


def test_arrival_is_kept_dropped_or_written_as_adapt_shows_it() -> None:
    text = "You arrive at loc 12. On the desk 1, you see a mug 1."
    assert show_arrival(text, "keep") == text
    assert show_arrival(text, "strip") == "On the desk 1, you see a mug 1."
    location = "You arrive at the location. On the desk 1, you see a mug 1."
    assert show_arrival(text, "location") == location
    assert show_arrival("You open the drawer 1.", "location") == "You open the drawer 1."
    # AutoManual's wrapper drops only the sentence that names no place
    assert show_arrival(text, "loc") == "On the desk 1, you see a mug 1."
    named = "You arrive at fridge 1. The fridge 1 is closed."
    assert show_arrival(named, "loc") == named
    env = make("alfworld", split="dev", arrival="location")
    env.reset(env.tasks("dev")[0])
    go = next(c for c in env.candidate_actions() if c.startswith("go to"))
    assert env.step(go).observation.startswith("You arrive at the location. ")
    assert make("alfworld", strip_arrival=True).arrival == "strip"
    with pytest.raises(ValueError, match="contradicts"):
        make("alfworld", strip_arrival=True, arrival="location")


def _walk(env: object, count: int) -> list[str]:
    actions = []
    for _ in range(count):
        action = env.expert_action()  # type: ignore[attr-defined]
        assert action is not None
        actions.append(action)
        env.step(action)  # type: ignore[attr-defined]
    return actions


def test_restore_replays_to_the_same_state_and_counts_the_steps() -> None:
    env = make("alfworld", split="dev", max_steps=6)
    task = env.tasks("dev")[4]
    env.reset(task)
    actions = _walk(env, 3)
    state = env.world()
    _walk(env, 1)
    step = env.restore(actions)
    assert env.world() == state and step.info["steps"] == 3 and not step.done
    assert env.restore([]).observation == env.reset(task).text
    env.restore(["look", "inventory", "look", "inventory", "look"])
    assert env.step("look").done  # the replayed commands count towards max_steps
    with pytest.raises(RuntimeError, match="reset"):
        make("alfworld").restore(["look"])


def test_a_transcript_is_read_run_by_run() -> None:
    trace = " think: find it\nOK.\n> go to desk 1\nOn it.\n>\n\n\n open drawer 1\nOpen.\n>\n"
    runs = parse_trace(trace)
    assert [[s.action for s in run] for run in runs] == [
        ["think: find it", "go to desk 1"],
        ["open drawer 1"],
    ]
    assert runs[0][0].thought and runs[1][0].observation == "Open."
    with pytest.raises(RecordError, match="line 1 is not a command"):
        parse_trace("> go to desk 1\nOn it.\n>")
    with pytest.raises(RecordError, match="has no observation"):
        parse_trace(" go to desk 1")


def test_only_the_published_record_is_taken_as_the_reference(tmp_path: Path) -> None:
    fake = tmp_path / "record.json"
    fake.write_text(json.dumps({"pick_and_place": {}}))
    with pytest.raises(RecordError, match="not ADaPT's published ALFWorld record"):
        read_record(fake)
    assert read_record(fake, pinned=False) == {}


def test_a_replay_names_every_observation_that_differs() -> None:
    """A record made by playing a game, then one observation changed: the replay
    through the env finds exactly that one, and the outcome."""
    env = make("alfworld", split="dev", arrival="location", max_steps=None)
    task = env.tasks("dev")[2]
    first = env.reset(task).text
    steps = []
    while not env.done:
        action = env.expert_action()
        assert action is not None
        steps.append(RecordedStep(action, env.step(action).observation))
    steps.insert(1, RecordedStep("think: the controller answers OK.", "OK."))
    problem = "\n".join(first.split("\n\n")[1:])
    game = RecordedGame(task.id, task.group, problem, (tuple(steps[:3]), tuple(steps[3:])), True)
    result = replay_game(env, game)
    assert result.ok and result.steps == len(steps) - 1 and result.thoughts == 1
    wrong = RecordedStep(steps[-1].action, "You put the mug 9 in/on the moon.")
    tampered = RecordedGame(task.id, task.group, problem, (tuple(steps[:-1]), (wrong,)), False)
    result = replay_game(env, tampered)
    assert not result.ok and result.equal == result.steps - 1 and not result.outcome_equal
    assert result.differences == [
        f"{wrong.action!r}: record {wrong.observation!r}, env {steps[-1].observation!r}"
    ]
