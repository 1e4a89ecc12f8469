"""MiniWoB++ as Python methods, for agents that act by writing code.

AutoManual's planner drives web pages with code such as
``agent.click_xpath("//input[@id='tt']"); agent.type("Ronda")`` and LoreKit
runs that code in :mod:`lorekit.sandbox`. :class:`MiniWoBCodeApi` is the
object behind the sandbox's ``agent`` proxy: one method per AutoManual action,
each sent to the :class:`~lorekit.envs.miniwob.env.MiniWoBEnv` as one step in
its text form (so the env counts steps, applies its step limit and judges
success), each returning the page's HTML afterwards, as AutoManual's actions
do. Once an action ends the episode there is no page left to show: that
action returns the env's closing text ("... you succeeded (reward ...)")
instead, and later actions the env's "episode is over" message.

A failed action (an xpath that matches nothing or does not parse, an unknown
key) is a move, not a bug: by default it returns the unchanged page and is
logged as failed, never raised. With ``raise_on_failure=True`` (AutoManual's
profile, as its published wrapper does) it is logged and then raises
:class:`ActionFailed`, which ends the code block there, so the failure shows
up as the turn's error for the builder to diagnose. Arguments of the wrong
type never reach the object: the sandbox's gate checks them against the
annotations.

The object keeps a feedback log, AutoManual's "whenever one of the actions is
executed, we log whether it was executed successfully or failed": every
action as done or failed with the env's reason, then the episode's result.
:meth:`~MiniWoBCodeApi.feedback` renders it for the planner's next prompt;
:attr:`~MiniWoBCodeApi.history` keeps each action text and the env's
:class:`~lorekit.envs.base.Step`. Make one object per episode, after reset.

It wraps a plain :class:`MiniWoBEnv` or the harness's awaitable handle on one
(:class:`~lorekit.envs.asyncenv.AsyncEnv`). With a handle, build the object
on the event loop and run the code with ``run_code_async``: each call then
waits, on the sandbox's thread, for the env call it sends to the loop.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from lorekit.envs.asyncenv import AsyncEnv, call_blocking, owning_loop
from lorekit.envs.base import Step, TextEnv
from lorekit.envs.miniwob.env import MiniWoBEnv

R = TypeVar("R")
_PAGE_MARK = "\nPage:\n"
_SHOWN_CHARS = 200


class ActionFailed(RuntimeError):
    """An action the page refused (``raise_on_failure``); the message is the env's reason."""


@dataclass(frozen=True)
class CodeStep:
    """One action the code sent to the env, and what the env answered."""

    call: str
    """The call as the code wrote it: ``agent.click_xpath('//button')``."""
    action: str
    """The action's text form, as the env received it."""
    step: Step

    @property
    def ok(self) -> bool:
        return bool(self.step.info.get("valid", False))

    @property
    def message(self) -> str:
        """The env's verdict on the action ("Done: ...", "Failed: ...")."""
        return self.step.observation.split("\n", 1)[0]


def split_page(observation: str) -> tuple[str, str | None]:
    """An env observation as (its text before the page, the page's HTML or None)."""
    head, mark, html = observation.partition(_PAGE_MARK)
    return (head, html) if mark else (observation, None)


