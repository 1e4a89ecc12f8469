"""Print one recorded episode: what it was, what was done, what the models cost,
and what the agent itself recorded (its notes, printed by the agent's own view:
:mod:`lorekit.agents.views`).

Everything comes from the run store, so an episode can be inspected long after
the run (and from another process while the run is still going).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table

from lorekit.agents.views import NotesView, claiming, mark, view_goal, view_header
from lorekit.eval.report import usage_notes
from lorekit.eval.store import EpisodeRecord, RunStore
from lorekit.llm.accounting import tokens_label
from lorekit.tables import fit_table, say_left_out

OBSERVATION_CHARS = 100


def find_episode(store: RunStore, run_id: str, episode: str | int) -> EpisodeRecord:
    """An episode by index (``3`` or ``"3"``), by key (``"stick/0"``) or by task id."""
    episodes = store.episodes(run_id)
    text = str(episode)
    # ASCII digits only ("²" is a digit to isdigit, not to int), and few of them: an
    # index of 5,000 digits is no index (and int() refuses to read it).
    if text.isascii() and text.isdigit() and len(text) <= 18:
        for e in episodes:
            if e.index == int(text):
                return e
    for e in episodes:
        if e.episode_key == text:
            return e
    for e in episodes:
        if e.task_id == text:
            return e
    hint = ", ".join(e.episode_key for e in episodes[:5]) or "none recorded"
    raise LookupError(
        f"run {run_id!r} has no episode {text!r}; give an index (0..{len(episodes) - 1}), "
        f"a key or a task id (keys: {hint}{', ...' if len(episodes) > 5 else ''})"
    )


def render_episode(store: RunStore, run_id: str, episode: str | int, console: Console) -> None:
    """Print an episode's header, steps, model-call summary and then, through each
    view that claims the episode's notes, what the agent recorded (a decomposition
    tree, trials, graph passes, a team's timeline, ...).

    Raises :class:`LookupError` (unknown episode) or ``UnknownRunError``.
    """
    rec = find_episode(store, run_id, episode)
    notes: Mapping[str, Any] = rec.info.get("notes") or {}
    views = claiming(notes)
    _header(rec, notes, views, console)
    _steps(store, rec, console)
    _calls(store, rec, console)
    for view in views:
        view.show(notes, console)


def _header(
    rec: EpisodeRecord, notes: Mapping[str, Any], views: list[NotesView], console: Console
) -> None:
    goal = next((g for v in views if (g := view_goal(v, notes))), None)
    console.print(
        f"[bold]{escape(rec.episode_key)}[/bold]  task={escape(str(rec.task_id))}"
        + (f" ({escape(str(goal))})" if goal else "")
        + f"  group={rec.task_group}  seed={rec.seed}"
    )
    line = (
        f"status={rec.status}  success={mark(rec.success)}  reward={rec.reward:g}  "
        f"steps={rec.steps}  wall={rec.wall_s:.2f}s"
    )
    if rec.info.get("stop_reason"):
        line += f"  stop={rec.info['stop_reason']}"
    console.print(line)
    for view in views:
        extra = view_header(view, notes)
        if extra:
            console.print(extra)
    if rec.error:
        console.print(f"[red]error:[/red] {escape(rec.error)}")
    first = rec.info.get("initial_observation")
    if isinstance(first, str) and first:
        console.print(Panel(escape(first), title="initial observation", expand=False))


def _steps(store: RunStore, rec: EpisodeRecord, console: Console) -> None:
    steps = store.steps(rec.run_id, rec.episode_key)
    if not steps:
        console.print("no steps recorded")
        return
    table = Table("#", "action", "observation", "reward", "valid", title="steps")
    for s in steps:
        obs = s.observation.replace("\n", " ")
        if len(obs) > OBSERVATION_CHARS:
            obs = obs[: OBSERVATION_CHARS - 3] + "..."
        table.add_row(
            str(s.idx), escape(s.action), escape(obs), f"{s.reward:g}", mark(s.info.get("valid"))
        )
    fit_table(console, table, keep=("#", "reward", "valid"))
    console.print(table)


def _calls(store: RunStore, rec: EpisodeRecord, console: Console) -> None:
    calls = store.llm_calls(rec.run_id, rec.episode_key)
    if not calls:
        console.print("no model calls recorded")
        return
    rows: dict[str, dict[str, float]] = {}
    for c in calls:
        row = rows.setdefault(c["role"], dict.fromkeys(_CALL_KEYS, 0))
        spent = not c["cached"]  # a cache hit cost nothing this time
        row["calls"] += 1
        row["prompt_tokens"] += c["prompt_tokens"] if spent else 0
        row["completion_tokens"] += c["completion_tokens"] if spent else 0
        row["latency_s"] += c["latency_s"]
        row["errors"] += c["error"] is not None
        row["cache_hits"] += c["cached"]
        row["error_tokens"] += (
            c["prompt_tokens"] + c["completion_tokens"] if c["error"] is not None else 0
        )
        row["estimated_calls"] += bool(c.get("usage_estimated")) and spent
    table = Table(
        "role",
        "calls",
        "prompt tok",
        "completion tok",
        "latency s",
        "errors",
        "failed-call tok",
        "cache hits",
    )
    for role, r in sorted(rows.items()):
        guessed = r["estimated_calls"] > 0
        table.add_row(
            escape(role),
            str(int(r["calls"])),
            tokens_label(int(r["prompt_tokens"]), guessed),
            tokens_label(int(r["completion_tokens"]), guessed),
            f"{r['latency_s']:.2f}",
            str(int(r["errors"])),
            tokens_label(int(r["error_tokens"]), guessed and r["error_tokens"] > 0),
            str(int(r["cache_hits"])),
        )
    table.title = "model calls"
    left_out = fit_table(
        console,
        table,
        keep=("role", "calls", "prompt tok", "completion tok"),
        drop=("failed-call tok", "cache hits", "latency s", "errors"),
    )
    console.print(table)
    say_left_out(console, left_out)
    counts = [{k: int(v) for k, v in r.items()} for r in rows.values()]
    for note in usage_notes(counts):
        console.print(note, highlight=False)


_CALL_KEYS = (
    "calls",
    "prompt_tokens",
    "completion_tokens",
    "latency_s",
    "errors",
    "error_tokens",
    "cache_hits",
    "estimated_calls",
)
