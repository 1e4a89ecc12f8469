"""docs/teams.md's headline examples do what the docs say (issue 29 item 9): the
documented run shows the method and succeeds with the TC and mPT it states."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from _cli import run_cli

from lorekit.agents.teams import build_org, run_team, simulated_roles
from lorekit.agents.teams.clock import VirtualClock
from lorekit.agents.teams.world.party import CrafterParty
from lorekit.agents.teams.world.teamworld import TeamWorld
from lorekit.eval.store import RunStore

DOCS = (Path(__file__).resolve().parents[2] / "docs" / "teams.md").read_text(encoding="utf-8")


def test_the_python_example_succeeds_with_the_figures_it_states() -> None:
    block = DOCS.split("## Running a team", 1)[1].split("```", 2)[1]
    claim = re.search(
        r'world\.reset\("([^"]+)"\)  # succeeds: TC ([\d.]+) virtual s, mPT ([\d.]+)', block
    )
    assert claim is not None, block
    assert "peaceful=True" in block and 'build_org("tree", leaves=3)' in block

    async def play() -> tuple[bool, float, float, int]:
        clock = VirtualClock()
        world = TeamWorld(CrafterParty(players=4, peaceful=True), clock)
        world.reset(claim.group(1))
        result = await run_team(
            world, build_org("tree", leaves=3), simulated_roles(clock.sleep), mode="async",
            clock=clock,
        )  # fmt: skip
        return result.success, result.metrics.tc, result.metrics.mpt, len(result.messages)

    success, tc, mpt, messages = asyncio.run(play())
    assert success and messages > 0  # the root delegates: the method, not one worker alone
    assert (round(tc, 1), round(mpt, 1)) == (float(claim.group(2)), float(claim.group(3)))


def test_the_command_line_example_succeeds_with_the_tc_it_states(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = re.search(
        r"lorekit team run crafter-party (--org tree --leaves 3 --simulate \\\n\s+"
        r"--task (\S+) --env-opt peaceful=true)  # scripted team: TC (\d+) s",
        DOCS,
    )
    assert line is not None
    args = line.group(1).replace("\\\n", " ").split()
    store = tmp_path / "runs.sqlite3"
    code, _, err = run_cli(["team", "run", "crafter-party", *args, "--store", str(store),
                            "--run-id", "doc"], capsys)  # fmt: skip
    assert code == 0, err
    with RunStore.open_readonly(store) as db:
        (episode,) = db.episodes("doc")
    assert episode.success and episode.task_id == line.group(2)
    assert round(episode.info["notes"]["team"]["metrics"]["tc"]) == int(line.group(3))
