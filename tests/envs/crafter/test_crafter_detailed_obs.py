"""``observation="detailed"``: the surroundings and two things of each kind, as
AgentKit's Crafter agent reads them; the standard text stays as it was."""

from __future__ import annotations

import re

import pytest

from lorekit.envs import check_env, make
from lorekit.envs.crafter import CrafterTextEnv
from lorekit.envs.crafter.textobs import (
    further_ahead,
    nearest_in_view,
    surroundings,
    things_in_view,
)

ACTIONS = ["move_west 2", "move_north 3", "do", "move_east 4", "move_south 2", "noop"]


def test_detailed_adds_lines_and_keeps_the_rest() -> None:
    plain, rich = CrafterTextEnv(length=60), CrafterTextEnv(length=60, observation="detailed")
    texts = [(plain.reset(seed=3).text, rich.reset(seed=3).text)]
    texts += [(plain.step(a).observation, rich.step(a).observation) for a in ACTIONS]
    for standard, detailed in texts:
        assert "Next to you:" not in standard and "up to two nearest" not in standard
        kept = [line for line in detailed.splitlines() if not line.startswith("  ")]
        kept = [
            line for line in kept if not line.startswith(("Next to you:", "In view", "Further to"))
        ]
        base = [line for line in standard.splitlines() if not line.startswith("  ")]
        assert kept == [line for line in base if not line.startswith("In view")]
        assert re.search(
            r"^Next to you: north: .+, south: .+, west: .+, east: .+\.$", detailed, re.M
        )


def test_surroundings_and_two_of_each_kind_match_the_world() -> None:
    env = CrafterTextEnv(length=60, observation="detailed")
    env.reset(seed=3)
    for action in ACTIONS:
        env.step(action)
        core = env.core
        player = core.players[0]
        px, py = int(player.pos[0]), int(player.pos[1])
        around = dict(surroundings(core, player))
        material, obj = core.world[(px - 1, py)]
        assert around["west"] == (type(obj).__name__.lower() if obj else material)
        two = things_in_view(core, player, 2)
        kinds = [k for k, _, _ in two]
        assert all(kinds.count(k) <= 2 for k in kinds)
        # the nearest of each kind is the one the standard text names
        first = {}
        for kind, dx, dy in two:
            first.setdefault(kind, abs(dx) + abs(dy))
        assert {k: abs(dx) + abs(dy) for k, dx, dy in nearest_in_view(core, player)} == first
        assert things_in_view(core, player, 1) == nearest_in_view(core, player)
        # further ahead: the commonest materials of the 4x7 (or 9x3) half ahead
        direction, ahead = further_ahead(core, player)
        fx, fy = int(player.facing[0]), int(player.facing[1])
        assert direction == {(-1, 0): "west", (1, 0): "east", (0, -1): "north"}.get(
            (fx, fy), "south"
        )
        assert f"Further to the {direction}: {', '.join(ahead)}." in env.step("noop").observation
        assert 1 <= len(ahead) <= 3
        counts = [int(a.split()[0]) for a in ahead]
        assert counts == sorted(counts, reverse=True) and sum(counts) <= 28


def test_bad_observation_is_refused_and_the_env_still_checks() -> None:
    with pytest.raises(ValueError, match="observation must be one of standard, detailed"):
        make("crafter", observation="rich")
    check_env(make("crafter", length=40, observation="detailed"), episodes=1, max_actions=10)
