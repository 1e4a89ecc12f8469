"""AutoManual builds on MiniWoB++ in real Chromium: the planner's code clicks
the wrong button until the builder's rule says which one, then succeeds."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from _mw_browsers import NEEDS_CHROMIUM

from lorekit.agents.automanual.build import run_build
from lorekit.agents.automanual.rules import RuleSystem
from lorekit.agents.automanual.store import open_db
from lorekit.envs import make
from lorekit.eval.store import RunStore
from lorekit.llm import Roles, ScriptedLLM
from lorekit.llm.base import Message

pytestmark = [NEEDS_CHROMIUM, pytest.mark.usefixtures("closes_shared_pool")]
LESSON = "click the button whose text the task names"


def planner(messages: tuple[Message, ...]) -> str:
    """Clicks the last button, unless a rule carries the lesson; concludes briefly."""
    last = messages[-1].content
    if last.startswith("## Conclusion"):
        if "failure" in last.splitlines()[0]:
            return "### Reflection\nI clicked the last button; it was not the one named."
        return "### Code\n```python\nagent.click_xpath(\"//button[normalize-space()='X']\")\n```"
    label = re.search(r'Click on the "([^"]+)" button', messages[1].content)
    assert label is not None
    knows = LESSON in messages[1].content.split("## Task")[0]
    xpath = f"//button[normalize-space()='{label.group(1)}']" if knows else "(//button)[last()]"
    return (
        "### Analysis\nA button is named.\n### Related rules\nnone\n### Plan\nClick it.\n"
        f'### Code\n```python\n# [Step 1] click\nagent.click_xpath("{xpath}")\n```'
    )


def builder(messages: tuple[Message, ...]) -> str:
    last = messages[-1].content
    if "## Manage rules" not in last:
        return "The rules do not say which button.\nDiagnosis: rules"
    failed = "## Result: failure" in messages[1].content
    if failed:
        call = (
            "rule_system.write_rule(rule='click-button: clicking the last button failed; "
            f"{LESSON}.', type='Unsolved Error', validation_record='seen once')"
        )
    else:
        call = (
            "rule_system.write_rule(rule='click-button: find the named button by its text.', "
            "type='Success Process', example='agent.click_xpath(...)')"
        )
    return f"```python\n{call}\nrule_system.stop_generating()\n```"


def test_build_on_miniwob_learns_which_button(tmp_path: Path) -> None:
    probe = make("miniwob", tasks="click-button")
    tasks = []  # pages where the last button is not the one named
    for task in [*probe.tasks("test"), *probe.tasks("dev")]:
        page = probe.reset(task).text
        named = re.search(r'Click on the "([^"]+)" button', page)
        buttons = re.findall(r"<button[^>]*>([^<]*)</button>", page)
        if named and buttons and buttons[-1] != named.group(1):
            tasks.append(task)
    probe.close()
    assert len(tasks) >= 2
    tasks = tasks[:2]
    store = tmp_path / "runs.sqlite3"
    roles = Roles(
        {"planner": ScriptedLLM(fn=planner), "builder": ScriptedLLM(fn=builder)},
        default="planner",
    )
    done = asyncio.run(
        run_build(
            store,
            env_name="miniwob",
            env_kwargs={"tasks": "click-button"},
            tasks=tasks,
            roles=roles,
            run_id="b",
            per_type=3,
            shuffle=False,
        )
    )
    assert done.errors == 0
    with RunStore(store) as db:
        episodes = sorted(db.episodes("b"), key=lambda e: e.index)
        outcomes = [e.info["notes"]["automanual"]["outcome"] for e in episodes]
    assert outcomes == ["failure", "direct_success"]
    history = RuleSystem(open_db(str(store)), "b").history()
    learned = [(e.episode_id, e.after.type.value) for e in history if e.after and e.episode_id]
    assert learned == [
        (episodes[0].episode_key, "Unsolved Error"),
        (episodes[1].episode_key, "Success Process"),
    ]
