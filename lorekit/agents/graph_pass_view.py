"""How a graph agent's episode is shown: each step's questions and answers.

SPRING leaves ``notes["spring"]`` and the AgentKit agents ``notes["agentkit"]``
(both written by :mod:`lorekit.agents.graph_pass`): the context variant, the
question graph (node -> the nodes whose answers it sees) and, per step, every
node's answer, the answers the action check refused and why, and whether the
step fell back to ``noop``. ``lorekit show`` prints them step by step so a
reader can follow why each action was chosen, and see at once where the
model's answers were unusable; the report (``graph_pass_view.js``) draws any
graph pass (a list of node traces) it finds in the notes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.markup import escape

from lorekit.agents.views import NotesView

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


#: The notes keys of the graph agents, with the title ``lorekit show`` gives each.
GRAPH_AGENTS: tuple[tuple[str, str], ...] = (("spring", "SPRING"), ("agentkit", "AgentKit"))


def has_graph_pass(value: object, depth: int = 0) -> bool:
    """Whether a graph pass (a mapping whose ``nodes`` are all ``{key, status, ...}``)
    sits in ``value``, three levels deep at most and not under a ``tree`` key:
    what the report's script looks for."""
    if depth > 3:
        return False
    if isinstance(value, Mapping):
        nodes = value.get("nodes")
        if (
            isinstance(nodes, list)
            and nodes
            and all(isinstance(n, Mapping) and "key" in n and "status" in n for n in nodes)
        ):
            return True
        return any(has_graph_pass(v, depth + 1) for k, v in value.items() if k != "tree")
    if isinstance(value, list):
        return any(has_graph_pass(v, depth + 1) for v in value)
    return False


class GraphPassView:
    """The graph agents' notes (SPRING, AgentKit): one pass of the question graph per step."""

    name = "graph-pass"
    report_script = "lorekit.agents:graph_pass_view.js"

    def claims(self, notes: Mapping[str, Any]) -> bool:
        return any(isinstance(notes.get(k), Mapping) for k, _ in GRAPH_AGENTS) or has_graph_pass(
            notes
        )

    def goal(self, notes: Mapping[str, Any]) -> str | None:
        return None

    def header(self, notes: Mapping[str, Any]) -> str | None:
        return None

    def show(self, notes: Mapping[str, Any], console: Console) -> None:
        for key, title in GRAPH_AGENTS:
            render_spring(notes, console, key=key, title=title)


VIEW: NotesView = GraphPassView()
