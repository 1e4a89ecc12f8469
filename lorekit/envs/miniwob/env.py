"""``make("miniwob")``: MiniWoB++ task pages in a real headless Chromium.

Tasks are (task page, seed) pairs: ``click-button#17`` is the page
``click-button`` started with ``Math.seedrandom(17)``. A task list names
which pages (``automanual-53``, ``feedback-9``, ``all`` or a comma list);
each split draws its seeds per page from the env's ``seed``, so dev and test
never share an episode. Results group by page.

``pages`` names the page set (:mod:`.pagesets`): ``"farama"`` (the
default), the installed package's pages, or ``"automanual"``, the pages as
AutoManual ran them (13 of its 53 generate or score differently; AutoManual's
profile sets it). Every step's info names the set (``pages``) and the action
semantics (``actions``), so a recorded run says what it played.

The observation is the page's utterance and its HTML (``#wrap`` and any
dialog the page added), cleaned of MiniWoB's bookkeeping attributes unless
``html="raw"``; ``html="published"`` shows it as AutoManual's planner read it
(``data-wob_ref``/``data-wob_eps`` marks, hidden body children). Actions
are AutoManual's (:mod:`.actions`); after each one the env says whether it
was carried out. ``actions="published"`` gives
``type`` and ``click_xpath`` the semantics of AutoManual's published wrapper
(see :mod:`.page`; AutoManual's profile sets it), ``"plain"`` (the default)
types wherever the focus is and clicks the first match. Success is strict by default (the
page's raw reward is 1); ``success="partial"`` counts any positive reward as
AutoManual does; both verdicts are in every final step's info.

Browsers come from a process-wide :class:`~.pool.BrowserPool`; an episode
holds one from reset to its end. A browser that crashes or hangs is killed
by its call deadline, the step raises :class:`BrowserCrashed` (the harness
records an env error) and the pool starts a fresh one for the next episode.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from lorekit import yamlio
from lorekit.envs.base import Observation, Step, Task, TextEnv
from lorekit.envs.episodes import StepRules
from lorekit.envs.miniwob.actions import FORMS, ActionSyntaxError, parse_action
from lorekit.envs.miniwob.browser import Browser, BrowserCrashed
from lorekit.envs.miniwob.page import (
    ACTION_FLAVOURS,
    DEFAULT_PAGE_TIME_MS,
    HTML_VIEWS,
    Actions,
    HtmlView,
    MiniWoBPage,
    Outcome,
    page_names,
)
from lorekit.envs.miniwob.pagesets import PageSet, check_page_set, pages_root
from lorekit.envs.miniwob.pool import BrowserPool, shared_pool
from lorekit.envs.miniwob.solvers import SOLVERS, candidates, solve
from lorekit.envs.miniwob.view import View, read_view
from lorekit.envs.steplimit import manual_with_limit

TASKS_FILE = Path(__file__).with_name("tasks.yaml")
MESSAGES_FILE = Path(__file__).with_name("messages.yaml")
SPLITS = ("dev", "test")

Success = Literal["strict", "partial"]


@functools.cache
def messages() -> dict[str, Any]:
    data: dict[str, Any] = yamlio.safe_load(
        MESSAGES_FILE.read_text(encoding="utf-8"), source=str(MESSAGES_FILE)
    )
    return data


@functools.cache
def task_lists() -> dict[str, tuple[str, ...]]:
    data = yamlio.safe_load(TASKS_FILE.read_text(encoding="utf-8"), source=str(TASKS_FILE))
    lists = {str(k): tuple(str(t) for t in v) for k, v in data.items()}
    lists["all"] = registered_pages()
    return lists


@functools.cache
def registered_pages() -> tuple[str, ...]:
    """Pages with a registered gymnasium env (a few bundled pages have none)."""
    import gymnasium
    import miniwob  # noqa: F401  (registers the envs)

    names = {
        k.split("/", 1)[1].rsplit("-v", 1)[0]
        for k in gymnasium.registry
        if k.startswith("miniwob/")
    }
    return tuple(p for p in page_names() if p in names)


def resolve_tasks(tasks: str | Sequence[str]) -> tuple[str, ...]:
    """A list name or comma-separated page names -> page names (checked)."""
    if isinstance(tasks, str):
        if tasks in task_lists():
            return task_lists()[tasks]
        names = [t.strip() for t in tasks.split(",") if t.strip()]
    else:
        names = [str(t) for t in tasks]
    unknown = [n for n in names if n not in page_names()]
    if unknown or not names:
        raise ValueError(
            f"unknown MiniWoB task(s) {', '.join(unknown) or '(none)'}; give a list "
            f"({', '.join(task_lists())}) or page names like click-button"
        )
    return tuple(names)


class MiniWoBEnv(TextEnv):
    """MiniWoB++ in Chromium; see the module docstring."""

    name = "miniwob"
    execution = "thread"  # waits on the browser; the GIL is free meanwhile

    def __init__(
        self,
        tasks: str | Sequence[str] = "automanual-53",
        *,
        episodes_per_task: int = 6,
        seed: int = 0,
        success: Success = "strict",
        html: HtmlView = "clean",
        actions: Actions = "plain",
        pages: PageSet = "farama",
        page_time_ms: int | None = DEFAULT_PAGE_TIME_MS,
        max_steps: int | None = 20,
        pool: BrowserPool | None = None,
        pool_size: int | None = None,
    ) -> None:
        if success not in ("strict", "partial"):
            raise ValueError(f"success must be 'strict' or 'partial', got {success!r}")
        if html not in HTML_VIEWS:
            raise ValueError(f"html must be one of {', '.join(HTML_VIEWS)}, got {html!r}")
        if actions not in ACTION_FLAVOURS:
            raise ValueError(f"actions must be 'plain' or 'published', got {actions!r}")
        if (
            isinstance(episodes_per_task, bool)
            or not isinstance(episodes_per_task, int)
            or episodes_per_task < 1
        ):
            raise ValueError(f"episodes_per_task must be at least 1, got {episodes_per_task!r}")
        if page_time_ms is not None and (not isinstance(page_time_ms, int) or page_time_ms < 1000):
            raise ValueError(f"page_time_ms must be at least 1000 ms or None, got {page_time_ms!r}")
        self.stepping = StepRules(max_steps)  # the cap and the end: the core's rules
        self.pages = resolve_tasks(tasks)
        self.episodes_per_task = episodes_per_task
        self.seed = seed
        self.success_rule: Success = success
        self.html_view: HtmlView = html
        self.raw_html = html == "raw"
        self.actions: Actions = actions
        self.page_set: PageSet = check_page_set(pages)
        pages_root(self.page_set)  # a set that does not fit the installed pages fails here
        self.page_time_ms = page_time_ms
        self.step_limit = self.stepping.step_limit
        self.max_steps = self.stepping.max_steps
        self._pool = pool if pool is not None else shared_pool(pool_size)
        self._browser: Browser | None = None
        self._page: MiniWoBPage | None = None
        self._task: Task | None = None

    # -- catalogue ---------------------------------------------------------------------

    def splits(self) -> tuple[str, ...]:
        return SPLITS

    def tasks(self, split: str = "test") -> list[Task]:
        if split not in SPLITS:
            raise ValueError(f"unknown split {split!r}; known splits: {', '.join(SPLITS)}")
        out = []
        for page in self.pages:
            rng = random.Random(f"miniwob:{self.seed}:{split}:{page}")
            for episode_seed in rng.sample(range(1_000_000), self.episodes_per_task):
                out.append(
                    Task(f"{page}#{episode_seed}", page, page, {"page": page, "seed": episode_seed})
                )
        return out

    def action_forms(self) -> list[str]:
        return list(FORMS)

    def manual(self) -> str:
        text = messages()
        rule = str(text["rule_strict" if self.success_rule == "strict" else "rule_partial"])
        return manual_with_limit(
            {**text, "manual": str(text["manual"]).replace("{rule}", rule)}, self.step_limit
        )

    # -- episode -----------------------------------------------------------------------

    def reset(self, task: Task | str | None = None, seed: int | None = None) -> Observation:
        chosen = self._pick(task, seed)
        page_name = str(chosen.data["page"])
        episode_seed = int(chosen.data["seed"])
        self._release()
        browser = self._pool.acquire(owner=self)
        self._browser = browser
        try:
            page = MiniWoBPage(
                browser,
                page_name,
                page_time_ms=self.page_time_ms,
                actions=self.actions,
                pages=self.page_set,
            )
            page.begin(episode_seed)
            text = self._show(page)
        except BrowserCrashed:
            self._release()
            raise
        self._page = page
        self._task = chosen
        self.stepping.begin()
        return Observation(
            text,
            {"task_id": chosen.id, "page": page_name, "seed": episode_seed, **self._options()},
        )

    def _options(self) -> dict[str, str]:
        """The options that decide what an episode is, for every step's info."""
        return {"pages": self.page_set, "actions": self.actions}

    def _pick(self, task: Task | str | None, seed: int | None) -> Task:
        if isinstance(task, Task):
            if "page" in task.data and "seed" in task.data:
                return task
            task = task.id
        if task is None:
            pool = self.tasks("test")
            return pool[random.Random(seed if seed is not None else 0).randrange(len(pool))]
        page, _, number = str(task).partition("#")
        if page not in page_names():
            raise KeyError(f"unknown MiniWoB task {task!r}; ids look like 'click-button#17'")
        episode_seed = int(number) if number.isdigit() else (seed if seed is not None else 0)
        return Task(f"{page}#{episode_seed}", page, page, {"page": page, "seed": episode_seed})

    def step(self, action: str) -> Step:
        refused = self.stepping.refuse()
        if refused is not None:
            return refused
        page = self._page
        assert page is not None  # a started episode has its page until it ends
        try:
            try:
                parsed = parse_action(action)
            except ActionSyntaxError as error:
                valid, message = False, str(error)
            else:
                result = getattr(page, parsed.verb)(parsed.argument)
                valid, message = (
                    result.ok,
                    (
                        f"Done: {result.message.rstrip('.')}."
                        if result.ok
                        else f"Failed: {result.message.rstrip('.')}."
                    ),
                )
            outcome = page.outcome()
            text = message if outcome.done else f"{message}\n{self._show(page)}"
        except BrowserCrashed:
            self._release()
            self.stepping.done = True
            raise
        return self._finish(text, valid, outcome)

    def _finish(self, text: str, valid: bool, outcome: Outcome) -> Step:
        strict = outcome.done and outcome.raw_reward >= 1.0
        partial = outcome.done and outcome.reward > 0
        success = strict if self.success_rule == "strict" else partial
        info: dict[str, Any] = {"valid": valid, "success": success, **self._options()}
        if outcome.done:
            verdict = "succeeded" if success else "failed"
            text += (
                f"\nThe page ended the episode: you {verdict} (reward {outcome.reward:.2f}, "
                f"raw reward {outcome.raw_reward:.2f})."
            )
            info.update(
                reward=outcome.reward,
                raw_reward=outcome.raw_reward,
                success_strict=strict,
                success_partial=partial,
                reason=outcome.reason,
            )
        reward = (
            (outcome.raw_reward if self.success_rule == "strict" else outcome.reward)
            if outcome.done
            else 0.0
        )
        step = self.stepping.settle(Step(text, float(reward), outcome.done, info))
        if step.info["truncated"]:  # neither success rule holds for a cut-off episode
            step = Step(
                step.observation,
                step.reward,
                step.done,
                {**step.info, "success_strict": False, "success_partial": False},
            )
        if step.done:
            self._release()
        return step

    # -- expert and baseline (lorekit.envs.miniwob.solvers) ------------------------------

    def expert_action(self) -> str | None:
        """The scripted solver's next action for this page, None without one."""
        page = self._page
        if page is None or self.stepping.over or page.task not in SOLVERS:
            return None
        return solve(self._view(page))

    def candidate_actions(self) -> list[str]:
        """Clicks on the page's clickable elements plus a few types and keys."""
        page = self._page
        return [] if page is None or self.stepping.over else candidates(self._view(page))

    def _view(self, page: MiniWoBPage) -> View:
        try:
            return read_view(page)
        except BrowserCrashed:
            self._release()
            self.stepping.done = True
            raise

    def _show(self, page: MiniWoBPage) -> str:
        return f"Task: {page.utterance()}\nPage:\n{page.html(self.html_view)}"

    def _release(self) -> None:
        browser, self._browser = self._browser, None
        self._page = None
        if browser is not None:
            self._pool.release(browser)

    def end_episode(self) -> None:
        """Give the episode's browser back to the pool (the harness calls this
        after every episode, so an agent that stops early never starves it)."""
        self._release()

    def close(self) -> None:
        self._release()
