"""The groundings kept on disk (``lorekit.envs.alfworld.engine.GROUNDINGS``) change
nothing a player sees, survive torn files and unwritable folders, and stay bounded."""

from __future__ import annotations

import gzip
import os
from pathlib import Path
from typing import Any

import pytest

from lorekit.envs.alfworld import engine
from lorekit.envs.alfworld.caching import DiskTexts
from lorekit.envs.alfworld.generate import generate_games


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("LOREKIT_NO_DISK_CACHE", raising=False)
    engine._translations.clear()
    yield tmp_path / "cache"
    engine._translations.clear()


def _shape(task: Any) -> tuple[Any, ...]:
    """What the engine reads of the task: actions and their parameters, types, objects,
    the initial facts."""
    return (
        sorted((a.name, tuple(str(p) for p in a.parameters)) for a in task.actions),
        sorted((t.name, tuple(t.supertype_names)) for t in task.types),
        sorted((o.name, o.type_name) for o in task.objects),
        sorted(str(a) for a in task.init),
    )


def _walk(game: Any) -> list[tuple[str, list[str], bool]]:
    """The walkthrough on a fresh engine: every observation, command list and win."""
    eng = engine.AlfredEngine()
    eng.load(game.game)
    state = eng.reset()
    seen = [(str(state.feedback), sorted(state["admissible_commands"]), bool(state["won"]))]
    for command in game.game["walkthrough"]:
        state, _, _ = eng.step(command)
        seen.append((str(state.feedback), sorted(state["admissible_commands"]), bool(state["won"])))
    return seen


GAMES = generate_games(3, seed=11)


def test_the_task_parsed_again_is_the_one_grounding_returns() -> None:
    for game in GAMES:
        domain, problem = game.game["pddl_domain"], game.game["pddl_problem"]
        translated, _sas = engine._pddl2sas(domain, problem)
        assert _shape(engine._parsed_task(domain, problem)) == _shape(translated)


def test_a_game_from_the_disk_cache_plays_as_a_freshly_grounded_one(
    cache_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOREKIT_NO_DISK_CACHE", "1")
    fresh = [_walk(g) for g in GAMES]
    assert not cache_home.exists()
    monkeypatch.delenv("LOREKIT_NO_DISK_CACHE")
    engine._translations.clear()
    assert [_walk(g) for g in GAMES] == fresh  # grounds and writes
    files = sorted((cache_home / "lorekit" / "alfworld-sas").glob("*.gz"))
    assert len(files) == len(GAMES)
    engine._translations.clear()  # a new process: only the disk has them

    def no_grounding(*_: Any) -> Any:
        raise AssertionError("grounded again although the disk had it")

    monkeypatch.setattr(engine, "_pddl2sas", no_grounding)
    assert [_walk(g) for g in GAMES] == fresh
    assert all(g[-1][2] for g in fresh)  # every walkthrough wins


def test_a_torn_or_foreign_file_is_made_again(cache_home: Path) -> None:
    texts = DiskTexts("t", max_bytes=10**6)
    assert texts.get("k", lambda: "first") == "first"
    path = texts.folder / "k.gz"
    whole = path.read_bytes()
    path.write_bytes(whole[: len(whole) // 2])  # a crash half-way through someone's write
    assert texts.get("k", lambda: "again") == "again"
    path.write_bytes(b"not gzip at all")
    assert texts.get("k", lambda: "third") == "third"
    assert gzip.decompress(path.read_bytes()) == b"third"
    assert texts.get("k", lambda: "never made") == "third"
    assert [p.name for p in texts.folder.iterdir()] == ["k.gz"]  # no temporary left


def test_a_folder_that_is_a_file_costs_only_the_time(cache_home: Path) -> None:
    cache_home.mkdir(parents=True)
    (cache_home / "lorekit").write_text("in the way")
    texts = DiskTexts("t", max_bytes=10**6)
    assert texts.get("k", lambda: "made") == "made"
    assert texts.get("k", lambda: "made again") == "made again"


def test_the_least_recently_used_go_past_the_bound(cache_home: Path) -> None:
    texts = DiskTexts("t", max_bytes=10**9)
    noise = [os.urandom(2000).hex() for _ in range(4)]  # about the same size compressed
    for i, text in enumerate(noise[:3]):
        texts.get(f"k{i}", lambda text=text: text)
        os.utime(texts.folder / f"k{i}.gz", (1000 + i, 1000 + i))
    sizes = [(texts.folder / f"k{i}.gz").stat().st_size for i in range(3)]
    texts.max_bytes = sum(sizes) + max(sizes) // 2  # room for three, not four
    texts.get("k0", lambda: "not made: k0 is kept and now the most recent")
    texts.get("k3", lambda: noise[3])
    kept = {p.stem for p in texts.folder.glob("*.gz")}
    assert kept == {"k0", "k2", "k3"}  # k1 was the least recently used
    assert sum(p.stat().st_size for p in texts.folder.glob("*.gz")) <= texts.max_bytes


def test_the_key_names_the_inputs_and_the_translator(
    cache_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    game = GAMES[0]
    domain, problem = game.game["pddl_domain"], game.game["pddl_problem"]
    engine._load(domain, problem)
    engine._load(domain, problem + "\n")
    monkeypatch.setattr(engine, "_DOWNWARD_VERSION", "another build")
    engine._load(domain, problem)
    assert len(list((cache_home / "lorekit" / "alfworld-sas").glob("*.gz"))) == 3
