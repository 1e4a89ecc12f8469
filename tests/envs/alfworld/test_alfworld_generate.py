"""The game generator: every task type, solvable on the real engine, reproducible, rule-abiding."""

from __future__ import annotations

import collections
import hashlib
import json
import re
from pathlib import Path

import pytest
from _alfworld_helpers import run_with_hash_seed

from lorekit.envs.alfworld import rules
from lorekit.envs.alfworld.games import GENERATED_SPLITS, generated_split, split_floor_plans
from lorekit.envs.alfworld.generate import (
    GeneratedGame,
    GenerationError,
    dump_json,
    generate_games,
)
from lorekit.envs.alfworld.pins import read_pins, split_pins
from lorekit.envs.alfworld.scene import display_names
from lorekit.envs.alfworld.verify import play_walkthrough
from lorekit.envs.alfworld.world import TASK_TYPES


def _digest(game: GeneratedGame) -> str:
    return hashlib.sha256(dump_json(game.game).encode()).hexdigest()


@pytest.mark.parametrize("syntax", ["move", "put"])
def test_every_task_type_is_won_by_its_walkthrough_on_the_engine(syntax: str) -> None:
    games = generate_games(len(TASK_TYPES), seed=3, syntax=syntax)  # type: ignore[arg-type]
    assert sorted(g.traj_data["task_type"] for g in games) == sorted(TASK_TYPES)
    for game in games:
        assert play_walkthrough(game.game) is None, game.path
        places = [c for c in game.walkthrough if c.startswith(("move ", "put "))]
        if game.traj_data["task_type"] != "look_at_obj_in_light":
            assert places, game.path
        expected = re.compile(
            r"^move \S+ \d+ to \S+ \d+$" if syntax == "move" else r"^put \S+ \d+ in/on \S+ \d+$"
        )
        assert all(expected.match(c) for c in places), places


def test_a_broken_walkthrough_is_reported(one_per_type: list[GeneratedGame]) -> None:
    game = dict(one_per_type[0].game)
    game["walkthrough"] = game["walkthrough"][:-1]
    assert play_walkthrough(game) == "the walkthrough ends without winning"
    game["walkthrough"] = ["go to the moon"]
    assert "not admissible" in str(play_walkthrough(game))


_SCRIPT = """
import hashlib, sys
from lorekit.envs.alfworld.generate import dump_json, generate_games
games = generate_games(12, seed=99, syntax="put")
text = "".join(dump_json(g.game) + dump_json(g.traj_data) for g in games)
print(hashlib.sha256(text.encode()).hexdigest())
"""


def test_same_seed_gives_byte_identical_games_under_any_hash_seed() -> None:
    digests = set()
    for hash_seed in ("0", "31337"):
        digests.add(run_with_hash_seed(_SCRIPT, hash_seed).strip())
    assert len(digests) == 1
    other = generate_games(12, seed=100, syntax="put")
    again = generate_games(12, seed=99, syntax="put")
    mine = hashlib.sha256(
        "".join(dump_json(g.game) + dump_json(g.traj_data) for g in again).encode()
    ).hexdigest()
    assert digests == {mine}
    assert [_digest(g) for g in other] != [_digest(g) for g in again]


_FACT = re.compile(r"\((\w+) ([^\s()]+)(?: ([^\s()]+))?\)")


def _init_facts(game: GeneratedGame) -> list[tuple[str, str, str]]:
    problem = str(game.game["pddl_problem"])
    return _FACT.findall(problem[problem.index("(:init") : problem.index("(:goal")])


@pytest.mark.parametrize("split", GENERATED_SPLITS)
def test_objects_stand_only_where_the_rule_tables_allow(split: str) -> None:
    cfg = rules.settings()
    fixed_places = {**cfg["fixtures"], **cfg["lamps"]}
    for game in generated_split(split, "move"):
        facts = _init_facts(game)
        types: dict[str, str] = {}
        pickable: set[str] = set()
        inside: list[tuple[str, str]] = []
        holder: dict[str, str] = {}
        for predicate, first, second in facts:
            if predicate in ("objectType", "receptacleType"):
                types[first] = second.removesuffix("Type")
            elif predicate == "pickupable":
                pickable.add(first)
            elif predicate == "inReceptacle":
                inside.append((first, second))
            elif predicate == "inReceptacleObject":
                holder[first] = second
        assert inside, game.path
        where = dict(inside)
        for obj, recep in inside:
            if obj in holder:  # in a bowl, mug, ...: the bowl takes it, and stands there
                outer = holder[obj]
                assert rules.accepts(types[outer], types[obj]), (game.path, obj, outer)
                assert where[outer] == recep and rules.movable(types[outer]), (game.path, obj)
            elif obj in pickable:
                assert rules.accepts(types[recep], types[obj]), (game.path, obj, recep)
            else:
                assert types[recep] in fixed_places[types[obj]], (game.path, obj)
        assert "(canContain" in str(game.game["pddl_problem"])


def test_shipped_splits_are_pinned_and_shaped_like_alfworld() -> None:
    pins = read_pins()
    assert pins == split_pins(), (
        "the shipped splits changed: rewrite the pins on purpose "
        "(python -m lorekit.envs.alfworld.pins --write)"
    )
    seen_plans: dict[str, set[str]] = {}
    for split in GENERATED_SPLITS:
        games = generated_split(split, "move")
        seen_plans[split] = {g.traj_data["scene"]["floor_plan"] for g in games}
    assert not seen_plans["dev"] & seen_plans["test"]
    assert set(split_floor_plans(0)).isdisjoint(split_floor_plans(1))
    assert len(pins) == 120 + 134


