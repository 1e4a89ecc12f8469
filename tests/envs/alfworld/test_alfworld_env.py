"""make("alfworld"): the TextEnv contract over the real engine, options, sources."""

from __future__ import annotations

import json
import pickle
import random
import shutil
from pathlib import Path

import pytest
from _cli import run_cli

from lorekit.envs import check_env, make
from lorekit.envs.alfworld import AlfWorldEnv, GeneratedGame, generate_games
from lorekit.envs.alfworld.games import GameSourceError
from lorekit.envs.alfworld.world import TASK_TYPES


def _play_expert(env: AlfWorldEnv, limit: int = 60) -> bool:
    for _ in range(limit):
        action = env.expert_action()
        assert action is not None
        step = env.step(action)
        assert step.info["valid"], (action, step.observation)
        if step.done:
            return bool(step.info["success"]) and step.reward == 1.0
    return False


def test_contract_holds_under_the_env_checker() -> None:
    check_env(make("alfworld", split="dev"), episodes=2, max_actions=15)


def test_catalogue_groups_by_task_type_and_says_generated() -> None:
    env = make("alfworld")
    assert env.splits() == ("dev", "test")
    tasks = env.tasks("test")
    assert len(tasks) == 134 and {t.group for t in tasks} == set(TASK_TYPES)
    assert tasks == env.tasks("test")
    assert "generated games" in env.describe_split("test")
    assert "not ALFWorld's official" in env.describe_split("test")
    with pytest.raises(ValueError, match="unknown split"):
        env.tasks("valid_unseen")


def test_expert_recovers_from_states_off_the_walkthrough() -> None:
    env = make("alfworld", split="dev")
    by_type = {t.group: t for t in reversed(env.tasks("dev"))}
    rng = random.Random(5)
    for task in by_type.values():
        env.reset(task)
        # Wander: random admissible commands (never the expert's), plus nonsense.
        for _ in range(8):
            choices = [c for c in env.candidate_actions() if c != env.expert_action()]
            step = env.step(rng.choice(choices))
            if step.done:
                break
        env.step("fly to the moon")
        if not env.done:
            assert _play_expert(env), task.id


def test_invalid_commands_get_the_engines_answer_and_change_nothing() -> None:
    env = make("alfworld", split="dev")
    step = env.step("look")
    assert not step.info["valid"] and "reset" in step.observation
    task = env.tasks("dev")[0]
    env.reset(task)
    before = env.world()
    for bad in ["", "take the moon", "go to fridge 99", "\x00", "✨ ünï", "go to " * 100]:
        step = env.step(bad)
        assert step.info["valid"] is False and step.reward == 0.0 and not step.done
        assert step.observation.startswith("Nothing happens.")
    assert env.world() == before
    assert env.step("go to " * 100).observation == "Nothing happens."  # TextWorld's words only
    assert env.step("  look \n").info["valid"]  # TextWorld strips the spaces around a command


def test_commands_are_exact_as_textworld_has_them_unless_normalized() -> None:
    """TextWorld answers "Nothing happens." to a command that is not, spaces
    around it aside, an admissible one; ``commands="normalized"`` forgives."""
    exact = make("alfworld", split="dev")
    lenient = make("alfworld", split="dev", commands="normalized")
    task = exact.tasks("dev")[0]
    exact.reset(task)
    lenient.reset(task)
    target = next(c for c in exact.candidate_actions() if c.startswith("go to"))
    for variant in (f"{target}.", target.capitalize(), f"> {target}", target.replace(" ", "  ")):
        step = exact.step(variant)
        assert (step.observation, step.info["valid"]) == ("Nothing happens.", False), variant
        assert lenient.step(variant).info["valid"], variant
        lenient.reset(task)
    assert exact.step(f" {target} ").info["valid"]
    assert "characters long" in lenient.step("go to " * 100).observation
    with pytest.raises(ValueError, match="commands must be one of exact, normalized"):
        make("alfworld", commands="loose")


def test_step_cap_truncates_and_the_end_is_final() -> None:
    env = make("alfworld", split="dev", max_steps=2)
    env.reset(env.tasks("dev")[0])
    env.step("look")
    step = env.step("look")
    assert step.done and step.info["truncated"] and not step.info["success"]
    assert "Step limit of 2 reached" in step.observation  # the shared rules' wording
    after = env.step("look")
    assert after.done and not after.info["valid"]
    assert env.expert_action() is None
    with pytest.raises(ValueError, match="max_steps"):
        make("alfworld", max_steps=0)
    with pytest.raises(ValueError, match="syntax"):
        make("alfworld", syntax="place")


