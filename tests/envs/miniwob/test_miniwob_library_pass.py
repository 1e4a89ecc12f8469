"""The paper's two-step MiniWoB++ build in real Chromium, with scripted models:
a build learns a rule on click-button, then ``lorekit automanual build miniwob
--from BUILD --library-only`` plays click-link with that rule in the planner's
prompt, never calls the builder, and leaves the rules as they were while the
skill library gains click-link."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from _cli import run_cli
from _mw_browsers import NEEDS_CHROMIUM
from test_miniwob_automanual import LESSON, builder, planner

from lorekit.agents.automanual.build import run_build
from lorekit.agents.automanual.libraries import Libraries
from lorekit.agents.automanual.rules import RuleSystem
from lorekit.agents.automanual.store import open_db
from lorekit.envs import make
from lorekit.eval.store import RunStore
from lorekit.llm import Roles, ScriptedLLM
from lorekit.llm.base import Message

pytestmark = [NEEDS_CHROMIUM, pytest.mark.usefixtures("closes_shared_pool")]
ENV_KWARGS = {
    "tasks": "click-button",
    "actions": "published",
    "pages": "automanual",
}  # as the profile
SIM_MODEL = ("--model", "sim", "--base-url", "http://127.0.0.1:9/v1")
SKILL_HEADING = "## Skill for a similar task (click-link)"
seen: list[str] = []  # the opening prompt of each click-link episode


def link_planner(messages: tuple[Message, ...]) -> str:
    """Clicks the named link; needs the rule the first build learned to do it."""
    last = messages[-1].content
    if last.startswith("## Conclusion"):
        return "### Code\n```python\nagent.click_xpath(\"//span[@class='alink'][.='X']\")\n```"
    opening = messages[1].content
    seen.append(opening)
    named = re.search(r'Click on the link "([^"]+)"', opening)
    assert named is not None
    knows = LESSON in opening.split("## Task")[0]
    xpath = f"//span[@class='alink'][normalize-space()='{named.group(1)}']" if knows else "//p"
    return (
        "### Analysis\nA link is named.\n### Related rules\nnone\n### Plan\nClick it.\n"
        f'### Code\n```python\n# [Step 1] click\nagent.click_xpath("{xpath}")\n```'
    )


def no_builder(messages: tuple[Message, ...]) -> str:
    raise AssertionError("a library-only pass must not call the builder")


def test_library_only_pass_on_miniwob_keeps_the_rules_and_adds_a_skill(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    probe = make("miniwob", **ENV_KWARGS)
    task = next(  # a page where the last button is not the one named: the first try fails
        t
        for t in probe.tasks("dev")
        if (m := re.search(r'Click on the "([^"]+)" button', page := probe.reset(t).text))
        and re.findall(r"<button[^>]*>([^<]*)</button>", page)[-1] != m.group(1)
    )
    probe.close()
    store = tmp_path / "runs.sqlite3"
    step_one = Roles(
        {"planner": ScriptedLLM(fn=planner), "builder": ScriptedLLM(fn=builder)},
        default="planner",
    )
    first = asyncio.run(
        run_build(store, env_name="miniwob", env_kwargs=ENV_KWARGS, tasks=[task], roles=step_one,
                  run_id="b", per_type=1, shuffle=False)
    )  # fmt: skip
    assert first.errors == 0 and first.rules > 0
    db = open_db(str(store))
    rules_before = RuleSystem(db, "b").history()
    assert any(LESSON in r.content for r in RuleSystem(db, "b").rules())
    assert "click-link" not in Libraries(db, "b").skills()

    step_two = Roles(
        {"planner": ScriptedLLM(fn=link_planner), "builder": ScriptedLLM(fn=no_builder)},
        default="planner",
    )
    monkeypatch.setattr("lorekit.cli.checks.build_models", lambda *a, **k: step_two)
    seen.clear()
    code, out, err = run_cli(
        [
            "automanual", "build", "miniwob", "--from", "b", "--library-only",
            "--tasks", "click-link", "--per-type", "2", "--run-id", "lib",
            "--store", str(store), *SIM_MODEL,
        ],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    assert "from build b: rules kept as they were" in out
    with RunStore(store) as runs:
        episodes = sorted(runs.episodes("lib"), key=lambda e: e.index)
        roles = {c["role"] for e in episodes for c in runs.llm_calls("lib", e.episode_key)}
    assert [e.success for e in episodes] == [True, True] and roles == {"planner"}
    assert RuleSystem(db, "lib").history() == rules_before == RuleSystem(db, "b").history()
    assert "click-link" in Libraries(db, "lib").skills()
    assert "click-link" not in Libraries(db, "b").skills()
    # the rule reached both prompts; the second also got the skill the first one concluded
    assert len(seen) == 2 and all(LESSON in s for s in seen)
    assert SKILL_HEADING not in seen[0] and SKILL_HEADING in seen[1]
    db.close()


def test_the_paper_split_the_53_into_9_with_feedback_and_44_without() -> None:
    from lorekit.envs.miniwob import task_lists

    lists = task_lists()
    without = lists["no-feedback-44"]
    assert len(without) == len(set(without)) == 44
    assert not set(without) & set(lists["feedback-9"])
    assert set(without) | set(lists["feedback-9"]) == set(lists["automanual-53"])
