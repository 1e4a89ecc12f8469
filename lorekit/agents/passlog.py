"""One graph pass as SPRING and the AgentKit agents keep it in their trajectory notes.

The run store already holds every model call with its whole prompt, so a
step's note keeps what a reader of ``lorekit show`` needs to follow the
reasoning: each question's answer (cut to ``ANSWER_CHARS``), its status, the
answers the action check refused and why, tokens and latency. Past the
agent's ``note_steps`` the answers are left out, so that a 10,000-step
episode does not carry tens of megabytes of notes.
"""

from __future__ import annotations

from typing import Any

from lorekit.graph import PassReport
from lorekit.graph.compose import render_value

ANSWER_CHARS = 1_200


def _cut(text: str, limit: int = ANSWER_CHARS) -> str:
    return (
        text if len(text) <= limit else text[: limit - 15] + f" [+{len(text) - limit + 15} chars]"
    )


def pass_note(report: PassReport, *, answers: bool = True) -> list[dict[str, Any]]:
    """Each node of the pass in commit order: key, status, answer, refusals, cost.

    ``answers=False`` leaves the answers out (status, refusals and cost stay):
    a long episode's notes then stay small, and the answers are still in the
    run store's call records.
    """
    nodes = []
    for trace in report.traces:
        answer = trace.answer if answers else None
        output = None if trace.output is None else render_value(trace.output)
        nodes.append(
            {
                "key": trace.key,
                "status": trace.status,
                "answer": _cut(answer) if answer is not None else None,
                # the parsed result, where it is not simply the answer (the action node)
                "output": _cut(output)
                if output is not None and output != (trace.answer or "").strip()
                else None,
                "rejected": [
                    {"answer": _cut(a.answer or "", 300), "why": a.rejected}
                    for a in trace.attempts
                    if a.rejected
                ],
                "error": trace.error,
                "tokens": trace.prompt_tokens + trace.completion_tokens,
                "latency_s": round(trace.latency_s, 4),
            }
        )
    return nodes


def graph_shape(deps: dict[str, tuple[str, ...]]) -> dict[str, list[str]]:
    """The DAG as plain JSON: node -> the nodes whose answers it sees."""
    return {key: list(d) for key, d in deps.items()}
