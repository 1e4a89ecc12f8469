"""The planner's side of one sandboxed run: recording its steps, reporting what it did.

The env code APIs send each action straight to the env (from the sandbox's
thread), not through :meth:`Episode.act`. :class:`RecordingApi` stands in
front of the code API with the same methods and signatures, so the sandbox's
gate checks calls exactly as before, and after each call hands the env steps
it caused to the episode (on the episode's event loop, as they happen). So
every step is in the trajectory and the run store even if the episode is
cut off in the middle of a run, and success still comes from the env.

:func:`render_feedback` turns a run into the text the planner reads next:
status and error line, each call with its result, printed output, the
episode's state, and for web pages the page now. :func:`render_examples` shows
the profile's human examples (tasks, answers and that feedback) in the system prompt.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Sequence
from typing import Any

from lorekit.agents.automanual import texts
from lorekit.agents.automanual.profiles import Example
from lorekit.agents.base import Episode
from lorekit.agents.prompts import render
from lorekit.envs.base import Step
from lorekit.envs.steplimit import UNCAPPED
from lorekit.sandbox import ApiCall, SandboxResult
from lorekit.sandbox.proxy import shorten

MAX_CALLS_SHOWN = 60
MAX_CALLS_CHARS = 12_000
MAX_OUTPUT_CHARS = 2_000


def _action_text(entry: Any) -> str:
    """The action as the env received it (ALFWorld: ``command``; MiniWoB++: ``action``)."""
    return str(getattr(entry, "action", None) or getattr(entry, "command", ""))


class RecordingApi:
    """The code API as the sandbox sees it, feeding every env step to ``episode``.

    Only ``methods`` are exposed, each with the wrapped method's signature and
    annotations (``functools.wraps``), so the gate's type checks are unchanged.
    Build it on the episode's event loop; its methods run on another thread.
    """

    def __init__(self, api: Any, methods: Sequence[str], episode: Episode) -> None:
        self.api = api
        self.episode = episode
        self.recorded = 0
        """How many of ``api.history``'s entries were handed to the episode."""
        self.skipped = 0
        """Entries after the episode ended (the env refused them; they are not steps)."""
        self._loop = asyncio.get_running_loop()
        for name in methods:
            setattr(self, name, self._wrap(name, getattr(api, name)))

    def _wrap(self, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return method(*args, **kwargs)
            finally:
                asyncio.run_coroutine_threadsafe(self._flush_soon(), self._loop).result()

        return call

    async def _flush_soon(self) -> None:
        self.flush()

    def flush(self) -> list[Any]:
        """Hand the env steps not yet recorded to the episode (on its loop); the new entries."""
        history = self.api.history
        new = history[self.recorded + self.skipped :]
        for entry in new:
            step: Step = entry.step
            if self.episode.done:
                self.skipped += 1
                continue
            self.episode.record(_action_text(entry), step)
            self.recorded += 1
        return list(new)


REFUSED_ACTION = "ActionFailed"
"""The exception a code API raises for an action the env refused after sending it
(MiniWoB++'s ``raise_on_failure``): the call still took one env step."""


def render_feedback(
    templates: dict[str, str],
    result: SandboxResult,
    entries: Sequence[Any],
    episode: Episode,
    *,
    actions: Sequence[str],
    style: str,
    result_chars: int,
    page: str | None = None,
    page_chars: int = 8_000,
) -> str:
    """What one run did, for the planner's next message (bounded whatever the code did).

    ``entries`` are the code API's history entries this run added, matched in
    order to the calls of ``actions`` methods that did not fail, or that raised
    :data:`REFUSED_ACTION` (each such call sent exactly one command to the env).
    """

    def fill(name: str, **values: Any) -> str:
        return render(templates[name], f"planner.{name}", **values)

    lines = []
    if result.error is None:
        lines.append(fill("status_ok"))
    else:
        lines.append(fill("status_error", error=shorten(result.error.describe(), 1_500)))
        if result.error.source_line:
            lines.append(
                templates["status_line"].format(line=shorten(result.error.source_line.strip(), 300))
            )
    rendered = _calls(result.calls, entries, actions, style, result_chars, templates)
    if rendered:
        lines.append(fill("actions_heading", n=len(rendered)))
        shown = _latest(rendered, MAX_CALLS_SHOWN, MAX_CALLS_CHARS)
        if len(rendered) > len(shown):
            lines.append(templates["actions_omitted"].format(n=len(rendered) - len(shown)))
        start = len(rendered) - len(shown) + 1
        lines.extend(f"  {i}. {text}" for i, text in enumerate(shown, start))
    else:
        lines.append(fill("actions_none"))
    if result.output.strip():
        lines.append(fill("output_heading"))
        lines.append(result.output[-MAX_OUTPUT_CHARS:].rstrip("\n"))
    else:
        lines.append(fill("output_none"))
    trajectory = episode.trajectory
    if trajectory.done:
        last = trajectory.steps[-1].info if trajectory.steps else {}
        if trajectory.success:
            lines.append(fill("episode_won"))
        elif last.get("truncated"):
            lines.append(fill("episode_truncated"))
        else:
            lines.append(fill("episode_lost"))
    else:
        lines.append(fill("not_completed"))
        limit = episode.env.max_steps
        if limit < UNCAPPED:
            lines.append(fill("steps_used", used=len(trajectory.steps), limit=limit))
        if page is not None:
            lines.append(fill("page_heading"))
            if len(page) > page_chars:
                lines.append(page[:page_chars])
                lines.append(fill("page_cut", chars=page_chars))
            else:
                lines.append(page)
    return "\n".join(lines)


def _latest(lines: list[str], count: int, chars: int) -> list[str]:
    """The last lines that fit both bounds (at least one): the latest calls matter most."""
    kept: list[str] = []
    used = 0
    for line in reversed(lines[-count:]):
        if kept and used + len(line) > chars:
            break
        kept.append(line)
        used += len(line) + 1
    return kept[::-1]


def _calls(
    calls: Sequence[ApiCall],
    entries: Sequence[Any],
    actions: Sequence[str],
    style: str,
    result_chars: int,
    templates: dict[str, str],
) -> list[str]:
    sent = iter(entries)
    out = []
    for call in calls:
        parts = [repr(a) for a in call.args] + [f"{k}={v!r}" for k, v in call.kwargs.items()]
        head = shorten(f"agent.{call.method}({', '.join(parts)})", 300)
        refused = bool(call.error) and f"raised {REFUSED_ACTION}:" in (call.error or "")
        if call.error and not (refused and call.method in actions):
            tail = f"error: {shorten(call.error, 500)}"
        elif call.method in actions:
            entry = next(sent, None)
            observation = str(call.result)
            if entry is not None:  # what the call returned (a state line, say), else the env's
                observation = getattr(entry, "shown", "") or entry.step.observation
            if style == "verdict":
                valid = entry is not None and bool(entry.step.info.get("valid", False))
                first = observation.split("\n", 1)[0]
                reason = first.removeprefix("Failed: ").strip()
                tail = (
                    templates["action_done"]
                    if valid
                    else templates["action_failed"].format(reason=shorten(reason, result_chars))
                )
            else:
                tail = shorten(observation.strip(), result_chars)
        else:
            tail = shorten(repr(call.result), result_chars)
        out.append(f"{head} -> {tail}")
    return out


def render_examples(examples: Sequence[Example]) -> str:
    """The system prompt's example section: one example as before, several all at
    once, numbered and named by task type (the authors' code puts its whole list
    of examples in the prompt, after "Here are N examples")."""

    def fill(name: str, **values: Any) -> str:
        return texts.fill("planner", name, **values)

    def one(example: Example) -> str:
        parts = [fill("example_task", task=example.task)]
        for turn in example.turns:
            parts.append(fill("example_answer", answer=turn.answer))
            if turn.feedback:
                parts.append(fill("example_feedback", feedback=turn.feedback))
        return "\n\n".join(parts)

    if len(examples) == 1:
        return fill("example_section", example=one(examples[0]))
    numbered = (
        fill("example_numbered", number=n, task_type=e.task_type, example=one(e))
        for n, e in enumerate(examples, 1)
    )
    return fill("examples_section", count=len(examples), examples="\n\n".join(numbered))
