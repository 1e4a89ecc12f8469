"""The ``team`` agent: a whole S-Agents team built from ``team run``'s options as agent
options (what an experiment row names), refusing a bad one in words that name it, and
registered with the row player that plays a row as a team run."""

from __future__ import annotations

import pytest

from lorekit.agents import make_agent, needs_model
from lorekit.registry import REGISTRY


def test_the_options_make_the_spec_team_run_would() -> None:
    team = make_agent("team", org="tree", leaves=3, cutoff_s=2400)
    assert (team.spec.org, team.spec.size, team.spec.mode, team.spec.clock) == (
        "tree", 3, "async", "wall",
    )  # fmt: skip
    assert team.spec.cutoff_s == 2400 and team.model_roles == ("leader", "worker")
    assert make_agent("team", org="chain", size=3).spec.mode == "relay"  # the paper's CoA
    assert needs_model("team")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"org": "chain", "leaves": 3}, "leaves: only a tree has leaves"),
        ({"org": "ring"}, "org: unknown organization 'ring'"),
        ({"org": "tree", "mode": "fast"}, "mode: unknown mode 'fast'"),
    ],
)
def test_a_bad_option_names_it(options: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make_agent("team", **options)


def test_its_rows_are_played_by_the_team_loop() -> None:
    entry = REGISTRY.find("agent", "team")
    assert entry is not None
    assert entry.meta["play"] == "lorekit.agents.teams.commands.reproduce:play_row"