def test_put_syntax_and_the_papers_text_conventions() -> None:
    env = make("alfworld", split="dev", syntax="put", strip_arrival=True, banner=False)
    assert "put <object> in/on <receptacle>" in env.action_forms()
    task = next(t for t in env.tasks("dev") if t.group == "pick_and_place_simple")
    first = env.reset(task).text
    assert first.startswith("You are in the middle of a room.")
    seen = []
    while not env.done:
        action = env.expert_action()
        assert action is not None
        seen.append((action, env.step(action).observation))
    assert not any(obs.startswith("You arrive at") for _, obs in seen)
    put = [obs for action, obs in seen if action.startswith("put ")]
    assert put and put[-1].startswith("You put the ") and " in/on the " in put[-1]
    assert env.step("look").info["valid"] is False  # the episode is over


def test_object_id_form_for_code_writing_agents() -> None:
    env = make("alfworld", split="dev", object_ids=True)
    task = env.tasks("dev")[1]
    text = env.reset(task).text
    assert "cabinet_1" in text or "drawer_1" in text or "shelf_1" in text
    assert " a " not in text.split("you see", 1)[1].split("\n")[0]
    assert all(
        "_" in c or " " not in c.replace("go to", "")
        for c in env.candidate_actions()
        if c[-1].isdigit()
    )
    action = env.expert_action()
    assert action is not None and "_" in action
    step = env.step(action)
    assert step.info["valid"]
    assert _play_expert(env)


def test_tasks_cross_to_a_fresh_env_as_plain_data() -> None:
    env = make("alfworld", split="dev")
    task = env.tasks("dev")[3]
    copy = pickle.loads(pickle.dumps(task))
    fresh = make("alfworld", split="test")
    assert fresh.reset(copy).text == env.reset(task).text
    assert fresh.reset(task.id).text == env.reset(task).text
    with pytest.raises(KeyError):
        fresh.reset("no-such-task/trial_0")


def _official_tree(root: Path, games: list[GeneratedGame]) -> Path:
    data = root / "json_2.1.1"
    for game in games[:4]:
        game.write(data / "valid_unseen")
    games[4].write(data / "valid_seen")
    # What AlfredTWEnv skips: unsolvable, sliced and movable games.
    skipped = games[5].write(data / "valid_unseen" / "x-movable")
    broken = json.loads((skipped / "game.tw-pddl").read_text())
    bad = games[5].write(data / "valid_unseen" / "unsolvable")
    broken["solvable"] = False
    (bad / "game.tw-pddl").write_text(json.dumps(broken))
    # A game whose grammar still says UNKNOWN GOAL gets its goal from traj_data.
    plain = data / "valid_seen" / "templated"
    shutil.copytree(games[0].write(root / "tmp"), plain)
    raw = json.loads((plain / "game.tw-pddl").read_text())
    goal = games[0].traj_data["lorekit"]["goal_text"]
    raw["grammar"] = raw["grammar"].replace(goal, "UNKNOWN GOAL")
    (plain / "game.tw-pddl").write_text(json.dumps(raw))
    return root


def test_official_layout_is_read_like_alfredtwenv(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, one_per_type: list[GeneratedGame]
) -> None:
    monkeypatch.delenv("ALFWORLD_DATA", raising=False)
    with pytest.raises(GameSourceError, match="ALFWORLD_DATA"):
        make("alfworld", source="official")
    with pytest.raises(GameSourceError, match=r"json_2\.1\.1"):
        make("alfworld", source="official", data_dir=str(tmp_path))
    root = _official_tree(tmp_path / "data", one_per_type)
    monkeypatch.setenv("ALFWORLD_DATA", str(root))
    monkeypatch.setenv("LOREKIT_DATA", str(tmp_path / "lorekit"))
    # Generated games in the official layout are never taken for ALFWorld's.
    with pytest.raises(GameSourceError, match="LoreKit's generated games"):
        make("alfworld", source="official")
    env = make("alfworld", source="official", variant="any", split="valid_unseen")
    assert set(env.splits()) == {"valid_seen", "valid_unseen", "dev", "test"}
    unseen = env.tasks("valid_unseen")
    assert len(unseen) == 4 and env.tasks("test") == unseen
    assert env.describe_split("test").endswith("(test): LoreKit's generated games")
    assert env.reset(unseen[0]).info["variant"] == "generated"
    seen = env.tasks("valid_seen")
    assert len(seen) == 2
    templated = next(t for t in seen if t.id == "templated")
    assert "UNKNOWN" not in templated.goal
    assert f"Your task is to: {templated.goal}" in env.reset(templated).text
    assert _play_expert(env)
    env.reset(unseen[0])
    assert _play_expert(env)


