"""Which models answered a ``reproduce run``, worded so that no one takes a check for
a reproduction.

A run with scripted models (``--simulate``) or with the bundled small model
(``--model local``) checks the plumbing: every row plays, every prompt parses,
the comparison is drawn. Its figures say nothing about the paper's method, so
the printed table, the saved JSON and Markdown all carry what answered and,
for these two, that the run is not a reproduction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

NOT_A_REPRODUCTION = "NOT a reproduction: a check that every row plays end to end"


@dataclass(frozen=True, slots=True)
class Answered:
    """What answered: ``kind`` is ``simulated``, ``local``, ``model`` or ``none``."""

    kind: str
    text: str

    @property
    def reproduction(self) -> bool:
        """Whether the figures can stand for a model's (a real model answered)."""
        return self.kind == "model"

    def marked(self, texts: list[str]) -> list[str]:
        """A printed cell's texts, its verdict (the last) saying which models gave it
        when they were not real ones: ``compatible (simulated)``."""
        if self.reproduction or self.kind == "none" or texts[-1] == "-":
            return texts
        return [*texts[:-1], f"{texts[-1]} ({self.kind})"]

    def line(self) -> str:
        """The sentence printed above the table and saved with it."""
        if self.reproduction or self.kind == "none":
            return f"models that answered here: {self.text}"
        return f"models that answered here: {self.text}; {NOT_A_REPRODUCTION}"


def simulated(descriptions: Mapping[str, str]) -> Answered:
    """Scripted models answered; ``descriptions`` maps each row to its models."""
    by_model: dict[str, list[str]] = {}
    for row, text in descriptions.items():
        by_model.setdefault(text, []).append(row)
    parts = [f"{text} (rows {', '.join(rows)})" for text, rows in by_model.items()]
    return Answered("simulated", "scripted models (--simulate): " + "; ".join(parts))


def from_config(
    cfg: Any, rows_need_model: Sequence[bool], answered: Sequence[Mapping[str, Any]] = ()
) -> Answered:
    """The roles of the run config, marking any served by the bundled small model.

    ``answered`` (:meth:`~lorekit.eval.store_read.StoreReader.models_answered` over the
    rows' runs) names what the calls actually met: the model each role requested, the
    one the server answered as when it said another, and the endpoint, so the table
    never passes a server's other model off as the configured one."""
    from lorekit.cli.local_model import served_here
    from lorekit.eval.report import models_answered_text

    if not any(rows_need_model):
        return Answered("none", "none (agents without a model)")
    kinds = set()
    parts = []
    for role, s in cfg.roles.items():
        if served_here(s.base_url):
            kinds.add("local")
            parts.append(f"{role}=local ({s.model}, the bundled small model)")
        else:
            kinds.add("simulated" if s.provider == "scripted" else "model")
            parts.append(f"{role}={s.provider}:{s.model}")
    kind = next((k for k in ("simulated", "local") if k in kinds), "model")
    if answered and kind == "model":
        parts = models_answered_text(answered)
    return Answered(kind, ", ".join(parts))
