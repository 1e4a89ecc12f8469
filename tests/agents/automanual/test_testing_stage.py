"""The testing stage as the authors' code runs it: 5 answers on ALFWorld, no
conclusion request (nothing stores it), and the manual's headings kept inside
the prompt's ``## Manual`` section."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("textworld", reason="the alfworld extra is not installed")

from _planner_support import ISOLATION, LIMITS

from lorekit.agents.automanual.agent import AutoManualAgent
from lorekit.agents.automanual.planner import Planner, nest_headings
from lorekit.agents.automanual.profiles import profile_for
from lorekit.agents.base import Episode
from lorekit.envs import make
from lorekit.llm import ScriptedLLM
from lorekit.llm.roles import Roles
from lorekit.sandbox import WorkerPool

PROFILE = profile_for("alfworld")
MANUAL = "# Manual\n## pick_and_place_simple\n- search\n```python\n# [Step 1] find\n```\n"


@pytest.fixture(scope="module")
def pool() -> Iterator[WorkerPool]:
    with WorkerPool(size=1, isolation=ISOLATION) as shared:
        yield shared


def test_five_answers_at_test_on_alfworld(tmp_path: Path) -> None:
    """The authors' testing stage answers 5 times (MAX_REPLAN_STEP = 5), its build 3."""
    manual = tmp_path / "m.md"
    manual.write_text(MANUAL)
    agent = AutoManualAgent(str(manual))
    assert agent._planner("alfworld").max_replans == 4
    assert PROFILE.max_replans == 2  # the build answers 3 times
    assert AutoManualAgent(str(manual), max_replans=2)._planner("alfworld").max_replans == 2
    paper = AutoManualAgent(str(manual), max_replans="paper")
    assert paper._planner("alfworld").max_replans == 3  # "replan at most 3 times"
    assert paper._planner("miniwob").max_replans == 6
    with pytest.raises(ValueError, match="max_replans must be a whole number"):
        AutoManualAgent(str(manual), max_replans="-1")


def test_manual_headings_stay_inside_the_manual_section() -> None:
    text = Planner(PROFILE).first_message("You see.", rules_text=MANUAL, rules_heading="Manual")
    lines = text.splitlines()
    fence = [i for i, line in enumerate(lines) if line.startswith("```")]
    outside = lines[: fence[0]] + lines[fence[1] + 1 :]
    tops = [line for line in outside if line.startswith(("## ", "# "))]
    assert tops == ["## Manual", "## Task"]
    assert "### Manual" in text and "#### pick_and_place_simple" in text
    assert "# [Step 1] find" in text  # code comments are not headings
    assert nest_headings("a\n# b") == "a\n### b"


async def test_the_testing_stage_asks_for_no_conclusion(pool: WorkerPool) -> None:
    env = make("alfworld", split="dev", max_steps=50, **PROFILE.env_options)
    ep = await Episode.start(env, PROFILE.example.task_id)
    code = PROFILE.example.turns[0].answer
    llm = ScriptedLLM([code])  # one answer, no conclusion scripted
    planned = await Planner(PROFILE, limits=LIMITS, pool=pool).play(
        ep,
        Roles(llm),
        rules_text=MANUAL,
        rules_heading="Manual",
        episode_id="t",
        task_type="pick_and_place_simple",
        conclude=False,
    )
    assert ep.trajectory.success and len(llm.calls) == 1 and planned.conclusion == ""