def test_a_directory_of_generated_games_is_a_source(tmp_path: Path) -> None:
    for game in generate_games(3, seed=2):
        game.write(tmp_path / "mine" / "hard")
    env = make("alfworld", source=str(tmp_path / "mine"))
    assert env.splits() == ("hard",) and len(env.tasks("hard")) == 3
    junk = tmp_path / "mine" / "hard" / "junk" / "trial_1"
    junk.mkdir(parents=True)
    (junk / "traj_data.json").write_text("{not json")
    (junk / "game.tw-pddl").write_text("{}")
    with pytest.raises(GameSourceError, match="junk"):
        make("alfworld", source=str(tmp_path / "mine")).tasks("hard")
    with pytest.raises(GameSourceError, match="does not exist"):
        make("alfworld", source=str(tmp_path / "nowhere"))


def test_each_sub_folder_of_games_is_a_split(tmp_path: Path) -> None:
    """DIR/train/<trial> and DIR/test/<trial>: two splits, not one split 'all';
    task folders right under DIR still form 'all', apart from the splits."""
    games = generate_games(5, seed=4)
    for split, chosen in (("train", games[:2]), ("test", games[2:4])):
        for game in chosen:
            folder = game.write(tmp_path / "staging")
            shutil.copytree(folder, tmp_path / "data" / split / folder.name)
    env = make("alfworld", source=str(tmp_path / "data"))
    assert env.splits() == ("test", "train")
    assert [t.id for t in env.tasks("train")] == [g.path.split("/")[1] for g in games[:2]]
    assert len(env.tasks("test")) == 2
    games[4].write(tmp_path / "data")  # <task dir>/<trial> right under DIR
    env = make("alfworld", source=str(tmp_path / "data"))
    assert env.splits() == ("test", "train", "all")
    assert [t.id for t in env.tasks("all")] == [games[4].path]
    assert len(env.tasks("train")) == 2


def test_oracle_and_random_through_the_cli(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    store = str(tmp_path / "runs.db")
    code, out, err = run_cli(
        ["run", "alfworld", "--agent", "oracle", "-n", "6", "-j", "2", "--store", store], capsys
    )
    assert code == 0, err
    assert "100.0%" in out and "generated games" in out
    code, out, err = run_cli(
        [
            "run",
            "alfworld",
            "--agent",
            "random",
            "-n",
            "6",
            "-j",
            "2",
            "--store",
            store,
            "--env-opt",
            "max_steps=10",
        ],
        capsys,
    )
    assert code == 0, err
    assert "tasks: 134 generated games" in out


def test_engines_on_threads_of_one_process_take_turns(monkeypatch: pytest.MonkeyPatch) -> None:
    """TextWorld's parsers and Fast Downward's translator are process-wide, so
    two engines in one process (an env forced onto threads) must never run
    them at the same time: the engine lock makes them take turns."""
    import threading
    import time
    from concurrent.futures import ThreadPoolExecutor

    from lorekit.envs.alfworld import engine

    active, most = [0], [0]
    guard = threading.Lock()

    def watched(original):  # type: ignore[no-untyped-def]
        def call(*args, **kwargs):  # type: ignore[no-untyped-def]
            with guard:
                active[0] += 1
                most[0] = max(most[0], active[0])
            time.sleep(0.02)  # widen the window two unguarded threads would share
            try:
                return original(*args, **kwargs)
            finally:
                with guard:
                    active[0] -= 1

        return call

    monkeypatch.setattr(engine.fast_downward, "pddl2sas", watched(engine.fast_downward.pddl2sas))
    monkeypatch.setattr(
        engine.AlfredEngine, "_gather_infos", watched(engine.AlfredEngine._gather_infos)
    )

    def play(part: int) -> list[bool]:
        env = AlfWorldEnv(split="dev")
        outcomes = []
        for task in env.tasks("dev")[part * 40 + 7 : part * 40 + 10]:
            env.reset(task)
            outcomes.append(_play_expert(env))
        return outcomes

    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(play, [1, 2]))
    assert results == [[True] * 3, [True] * 3]
    assert most[0] == 1
