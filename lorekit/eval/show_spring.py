"""How ``lorekit show`` prints a SPRING episode: each step's questions and answers.

The agent leaves ``notes["spring"]``: the context variant, the question graph
(node -> the nodes whose answers it sees) and, per step, every node's answer,
the answers the action check refused and why, and whether the step fell back
to ``noop``. Printed step by step so a reader can follow why each action was
chosen, and see at once where the model's answers were unusable.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.markup import escape

ANSWER_CHARS = 300


def _cut(text: object, limit: int = ANSWER_CHARS) -> str:
    s = " ".join(str(text or "").split())
    return s if len(s) <= limit else s[: limit - 3] + "..."


def render_spring(
    notes: Mapping[str, Any], console: Console, *, key: str = "spring", title: str = "SPRING"
) -> None:
    """Everything the SPRING agent left in an episode's notes (nothing if it left nothing).

    The AgentKit agents leave the same shape under ``notes["agentkit"]``
    (``key="agentkit"``), so one renderer prints every graph agent's passes."""
    data = notes.get(key)
    if not isinstance(data, Mapping):
        return
    steps = [s for s in data.get("steps") or [] if isinstance(s, Mapping)]
    context = f"context={escape(str(data['context']))}  " if data.get("context") else ""
    console.print(
        f"\n[bold]{escape(title)}[/bold]  {context}"
        f"graph={escape(str(data.get('graph')))}  passes={len(steps)}  "
        f"fallbacks={data.get('fallbacks', 0)}"
    )
    dag = data.get("dag")
    if isinstance(dag, Mapping):
        order = "  ".join(
            f"{escape(str(k))}<-{','.join(map(str, v))}" if v else escape(str(k))
            for k, v in dag.items()
        )
        console.print(f"[dim]questions: {order}[/dim]")
    for step in steps:
        head = f"step {step.get('step')} -> [bold]{escape(str(step.get('action')))}[/bold]"
        if step.get("asleep"):
            head += "  [dim](asleep: not asked, crafter ignores actions)[/dim]"
        elif step.get("fallback"):
            head += f"  [yellow]fallback: {escape(_cut(step.get('reason'), 200))}[/yellow]"
        elif step.get("reason"):
            head += f"  [red]{escape(_cut(step.get('reason'), 200))}[/red]"
        console.print(f"\n[bold cyan]{head}[/bold cyan]")
        for node in step.get("nodes") or []:
            if not isinstance(node, Mapping):
                continue
            key = escape(str(node.get("key")))
            status = str(node.get("status"))
            mark = "" if status == "ok" else f" [red]({escape(status)})[/red]"
            answer = node.get("answer")
            shown = escape(_cut(answer)) if answer is not None else "[dim](not kept)[/dim]"
            console.print(f"  [dim]{key}[/dim]{mark}: {shown}")
            for refused in node.get("rejected") or []:
                if isinstance(refused, Mapping):
                    console.print(
                        f"    [red]refused[/red] {escape(_cut(refused.get('answer'), 80))}: "
                        f"{escape(_cut(refused.get('why'), 160))}"
                    )
            if node.get("error"):
                console.print(f"    [red]{escape(_cut(node.get('error'), 200))}[/red]")
