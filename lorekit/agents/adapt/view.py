"""How an ADaPT-family episode is shown: its decomposition tree and its trials.

ADaPT and Plan-and-Execute keep the whole tree in ``notes["tree"]`` (each
node's task, depth, outcome, the executor's claim against the environment's
verdict, the plan and any rejected plans); Try-Again and Reflexion keep one
entry per attempt in ``notes["trials"]``. All of them record the method, the
model calls spent against the budget and the depth reached, shown in the
episode's header. The report's drawing of the same notes is ``report_view.js``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.tree import Tree

from lorekit.agents.views import NotesView, mark


def _said(claim: object) -> str:
    if claim is True:
        return "completed"
    return "failed" if claim is False else "nothing"


def _label(node: Mapping[str, Any]) -> str:
    ex = node.get("executor")
    text = f"[bold]d{node.get('depth')}[/bold] {escape(str(node.get('task')))}  -> "
    text += mark(node.get("success")) if node.get("success") is not None else "interrupted"
    if isinstance(ex, Mapping):
        text += (
            f"  [dim](executor: said {_said(ex.get('claimed'))}, env {mark(ex.get('verified'))}, "
            f"stop {ex.get('stop')}, {len(ex.get('actions') or [])} actions)[/dim]"
        )
        if ex.get("overclaimed"):
            text += " [yellow]over-claimed[/yellow]"
    return text


def tree(node: Mapping[str, Any], parent: Tree | None = None) -> Tree:
    """The decomposition tree under ``node`` as a rich tree (added to ``parent`` if given)."""
    branch = Tree(_label(node)) if parent is None else parent.add(_label(node))
    plan = node.get("plan")
    if isinstance(plan, Mapping):
        if plan.get("order"):
            branch.add(
                f"[cyan]plan[/cyan] {escape(str(plan['order']))}: "
                + "; ".join(f"{i}. {escape(s)}" for i, s in enumerate(plan.get("steps", []), 1))
            )
        for err in plan.get("errors") or []:
            branch.add(f"[red]rejected plan[/red] {escape(str(err))}")
    for child in node.get("children") or []:
        if isinstance(child, Mapping):
            tree(child, branch)
    return branch


def trials_table(trials: list[Any]) -> Table:
    """One row per trial: what the executor said, what the env said, the lesson kept."""
    table = Table("trial", "said", "env", "stop", "actions", "reflection", title="trials")
    for t in trials:
        if not isinstance(t, Mapping):
            continue
        table.add_row(
            str(t.get("trial")),
            _said(t.get("claimed")),
            mark(t.get("verified")),
            str(t.get("stop")),
            str(len(t.get("actions") or [])),
            escape(str(t.get("reflection") or "")),
        )
    return table


class AdaptView:
    """The ADaPT family's notes: method line, goal, tree and trials."""

    name = "adapt"
    report_script = "lorekit.agents.adapt:report_view.js"

    def claims(self, notes: Mapping[str, Any]) -> bool:
        trials = notes.get("trials")
        return (
            isinstance(notes.get("tree"), Mapping)
            or (isinstance(trials, list) and bool(trials))
            or bool(notes.get("method"))
        )

    def goal(self, notes: Mapping[str, Any]) -> str | None:
        root = notes.get("tree")
        goal = root.get("task") if isinstance(root, Mapping) else None
        return str(goal) if goal else None

    def header(self, notes: Mapping[str, Any]) -> str | None:
        if not notes.get("method"):
            return None
        budget = notes.get("call_budget")
        calls = f"{notes.get('llm_calls')}" + (f"/{budget}" if budget is not None else "")
        profile = f"  profile={notes['profile']}" if notes.get("profile") else ""
        return (
            f"method={notes['method']}{profile}  model calls={calls}"
            f"  depth reached={notes.get('depth_reached')}"
            f"  over-claims={notes.get('overclaims', 0)}"
        )

    def show(self, notes: Mapping[str, Any], console: Console) -> None:
        root = notes.get("tree")
        if isinstance(root, Mapping):
            console.print(tree(root))
        trials = notes.get("trials")
        if isinstance(trials, list) and trials:
            console.print(trials_table(trials))
        replayed = notes.get("replay")
        if isinstance(replayed, Mapping):
            show_replay(replayed, console)


def show_replay(summary: Mapping[str, Any], console: Console) -> None:
    """A replayed episode's comparison with its record, and its divergences but the gaps."""
    found = [d for d in summary.get("divergences") or [] if isinstance(d, Mapping)]
    gaps = sum(1 for d in found if d.get("kind") == "gap")
    console.print(
        f"[bold]replay[/bold] of {escape(str(summary.get('record')))}: published "
        f"{summary.get('published')}, replayed {summary.get('replayed')}, decisions "
        f"{'taken' if summary.get('decided') else 'not all taken'}; {gaps} gap run(s)",
        highlight=False,
    )
    for d in found:
        if d.get("kind") == "gap":
            continue
        console.print(
            escape(
                f"  call {d.get('call')} {d.get('role')} ({d.get('kind')}): record has "
                f"{d.get('recorded')!r}; LoreKit: {d.get('asked')!r}"
            ),
            highlight=False,
        )


VIEW: NotesView = AdaptView()
