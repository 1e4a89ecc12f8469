"""Gymnasium env and the 27-action expanded space."""

from __future__ import annotations

import numpy as np
import pytest
from crafter import objects
from gymnasium.utils.env_checker import check_env

from lorekit.envs.crafter import EXPANDED_ACTIONS, CrafterCore, CrafterGym, ExpandedActions
from lorekit.envs.crafter.expanded import DO_TARGETS, faced_kind, to_standard


@pytest.mark.parametrize("obs", ["image", "symbolic"])
def test_gymnasium_checker(obs: str) -> None:
    check_env(CrafterGym(obs, length=40), skip_render_check=True)  # type: ignore[arg-type]


def test_gym_seeding_and_truncation() -> None:
    env = CrafterGym("symbolic", length=25)
    first, _ = env.reset(seed=11)
    again, _ = CrafterGym("symbolic", length=25).reset(seed=11)
    assert all((first[k] == again[k]).all() for k in first)
    done = False
    for _ in range(25):
        _, _, terminated, truncated, _ = env.step(0)
        done = terminated or truncated
    assert done and truncated and not terminated


def test_gym_terminates_on_death() -> None:
    env = CrafterGym("symbolic", length=100)
    env.reset(seed=0)
    env.core.players[0].health = 0
    _, _, terminated, truncated, info = env.step(0)
    assert terminated and not truncated and info["discount"] == 0.0


def _face(core: CrafterCore, thing: str) -> None:
    """Put ``thing`` (material or creature) on the cell the player faces."""
    player = core.players[0]
    target = (int(player.pos[0] + player.facing[0]), int(player.pos[1] + player.facing[1]))
    occupant = core.world[target][1]
    if occupant is not None:
        core.world.remove(occupant)
    creature = {"cow": objects.Cow, "zombie": objects.Zombie, "skeleton": objects.Skeleton}
    if thing in creature:
        core.world[target] = "grass"
        cls = creature[thing]
        args = (core.world, target) if thing == "cow" else (core.world, target, player)
        core.world.add(cls(*args))
    elif thing == "plant":
        core.world[target] = "grass"
        core.world.add(objects.Plant(core.world, target))
    else:
        core.world[target] = thing


def test_expanded_space_has_27_actions() -> None:
    assert len(EXPANDED_ACTIONS) == 27 and len(set(EXPANDED_ACTIONS)) == 27
    assert "do" not in EXPANDED_ACTIONS


@pytest.mark.parametrize("action", sorted(DO_TARGETS))
def test_each_do_action_acts_only_on_its_target(action: str) -> None:
    core = CrafterCore()
    core.reset(0)
    for target in sorted(set(DO_TARGETS.values())):
        _face(core, target)
        assert faced_kind(core) == target
        expected = "do" if target == DO_TARGETS[action] else "noop"
        assert to_standard(core, action) == expected, (action, target)


def test_do_actions_act_with_standard_rules() -> None:
    core = CrafterCore()
    core.reset(0)
    player = core.players[0]
    _face(core, "tree")
    core.step([to_standard(core, "collect_wood")])
    assert player.inventory["wood"] == 1
    _face(core, "stone")  # no pickaxe: crafter's do fails, nothing collected
    core.step([to_standard(core, "collect_stone")])
    assert player.inventory["stone"] == 0
    _face(core, "tree")
    core.step([to_standard(core, "collect_stone")])  # wrong target: a no-op
    assert player.inventory["wood"] == 1


@pytest.mark.parametrize("action", [a for a in EXPANDED_ACTIONS if a not in DO_TARGETS])
def test_other_actions_pass_through(action: str) -> None:
    core = CrafterCore()
    core.reset(0)
    assert to_standard(core, action) == action


def test_wrapper_maps_indices() -> None:
    env = ExpandedActions(CrafterGym("symbolic", length=30))
    env.reset(seed=0)
    assert env.action_space.n == 27  # type: ignore[attr-defined]
    core = env.unwrapped.core  # type: ignore[attr-defined]
    _face(core, "tree")
    env.step(np.int64(EXPANDED_ACTIONS.index("collect_wood")))
    assert core.players[0].inventory["wood"] == 1
    with pytest.raises(ValueError):
        to_standard(core, "do")
