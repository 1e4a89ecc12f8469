"""How an AutoManual episode is shown: the planner's turns and the builder's
changes to the rules (``lorekit show`` here, the report in ``report_view.js``).

A planner episode is read like a notebook: each turn's analysis, the rules it
named, its plan, its code and what running the code gave back, then the
outcome and the planner's conclusion. A build episode adds the builder's
verdict (imperfect rules or agent), every rule call it made with the rule
system's answer or refusal, and the consolidator's merge when one ran.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.syntax import Syntax

from lorekit.agents.views import NotesView

TEXT_CHARS = 1_500


def _cut(text: object, limit: int = TEXT_CHARS) -> str:
    s = str(text or "").strip()
    return s if len(s) <= limit else s[: limit - 20] + f"\n... [{len(s) - limit + 20} more]"


def render_planner(data: Mapping[str, Any], console: Console) -> None:
    """The planner's turns, outcome and conclusion (``notes["automanual"]``)."""
    turns = data.get("turns") or []
    console.print(
        f"[bold]AutoManual planner[/bold]  type={escape(str(data.get('task_type')))}  "
        f"turns={len(turns)}  outcome=[bold]{escape(str(data.get('outcome')))}[/bold]"
    )
    for number, turn in enumerate(turns, 1):
        if not isinstance(turn, Mapping):
            continue
        head = f"turn {number}"
        if turn.get("error"):
            head += f"  [red]{escape(str(turn['error']))}[/red]"
        head += f"  actions={turn.get('actions', 0)}"
        console.print(f"\n[bold cyan]{head}[/bold cyan]")
        if turn.get("analysis"):
            console.print(f"[dim]analysis:[/dim] {escape(_cut(turn['analysis'], 600))}")
        if turn.get("related_rules"):
            console.print(f"[dim]rules:[/dim] {escape(', '.join(map(str, turn['related_rules'])))}")
        if turn.get("plan"):
            console.print(f"[dim]plan:[/dim] {escape(_cut(turn['plan'], 600))}")
        code = str(turn.get("code") or "")
        if code.strip():
            console.print(Syntax(_cut(code, 4_000), "python", line_numbers=True, word_wrap=True))
        console.print(Panel(escape(_cut(turn.get("feedback"))), title="feedback", expand=False))
    conclusion = data.get("conclusion")
    if conclusion:
        console.print(Panel(escape(_cut(conclusion, 3_000)), title="conclusion", expand=False))


def render_build(data: Mapping[str, Any], console: Console) -> None:
    """The builder's verdict and rule calls, and the consolidator's (``notes["build"]``)."""
    console.print(
        f"\n[bold]AutoManual build[/bold] {escape(str(data.get('build_id')))}  "
        f"variant={data.get('variant')}  rules v{data.get('rules_version_before')} -> "
        f"v{data.get('rules_version_after')}  ({data.get('rule_count')} rules)"
    )
    for part in ("builder", "consolidator"):
        report = data.get(part)
        if not isinstance(report, Mapping):
            continue
        line = f"[bold]{part}[/bold]"
        if part == "builder":
            line += f"  diagnosis={report.get('diagnosis')}  case={report.get('case')}"
        else:
            line += f"  rules {report.get('before')} -> {report.get('after')}"
            if report.get("over_limit"):
                line += "  [yellow]still over the limit[/yellow]"
        console.print(line)
        dialogue = report.get("dialogue") or {}
        for refused in dialogue.get("refused_blocks") or []:
            console.print(f"  [red]refused block[/red] {escape(_cut(refused, 400))}")
        for call in dialogue.get("calls") or []:
            if not isinstance(call, Mapping):
                continue
            src = escape(_cut(call.get("source"), 160).replace("\n", " "))
            if call.get("error"):
                console.print(f"  [red]x[/red] {src}  [red]{escape(str(call['error']))}[/red]")
            else:
                console.print(
                    f"  [green]ok[/green] {src}  -> {escape(_cut(call.get('result'), 120))}"
                )
        if report.get("failed"):
            console.print(f"  [yellow]{escape(str(report['failed']))}[/yellow]")
    retired = data.get("retired")
    if retired:
        console.print(f"retired task types: {escape(', '.join(map(str, retired)))}")


def render_automanual(notes: Mapping[str, Any], console: Console) -> None:
    """Everything AutoManual left in an episode's notes (nothing if it left nothing)."""
    planner = notes.get("automanual")
    if isinstance(planner, Mapping):
        render_planner(planner, console)
    build = notes.get("build")
    if isinstance(build, Mapping):
        render_build(build, console)
    if notes.get("manual"):
        console.print(f"manual: {escape(str(notes['manual']))}")


class AutoManualView:
    """AutoManual's notes: the planner's turns, a build's rule changes, the manual used."""

    name = "automanual"
    report_script = "lorekit.agents.automanual:report_view.js"

    def claims(self, notes: Mapping[str, Any]) -> bool:
        return (
            isinstance(notes.get("automanual"), Mapping)
            or isinstance(notes.get("build"), Mapping)
            or bool(notes.get("manual"))
        )

    def goal(self, notes: Mapping[str, Any]) -> str | None:
        return None

    def header(self, notes: Mapping[str, Any]) -> str | None:
        return None

    def show(self, notes: Mapping[str, Any], console: Console) -> None:
        render_automanual(notes, console)


VIEW: NotesView = AutoManualView()
