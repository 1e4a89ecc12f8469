"""The feedback text stays bounded and keeps the latest calls, whatever the code did."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from lorekit.agents.automanual.planner import prompts
from lorekit.agents.automanual.planner_feedback import MAX_CALLS_CHARS, render_feedback
from lorekit.agents.base import Trajectory
from lorekit.envs.base import Step, Task
from lorekit.sandbox import ApiCall, AssertionFailed, SandboxResult


def _episode() -> Any:
    trajectory = Trajectory(Task("t", "goal", "group"), "start")
    return SimpleNamespace(trajectory=trajectory, env=SimpleNamespace(max_steps=50))


def _render(calls: list[ApiCall], entries: list[Any], **kw: Any) -> str:
    error = AssertionFailed("Error in [Step 2]: not holding it", line=7)
    error.source_line = "    assert agent.holding() == mug"
    result = SandboxResult("x" * 5_000, tuple(calls), error, 0.1, "agent")
    options: dict[str, Any] = {"actions": ("look",), "style": "observation", "result_chars": 600}
    options.update(kw)
    return render_feedback(prompts(), result, entries, _episode(), **options)


def test_many_long_calls_are_cut_to_the_latest() -> None:
    calls = [ApiCall("look", (), result="seen " * 400) for _ in range(100)]
    entries = [
        SimpleNamespace(step=Step(f"obs {i} " + "y" * 1_000, 0.0, False, {})) for i in range(100)
    ]
    text = _render(calls, entries)
    assert text.startswith("The code stopped early: AssertionFailed: Error in [Step 2]")
    assert "  at: assert agent.holding() == mug" in text
    assert "Calls (100):" in text and "earlier calls not shown" in text
    assert "obs 99 " in text and "obs 0 " not in text  # the latest survive
    assert len(text) < MAX_CALLS_CHARS + 4_000  # calls, plus 2,000 chars of output and the rest
    assert text.count("x") >= 2_000 and "x" * 2_001 not in text


def test_verdicts_and_errors() -> None:
    calls = [
        ApiCall("look", (), result="<html>"),
        ApiCall("look", (), result="<html>"),
        ApiCall("go", ("x",), error="ApiCallRejected: api.go is not an allowed method"),
        ApiCall("holding", (), result=None),
    ]
    ok = SimpleNamespace(step=Step("Done: click.\nPage:\n<div>", 0.0, False, {"valid": True}))
    bad = SimpleNamespace(step=Step("Failed: no element matches", 0.0, False, {"valid": False}))
    text = _render(calls, [ok, bad], style="verdict", page="<div id='wrap'>now</div>")
    lines = text.splitlines()
    assert "  1. agent.look() -> Action done." in lines
    assert "  2. agent.look() -> Action failed: no element matches" in lines
    assert "  3. agent.go('x') -> error: ApiCallRejected: api.go is not an allowed method" in lines
    assert "  4. agent.holding() -> None" in lines
    assert lines[-2:] == ["The page now:", "<div id='wrap'>now</div>"]
    assert "Actions used so far: 0 of 50." in lines
