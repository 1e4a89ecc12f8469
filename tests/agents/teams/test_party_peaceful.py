"""The peaceful party world, on crafter's real engine: no zombie or skeleton
ever exists, cows still do, and the terrain is the hostile world's."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from crafter import objects

from lorekit.agents.teams.clock import VirtualClock
from lorekit.agents.teams.world.party import CrafterParty
from lorekit.agents.teams.world.teamworld import TeamWorld
from lorekit.envs import make

SEEDS = (0, 1, 2)
TICKS = 320  # past the first night (darkest near tick 210) and into the next day


def _count(party: CrafterParty, kind: type) -> int:
    return sum(isinstance(obj, kind) for obj in party.core.world.objects)


def _play_night(party: CrafterParty, seed: int) -> tuple[int, int, int]:
    """Players wait (as they do while their agents think) through a night; the
    most zombies, skeletons and cows seen at once."""
    party.reset("collect-50-wood/seed-0", seed=seed)
    most = [0, 0, 0]
    for _ in range(TICKS):
        # core.step, not party.tick: the hostile world keeps going after a wipe-out
        party.core.step(["noop"] * len(party.names))
        for i, kind in enumerate((objects.Zombie, objects.Skeleton, objects.Cow)):
            most[i] = max(most[i], _count(party, kind))
    return most[0], most[1], most[2]


@pytest.mark.parametrize("seed", SEEDS)
def test_peaceful_world_has_no_hostiles_through_a_night(seed: int) -> None:
    zombies, skeletons, cows = _play_night(CrafterParty(players=3, peaceful=True), seed)
    assert (zombies, skeletons) == (0, 0)
    assert cows > 0


@pytest.mark.parametrize("seed", SEEDS)
def test_default_world_stays_hostile(seed: int) -> None:
    party = CrafterParty(players=3)
    assert not party.peaceful and not party.core.peaceful
    zombies, skeletons, cows = _play_night(party, seed)
    assert zombies > 0 and skeletons > 0 and cows > 0


def test_night_spawns_zombies_only_in_the_hostile_world() -> None:
    """Balancing, not only world generation: zombies that appear during the night."""
    spawned = {}
    for peaceful in (False, True):
        party = CrafterParty(players=2, peaceful=peaceful)
        party.reset("collect-20-wood/seed-0", seed=1)
        before = {id(o) for o in party.core.world.objects}
        new = 0
        for _ in range(TICKS):
            party.core.step(["noop", "noop"])
            new += sum(
                isinstance(o, objects.Zombie) and id(o) not in before
                for o in party.core.world.objects
            )
            before |= {id(o) for o in party.core.world.objects}
        spawned[peaceful] = new
    assert spawned[False] > 0 and spawned[True] == 0


def _snapshot(party: CrafterParty) -> tuple[Any, ...]:
    core = party.core
    cows = sorted(tuple(o.pos.tolist()) for o in core.world.objects if isinstance(o, objects.Cow))
    players = [tuple(p.pos.tolist()) for p in core.players]
    return core.world._mat_map.copy(), cows, players


@pytest.mark.parametrize("seed", SEEDS)
def test_same_seed_same_terrain_and_cows(seed: int) -> None:
    hostile, peaceful = CrafterParty(players=2), CrafterParty(players=2, peaceful=True)
    hostile.reset("collect-20-stone/seed-0", seed=seed)
    peaceful.reset("collect-20-stone/seed-0", seed=seed)
    (map_h, cows_h, players_h), (map_p, cows_p, players_p) = (
        _snapshot(hostile),
        _snapshot(peaceful),
    )
    assert np.array_equal(map_h, map_p)
    assert cows_h == cows_p and cows_h
    assert players_h == players_p
    assert _count(hostile, objects.Zombie) + _count(hostile, objects.Skeleton) > 0


def test_peaceful_episodes_are_reproducible() -> None:
    runs = []
    for _ in range(2):
        party = CrafterParty(players=2, peaceful=True)
        party.reset("collect-20-wood/seed-0", seed=2)
        for tick in range(200):
            party.tick(["move_left" if tick % 7 else "do", "move_up" if tick % 5 else "noop"])
        runs.append(_snapshot(party))
    assert np.array_equal(runs[0][0], runs[1][0])
    assert runs[0][1:] == runs[1][1:]


def test_reachable_from_make_and_team_world() -> None:
    env = make("crafter-party", players=3, peaceful=True)
    assert isinstance(env, CrafterParty) and env.core.peaceful
    assert "peaceful" in env.manual()
    assert "peaceful" not in make("crafter-party", players=3).manual()
    world = TeamWorld(env, VirtualClock())
    assert world.peaceful
    assert not TeamWorld(CrafterParty(players=2), VirtualClock()).peaceful
