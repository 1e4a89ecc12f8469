"""Pictures of a graph: Mermaid text (pastes into Markdown, GitHub renders it) and
Graphviz DOT (turned into an image by the ``dot`` binary when it is installed).

Edge styles say how a dependency reaches the prompt: a solid arrow carries the
question and answer, a thick one the result only (shorthand), a dotted one
only the order (e.g. a gate before the nodes it controls, labelled with the
condition).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from lorekit.graph.graph import Graph
from lorekit.graph.layout import Layout
from lorekit.graph.node import Node


class GraphvizMissing(RuntimeError):
    """The ``dot`` binary is not installed, so no image can be written."""


def _caption(node: Node) -> str:
    kind = node.output if node.output != "choice" else "/".join(node.choices)
    return f"{node.key}<br/><small>{node.role} · {kind}</small>"


def _escape(text: str) -> str:
    return text.replace('"', "#quot;")


def to_mermaid(graph: Graph | Layout) -> str:
    """Mermaid ``flowchart`` text of the permanent graph (or of a layout)."""
    lay = graph.layout() if isinstance(graph, Graph) else graph
    lines = ["flowchart TD"]
    for key, node in lay.nodes.items():
        shape = ('{{"', '"}}') if node.output == "choice" else ('["', '"]')
        lines.append(f"    {_mid(key)}{shape[0]}{_escape(_caption(node))}{shape[1]}")
    for src, dst in lay.edges():
        mode = lay.mode(src, dst)
        label = lay.labels.get((src, dst))
        if label:
            left, right = {"qa": ("--", "-->"), "short": ("==", "==>"), "hidden": ("-.", ".->")}[
                mode
            ]
            arrow = f"{left} {_escape(label)} {right}"
        else:
            arrow = {"qa": "-->", "short": "==>", "hidden": "-.->"}[mode]
        lines.append(f"    {_mid(src)} {arrow} {_mid(dst)}")
    return "\n".join(lines) + "\n"


def _mid(key: str) -> str:
    return "n_" + key.replace("-", "_")


def to_dot(graph: Graph | Layout) -> str:
    """Graphviz DOT text of the permanent graph (or of a layout)."""
    lay = graph.layout() if isinstance(graph, Graph) else graph
    name = graph.name if isinstance(graph, Graph) else "graph"
    out = [f'digraph "{name}" {{', "  rankdir=TB;", '  node [shape=box, fontname="Helvetica"];']
    for key, node in lay.nodes.items():
        kind = node.output if node.output != "choice" else "/".join(node.choices)
        shape = ", shape=diamond" if node.output == "choice" else ""
        out.append(f'  "{key}" [label="{key}\\n{node.role} · {kind}"{shape}];')
    for src, dst in lay.edges():
        mode = lay.mode(src, dst)
        attrs = {"qa": [], "short": ["penwidth=2"], "hidden": ["style=dashed"]}[mode]
        label = lay.labels.get((src, dst))
        if label:
            attrs = [*attrs, f'label="{label}"']
        tail = f" [{', '.join(attrs)}]" if attrs else ""
        out.append(f'  "{src}" -> "{dst}"{tail};')
    out.append("}")
    return "\n".join(out) + "\n"


def write_image(graph: Graph | Layout, path: str | Path, *, timeout_s: float = 30.0) -> Path:
    """Render with Graphviz; the format follows the suffix (``.png``, ``.svg``, ``.pdf``)."""
    dot = shutil.which("dot")
    if dot is None:
        raise GraphvizMissing(
            "Graphviz is not installed (no 'dot' on PATH), so no image was written; "
            "install it (e.g. apt install graphviz) or paste the Mermaid text into a viewer"
        )
    p = Path(path)
    fmt = p.suffix.lstrip(".").lower() or "png"
    proc = subprocess.run(
        [dot, f"-T{fmt}", "-o", str(p)],
        input=to_dot(graph),
        text=True,
        capture_output=True,
        timeout=timeout_s,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"dot failed ({proc.returncode}): {proc.stderr.strip()[:300]}")
    return p