class MiniWoBCodeApi:
    """The ``agent`` object that code-writing agents drive MiniWoB++ pages through.

    Pass ``api_methods=ACTIONS`` to ``run_code`` to hide the queries.
    """

    ACTIONS: ClassVar[tuple[str, ...]] = (
        "click_xpath",
        "type",
        "press_key",
        "click_option",
        "move_mouse_on",
    )
    QUERIES: ClassVar[tuple[str, ...]] = ("html", "utterance", "done", "success", "feedback")

    def __init__(self, env: MiniWoBEnv | AsyncEnv, *, raise_on_failure: bool = False) -> None:
        self._env = env
        self._raise = raise_on_failure
        self._loop = owning_loop(env, "MiniWoBCodeApi")
        if not isinstance(env, (AsyncEnv, MiniWoBEnv)):
            raise TypeError(f"MiniWoBCodeApi needs a MiniWoBEnv, got {type(env).__name__}")
        self._history: list[CodeStep] = []
        self._seen_html = ""
        self._seen_utterance = ""

    @property
    def history(self) -> list[CodeStep]:
        """Every action sent to the env through this object, in order (a copy)."""
        return list(self._history)

    # -- actions -------------------------------------------------------------------------

    def click_xpath(self, xpath: str) -> str:
        """Click what ``xpath`` matches; the page's HTML afterwards.

        The first match, or, under the env's ``actions="published"``, every shown and
        enabled match (AutoManual's wrapper)."""
        return self._send("click_xpath", xpath)

    def type(self, text: str) -> str:
        """Type ``text`` into the element that has the focus (click it first).

        Under the env's ``actions="published"`` it fails when nothing that takes
        text has the focus or the field is not empty, as AutoManual's wrapper does."""
        return self._send("type", text)

    def press_key(self, key: str) -> str:
        """Press one key: enter, space, tab, backspace, delete, escape, arrows, home, end."""
        return self._send("press_key", key)

    def click_option(self, xpath: str) -> str:
        """Select the ``<option>`` that ``xpath`` names in its drop-down list."""
        return self._send("click_option", xpath)

    def move_mouse_on(self, xpath: str) -> str:
        """Move the mouse over the first element ``xpath`` matches (menus that open on hover)."""
        return self._send("move_mouse_on", xpath)

    # -- read-only queries -----------------------------------------------------------------

    def html(self) -> str:
        """The page's HTML now (pages change on their own: timers, pop-ups).

        After the episode: the HTML last seen, as there is no page any more
        ("" if this object never saw one).
        """
        live = self._call(_html)
        if live is not None:
            self._seen_html = live
        return self._seen_html

    def utterance(self) -> str:
        """The task written at the top of the page (after the episode: the last one seen)."""
        live = self._call(_utterance)
        if live is not None:
            self._seen_utterance = live
        return self._seen_utterance

    def done(self) -> bool:
        """Whether the episode is over (the page scored it, or the step limit was reached)."""
        return bool(self._history) and self._history[-1].step.done

    def success(self) -> bool:
        """Whether the episode ended in success (the env's rule: strict or partial)."""
        return self.done() and bool(self._history[-1].step.info.get("success", False))

    def feedback(self) -> str:
        """The feedback log: each action done or failed, then the episode's result."""
        lines = []
        for number, entry in enumerate(self._history, 1):
            verdict = "Action done." if entry.ok else f"Action failed: {_reason(entry.message)}"
            lines.append(f"obs_{number}: Act: {entry.call}. Obs: {verdict}")
        if self.done():
            lines.append(self._result())
        return "\n".join(lines)

    # -- internals -----------------------------------------------------------------------

    def _send(self, verb: str, argument: str) -> str:
        action = f"{verb}({argument!r})"  # the call form round-trips any string exactly
        step = self._call(_step, action)
        shown = argument if len(argument) <= _SHOWN_CHARS else argument[:_SHOWN_CHARS] + "..."
        entry = CodeStep(f"agent.{verb}({shown!r})", action, step)
        self._history.append(entry)
        if self._raise and not entry.ok and not step.done:
            raise ActionFailed(f"{entry.call} failed: {_reason(entry.message)}")
        head, html = split_page(step.observation)
        if html is None:
            return head
        self._seen_html = html
        for line in head.splitlines():
            if line.startswith("Task: "):
                self._seen_utterance = line.removeprefix("Task: ")
        return html

    def _result(self) -> str:
        info = self._history[-1].step.info
        text = f"The epoch is done. Succeed: {bool(info.get('success', False))}"
        if "raw_reward" in info:
            text += f" (reward {info['reward']:.2f}, raw reward {info['raw_reward']:.2f})"
        elif info.get("truncated"):
            text += " (the step limit was reached)"
        return text + "."

    def _call(self, fn: Callable[..., R], *args: Any) -> R:
        """``fn(env, *args)`` where the env lives, waiting for it on this thread."""
        return call_blocking(self._env, self._loop, fn, *args, who="this MiniWoBCodeApi")


def _reason(message: str) -> str:
    return message.removeprefix("Failed: ").strip() or "the env gave no reason"


# Env-side functions: module-level, so a process env can receive them by reference.


def _web(env: TextEnv) -> MiniWoBEnv:
    if not isinstance(env, MiniWoBEnv):
        raise TypeError(f"MiniWoBCodeApi needs a MiniWoBEnv, got {type(env).__name__}")
    return env


def _step(env: TextEnv, action: str) -> Step:
    return _web(env).step(action)


def _html(env: TextEnv) -> str | None:
    web = _web(env)
    page = web._page  # the env's live page; None between episodes
    return None if page is None else page.html(web.html_view)


def _utterance(env: TextEnv) -> str | None:
    page = _web(env)._page
    return None if page is None else page.utterance()
