"""The three context variants reach every question's prompt, and only their own text does."""

from __future__ import annotations

from pathlib import Path

import pytest
from _spring_support import task_of
from crafter import constants

from lorekit.agents import make_agent
from lorekit.agents.base import NullRecorder
from lorekit.agents.spring import SpringAgent, parse_context
from lorekit.agents.spring.context import paper_text, texts
from lorekit.agents.spring.testing import spring_model
from lorekit.envs.crafter import CrafterTextEnv
from lorekit.laws.experience import Experience, Law
from lorekit.llm import Roles, ScriptedLLM

PAPER_LINE = "Crafting is done at a\ncrafting table"
LAW_TEXT = "hit a tree with nothing in hand and a log comes away"


def experience_file(tmp_path: Path) -> Path:
    exp = Experience(
        laws={
            "collect_wood": Law(
                achievement="collect_wood",
                action="collect_wood",
                requires={},
                nearby=[],
                faced=["tree"],
                costs={},
                gains={"wood": 1},
                text=LAW_TEXT,
            ),
            "place_table": Law(
                achievement="place_table",
                action="place_table",
                requires={"wood": 1},
                nearby=[],
                faced=["grass", "sand", "path"],
                costs={"wood": 1},
                gains={},
            ),
        },
        source="hand",
        meta={},
    )
    path = tmp_path / "laws.json"
    exp.save(path)
    return path


async def _systems(env: CrafterTextEnv, context: str) -> set[str]:
    """The system text of every call of a two-step episode."""
    llm = ScriptedLLM(fn=spring_model())
    agent = SpringAgent(context=context, max_steps=2)
    traj = await agent.run(env, task_of(env), Roles(llm), NullRecorder(), seed=0)
    assert len(traj.steps) == 2 and len(llm.calls) == 18
    assert traj.notes["spring"]["context"] == context
    assert all(c.messages[0].role == "system" for c in llm.calls)
    # one system text per step: the knowledge is the same, the observations move on
    systems = {c.messages[0].content for c in llm.calls}
    assert len(systems) == 2
    return systems


async def test_paper_context(crafter: CrafterTextEnv) -> None:
    for system in await _systems(crafter, "paper"):
        assert paper_text() in system and PAPER_LINE in system
        assert texts()["background"].strip() in system
    # like the crafter paper, the lines name materials, never amounts
    assert "1 wood" not in paper_text() and "2 wood" not in paper_text()


def test_paper_context_says_what_each_action_needs(crafter: CrafterTextEnv) -> None:
    """SPRING's context carried a line per action ("nearby table; wood, stone in
    inventory"); ours comes from crafter's data, so it names what the game checks."""
    text = paper_text()
    assert "- make_stone_pickaxe: a table nearby; wood and stone in the inventory" in text
    listed = text.partition(texts()["requirements_heading"].strip())[2].strip().splitlines()
    lines = dict(line.removeprefix("- ").split(": ", 1) for line in listed)
    assert list(lines) == crafter.candidate_actions()
    for item, info in constants.make.items():
        line = lines[f"make_{item}"]
        assert all(m.replace("_", " ") in line for m in [*info["uses"], *info["nearby"]]), line
    for item, info in constants.place.items():
        line = lines[f"place_{item}"]
        assert all(m.replace("_", " ") in line for m in info["uses"]), line
        assert ("nearby" in line) == bool(info.get("nearby")), line
    assert "energy below" in lines["sleep"]
    assert all(f"move_{d}" in lines for d in ("west", "east", "north", "south"))


async def test_actions_context(crafter: CrafterTextEnv) -> None:
    names = ", ".join(crafter.candidate_actions())
    for system in await _systems(crafter, "actions"):
        assert f"The game's actions are named: {names}." in system
        assert PAPER_LINE not in system and texts()["background"].strip() in system
        assert "in the inventory" not in system


async def test_experience_context(crafter: CrafterTextEnv, tmp_path: Path) -> None:
    path = experience_file(tmp_path)
    rendered = Experience.load(path).render().strip()
    for system in await _systems(crafter, f"experience:{path}"):
        assert rendered and rendered in system  # whatever render() writes, all of it
        assert PAPER_LINE not in system and texts()["background"].strip() in system


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("wiki", "context must be one of paper, actions, experience:FILE; got 'wiki'"),
        ("experience:", "needs the path of an experience JSON file"),
        (3, "got 3"),
    ],
)
def test_bad_context_values(value: object, says: str) -> None:
    with pytest.raises(ValueError, match="context") as info:
        parse_context(value)
    assert says in str(info.value)


def test_a_bad_experience_file_fails_when_the_agent_is_made(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    with pytest.raises(ValueError, match=f"context=experience:{missing}"):
        make_agent("spring", context=f"experience:{missing}")
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(ValueError, match=f"context=experience:{broken}"):
        make_agent("spring", context=f"experience:{broken}")
