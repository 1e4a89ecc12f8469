"""Fast world generation and the engine loop against the crafter package."""

from __future__ import annotations

import crafter
import numpy as np
import pytest
from crafter import constants, engine, objects
from crafter import worldgen as crafter_worldgen

from lorekit.envs.crafter import worldgen
from lorekit.envs.crafter.core import ACTIONS, CrafterCore, DeterministicWorld, world_seed


def _reference_world(seed: int) -> engine.World:
    world = engine.World((64, 64), constants.materials, (12, 12))
    world.reset(seed=seed)
    player = objects.Player(world, (32, 32))
    world.add(player)
    crafter_worldgen.generate_world(world, player)
    return world


@pytest.mark.parametrize("seed", [0, 7, 123456])
def test_worlds_equal_crafters_own(seed: int) -> None:
    reference = _reference_world(seed)
    random = np.random.RandomState(seed)
    generated = worldgen.generate(random, (64, 64), np.array((32, 32)))
    names = [worldgen.CODE_NAMES[c] for c in generated.codes.ravel()]
    assert names == [reference._mat_names[i] for i in reference._mat_map.ravel()]
    kinds = {worldgen.COW: "Cow", worldgen.ZOMBIE: "Zombie", worldgen.SKELETON: "Skeleton"}
    ours = [(kinds[k], (x, y)) for k, x, y in generated.creatures.tolist()]
    theirs = [(type(o).__name__, tuple(int(v) for v in o.pos)) for o in reference.objects][1:]
    assert ours == theirs
    # The random stream continues where crafter's would.
    assert random.uniform() == reference.random.uniform()


def test_generation_is_deterministic_and_valid() -> None:
    first = worldgen.generate(np.random.RandomState(5), (64, 64), np.array((32, 32)))
    again = worldgen.generate(np.random.RandomState(5), (64, 64), np.array((32, 32)))
    other = worldgen.generate(np.random.RandomState(6), (64, 64), np.array((32, 32)))
    assert (first.codes == again.codes).all() and (first.creatures == again.creatures).all()
    assert not (first.codes == other.codes).all()
    assert worldgen.spawn_ok(first.codes, (32, 32))
    assert first.tunnels.any()
    present = {worldgen.CODE_NAMES[c] for c in np.unique(first.codes)}
    assert {"grass", "tree", "stone", "water", "coal", "iron"} <= present


def test_episode_matches_crafter_env_step_by_step() -> None:
    """Same seed and actions: same map, creatures, inventory and reward as
    crafter.Env with images, through the first night (rng parity)."""
    reference = crafter.Env(seed=1)
    reference._world.__class__ = DeterministicWorld  # crafter's chunk sets, made ordered
    reference.reset()
    core = CrafterCore()
    core.reset(world_seed(1))
    rng = np.random.RandomState(1)
    nights = 0
    for _ in range(220):
        action = int(rng.randint(len(ACTIONS)))
        _, reward, done, _ = reference.step(action)
        ours = core.step([ACTIONS[action]])[0]
        nights += core.world.daylight < 0.5
        assert (core.world._mat_map == reference._world._mat_map).all()
        assert core.players[0].inventory == reference._player.inventory
        assert [tuple(o.pos) for o in core.world.objects] == [
            tuple(o.pos) for o in reference._world.objects
        ]
        assert ours == pytest.approx(reward)
        if done:
            break
    assert nights > 0


def test_render_is_crafters_image() -> None:
    reference = crafter.Env(seed=3)
    image = reference.reset()
    core = CrafterCore()
    core.reset(world_seed(3))
    assert (core.render() == image).all()


def test_party_players_share_world() -> None:
    core = CrafterCore(players=3)
    core.reset(1)
    positions = {tuple(p.pos.tolist()) for p in core.players}
    assert len(positions) == 3
    assert all(core.world[p.pos][0] == "grass" for p in core.players)
    with pytest.raises(ValueError):
        CrafterCore(players=0)
