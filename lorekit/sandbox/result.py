"""The structured outcome of a sandboxed run, and its rendering for a model.

Agents need two views of a run: fields to branch on (did it succeed, which
limit was hit, what did each API call return) and a compact text to put back
into the model's context. ``SandboxResult`` keeps the first and renders the
second with templates from ``feedback.yaml``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from lorekit import yamlio
from lorekit.sandbox.errors import SandboxError
from lorekit.sandbox.proxy import ApiCall, shorten


@cache
def _templates() -> dict[str, Any]:
    with open(Path(__file__).with_name("feedback.yaml"), encoding="utf-8") as handle:
        data: dict[str, Any] = yamlio.safe_load(handle)
    return data


@dataclass(frozen=True)
class SandboxResult:
    """What happened when code ran in the sandbox.

    ``error`` is None on success, otherwise a typed :class:`SandboxError`
    (``CodeError``, ``AssertionFailed``, ``ForbiddenImport``,
    ``TimeLimitExceeded``, ...) with the line it happened on when known.
    ``output`` is what the code printed, at most ``Limits.max_output_chars``.
    """

    output: str
    calls: tuple[ApiCall, ...]
    error: SandboxError | None
    duration_s: float
    api_name: str = "api"

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def error_kind(self) -> str | None:
        """The error class name (``"TimeLimitExceeded"``), or None."""
        return None if self.error is None else type(self.error).kind

    def raise_for_error(self) -> None:
        """Raise the stored error, for callers that want exceptions."""
        if self.error is not None:
            raise self.error

    def feedback(
        self, *, max_calls: int = 20, max_output_chars: int = 2_000, max_chars: int = 10_000
    ) -> str:
        """A compact report for the model: status, API calls, output, error hint.

        Bounded whatever the code did: at most ``max_calls`` calls, each
        rendering cut to ``RENDER_CHARS``, the last ``max_output_chars`` of
        the output, and ``max_chars`` in all (the calls and output are cut
        first, with a marker, so the status and hint always survive).
        """
        t = _templates()
        head = [
            t["status_ok"]
            if self.error is None
            else t["status_error"].format(error=shorten(self.error.describe(), 2_500))
        ]
        if self.error is not None and self.error.source_line:
            head.append(t["source_line"].format(line=shorten(self.error.source_line.strip(), 300)))
        body: list[str] = []
        if self.calls:
            body.append(t["calls_heading"].format(n=len(self.calls)))
            shown = self.calls[-max_calls:] if max_calls > 0 else ()
            if len(self.calls) > len(shown):
                body.append(t["calls_omitted"].format(n=len(self.calls) - len(shown)))
            start = len(self.calls) - len(shown) + 1
            for i, call in enumerate(shown, start):
                body.append(f"  {i}. {call.render(self.api_name)}")
        else:
            body.append(t["calls_none"])
        if self.output:
            body.append(t["output_heading"])
            text = self.output
            if len(text) > max_output_chars:
                body.append(t["output_cut"].format(chars=max_output_chars))
                text = text[-max_output_chars:] if max_output_chars > 0 else ""
            body.append(text.rstrip("\n"))
        else:
            body.append(t["output_none"])
        tail: list[str] = []
        if self.error is not None:
            hint = t["hints"].get(type(self.error).kind)
            if hint:
                tail.append(hint)
        fixed = sum(len(line) + 1 for line in head + tail)
        middle = "\n".join(body)
        room = max(0, max_chars - fixed)
        if len(middle) > room:
            marker = t["feedback_cut"].format(chars=len(middle) - room)
            middle = middle[: max(0, room - len(marker) - 1)] + "\n" + marker
        return "\n".join([*head, middle, *tail])
