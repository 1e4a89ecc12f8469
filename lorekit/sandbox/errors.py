"""Typed errors for every way model-written code can be rejected or stopped.

A run of untrusted code never raises these at the caller: they are *values*
stored in ``SandboxResult.error`` so an agent can show them to the model and
carry on. They are still real exceptions, so ``result.raise_for_error()`` and
``compile_predicate`` can raise them and callers can catch a whole family
(``except LimitExceeded``) at once. The child process reports an error by its
``kind`` (the class name); :func:`error_from_kind` maps it back to a class, so
a child can never make the parent instantiate anything else.
"""

from __future__ import annotations

from typing import ClassVar


class SandboxError(Exception):
    """Base class: something about a sandboxed run went wrong.

    ``line`` is the 1-based line in ``where`` (``"code"``, ``"preload[0]"``,
    ...) and ``source_line`` its text, when the error can be pinned to one.
    ``exc_type`` names the Python exception the code raised, if any.
    """

    kind: ClassVar[str] = "SandboxError"

    def __init__(
        self,
        message: str,
        *,
        line: int | None = None,
        source_line: str | None = None,
        exc_type: str | None = None,
        where: str | None = None,
    ) -> None:
        self.message = message
        self.line = line
        self.source_line = source_line
        self.exc_type = exc_type
        self.where = where
        super().__init__(self.describe())

    def describe(self) -> str:
        """One line: kind or exception type, message, and where it happened."""
        head = self.exc_type or type(self).kind
        place = ""
        if self.line is not None:
            place = f" (line {self.line}" + (f" of {self.where}" if self.where else "") + ")"
        return f"{head}: {self.message}{place}"


class CodeError(SandboxError):
    """The code itself raised an exception (including ``SyntaxError``)."""

    kind = "CodeError"


class AssertionFailed(CodeError):
    """An ``assert`` in the code failed; ``message`` holds its text or source."""

    kind = "AssertionFailed"


class PolicyViolation(SandboxError):
    """The code tried something the sandbox policy forbids."""

    kind = "PolicyViolation"


class ForbiddenImport(PolicyViolation):
    """An import of a module outside the allowlist."""

    kind = "ForbiddenImport"


class ForbiddenSyntax(PolicyViolation):
    """The syntax tree uses a construct the policy rejects (e.g. ``x.__class__``)."""

    kind = "ForbiddenSyntax"


class ForbiddenOperation(PolicyViolation):
    """A blocked operation: file access outside the work dir, sockets, processes."""

    kind = "ForbiddenOperation"


class ApiCallRejected(PolicyViolation):
    """An API call named an unknown method or passed arguments of the wrong type."""

    kind = "ApiCallRejected"


class LimitExceeded(SandboxError):
    """A resource limit stopped the run."""

    kind = "LimitExceeded"


class TimeLimitExceeded(LimitExceeded):
    """The wall-clock limit passed."""

    kind = "TimeLimitExceeded"


class CpuLimitExceeded(LimitExceeded):
    """The CPU-time limit passed."""

    kind = "CpuLimitExceeded"


class MemoryLimitExceeded(LimitExceeded):
    """The code asked for more memory than the limit allows."""

    kind = "MemoryLimitExceeded"


class OutputLimitExceeded(LimitExceeded):
    """The code printed more than the output limit."""

    kind = "OutputLimitExceeded"


class ActionBudgetExceeded(LimitExceeded):
    """The code made more API calls than the action budget allows."""

    kind = "ActionBudgetExceeded"


class SandboxCrashed(SandboxError):
    """The child process died without reporting (signal or abnormal exit)."""

    kind = "SandboxCrashed"


class WorkerKilled(SandboxCrashed):
    """A signal that no limit of the run sent killed the worker (another process, or the code)."""

    kind = "WorkerKilled"


class ProtocolViolation(SandboxError):
    """The child sent a malformed, oversized or unexpected message and was killed."""

    kind = "ProtocolViolation"


class SandboxUnavailable(SandboxError):
    """No worker process could be started; raised to the caller, never stored."""

    kind = "SandboxUnavailable"


class NoOSSandbox(SandboxUnavailable):
    """Workers would run without the OS layer, and nobody asked for that by name.

    Raised instead of starting a worker behind the in-process guard alone:
    ``message`` is one line saying what is missing, how to get it and the
    option that accepts the risk (``unsafe_no_os_sandbox``).
    """


class PredicateRejected(SandboxError):
    """``compile_predicate`` refused the source; ``line`` points at the culprit."""

    kind = "PredicateRejected"


class PredicateError(SandboxError):
    """A compiled predicate raised while being called."""

    kind = "PredicateError"


_REPORTABLE: dict[str, type[SandboxError]] = {
    cls.kind: cls
    for cls in (
        CodeError,
        AssertionFailed,
        PolicyViolation,
        ForbiddenImport,
        ForbiddenSyntax,
        ForbiddenOperation,
        ApiCallRejected,
        TimeLimitExceeded,
        CpuLimitExceeded,
        MemoryLimitExceeded,
        OutputLimitExceeded,
        ActionBudgetExceeded,
    )
}


def error_from_kind(kind: str) -> type[SandboxError]:
    """The class for a kind a child reported; unknown kinds are protocol errors."""
    cls = _REPORTABLE.get(kind)
    if cls is None:
        raise KeyError(kind)
    return cls