#: ALFWorld's unseen test split (valid_unseen, 134 games), per task type.
OFFICIAL_TEST_MIX = {
    "pick_and_place_simple": 24,
    "pick_clean_then_place_in_recep": 31,
    "pick_heat_then_place_in_recep": 23,
    "pick_cool_then_place_in_recep": 21,
    "look_at_obj_in_light": 18,
    "pick_two_obj_and_place": 17,
}


def test_the_test_split_has_the_official_task_mix() -> None:
    games = generated_split("test", "move")
    counts = collections.Counter(str(g.traj_data["task_type"]) for g in games)
    assert counts == OFFICIAL_TEST_MIX
    # Any first part of the split mixes every type (round-robin while each lasts).
    assert {g.traj_data["task_type"] for g in games[:6]} == set(TASK_TYPES)
    dev = collections.Counter(str(g.traj_data["task_type"]) for g in generated_split("dev", "move"))
    assert set(dev.values()) == {20}


def test_bad_arguments_fail_clearly() -> None:
    with pytest.raises(ValueError, match="n must be at least 0"):
        generate_games(-1, seed=0)
    with pytest.raises(ValueError, match="unknown task types"):
        generate_games(2, seed=0, task_types=["pick_and_fly"])
    with pytest.raises(ValueError, match="no layout"):
        generate_games(2, seed=0, floor_plans=[9999])
    bedrooms = [p.number for p in rules.floor_plans() if p.room == "Bedroom"]
    with pytest.raises(GenerationError, match="pick_heat_then_place_in_recep"):
        generate_games(
            1, seed=0, task_types=["pick_heat_then_place_in_recep"], floor_plans=bedrooms
        )


def test_display_names_number_like_alfworlds_demangler() -> None:
    from alfworld.agents.utils.misc import Demangler

    ids = [
        "Cabinet|+00.68|+00.50|-02.20",
        "Cabinet|-01.18|+00.50|-02.20",
        "Sink|-01.90|+00.97|-01.50|SinkBasin",
        "Mug|+01.00|+00.90|-00.10",
    ]
    ours = display_names(ids)

    class _Info:
        def __init__(self, ident: str) -> None:
            self.id = ident

    from lorekit.envs.alfworld.scene import mangle

    infos = {mangle(i).lower(): _Info(mangle(i).lower()) for i in ids}
    theirs = Demangler(game_infos=infos)
    for ident in ids:
        assert theirs.demangle_alfred_name(mangle(ident).lower()).strip() == ours[ident]


def test_cli_writes_reproducible_games(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from _cli import run_cli

    code, out, err = run_cli(
        [
            "alfworld",
            "generate",
            "--out",
            str(tmp_path / "a"),
            "-n",
            "6",
            "--seed",
            "4",
            "--no-verify",
        ],
        capsys,
    )
    assert code == 0, err
    assert "6 generated games" in out and "not ALFWorld's official set" in out
    code, _, err = run_cli(
        [
            "alfworld",
            "generate",
            "--out",
            str(tmp_path / "b"),
            "-n",
            "6",
            "--seed",
            "4",
            "--no-verify",
        ],
        capsys,
    )
    assert code == 0, err
    files_a = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*.*"))
    assert len([f for f in files_a if f.name == "game.tw-pddl"]) == 6
    for rel in files_a:
        assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes()
    manifest = json.loads((tmp_path / "a" / "lorekit-manifest.json").read_text())
    assert len(manifest["games"]) == 6
    code, _, err = run_cli(
        ["alfworld", "generate", "--out", str(tmp_path / "c"), "--task-types", "nope"], capsys
    )
    assert code == 2 and "unknown nope" in err


def _sample(split: str, per_type: int) -> list[GeneratedGame]:
    """The first ``per_type`` games of each task type of a shipped split."""
    taken: dict[str, int] = collections.Counter()
    out = []
    for game in generated_split(split, "move"):
        kind = game.traj_data["task_type"]
        if taken[kind] < per_type:
            taken[kind] += 1
            out.append(game)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("split", GENERATED_SPLITS)
def test_shipped_games_of_every_type_are_won_by_their_walkthrough(split: str) -> None:
    """Two games of each type per split on the engine (24 of the 254). The pins are
    written only after every shipped game's walkthrough won (``pins --write``), and the
    pin test holds every game to its pin, so these check the engine still wins them."""
    from lorekit.envs.alfworld.engine import AlfredEngine

    engine = AlfredEngine()
    games = _sample(split, 2)
    assert len(games) == 2 * len(TASK_TYPES)
    problems = [(g.path, play_walkthrough(g.game, engine)) for g in games]
    assert [f"{path}: {p}" for path, p in problems if p is not None] == []


def test_pins_are_written_only_for_games_their_walkthrough_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lorekit.envs.alfworld import pins

    monkeypatch.setattr(pins, "unwinnable", lambda: ["test/some/trial: it stops short"])
    with pytest.raises(ValueError, match=r"1 shipped games are not won.*it stops short"):
        pins.write_pins(tmp_path / "pins")
    assert not (tmp_path / "pins").exists()
    monkeypatch.setattr(pins, "unwinnable", lambda: [])
    assert pins.write_pins(tmp_path / "pins") == 120 + 134
    assert pins.read_pins(tmp_path / "pins") == pins.read_pins()
