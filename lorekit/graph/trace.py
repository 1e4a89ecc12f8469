"""What a pass did, node by node, and how model calls are tagged with their node.

Every node evaluated in a pass leaves a :class:`NodeTrace`: the composed
messages, each attempt's answer and the reason it was rejected, the parsed
output, tokens and latency. A trace is plain JSON data (``to_dict``), so an
agent can put ``report.to_dict()`` in its trajectory notes and the run store
keeps it with the episode.

The run store also gets every model call through the roles' ``MeteredLLM``
sink. :func:`node_model` rewraps such a model per node attempt so that its
call records carry ``meta={"node": key, "attempt": i, "graph": name}``: a user
reading ``lorekit runs export`` can tell which node made which call.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from lorekit.graph.values import render_value
from lorekit.llm.accounting import MeteredLLM
from lorekit.llm.ask import Attempt
from lorekit.llm.base import LLM, Completion, Usage
from lorekit.llm.calls import CallRecord, CallSink

TraceStatus = Literal["ok", "failed", "skipped", "blocked"]


@dataclass(slots=True)
class AttemptTrace:
    """One model call of a node and what became of its answer."""

    answer: str | None
    rejected: str | None = None
    error: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cached: bool = False
    usage_estimated: bool = False

    @classmethod
    def of(cls, completion: Completion, latency_s: float) -> AttemptTrace:
        u = completion.usage
        return cls(
            completion.text,
            prompt_tokens=u.prompt_tokens,
            completion_tokens=u.completion_tokens,
            latency_s=latency_s,
            cached=completion.cached,
            usage_estimated=u.estimated,
        )

    @classmethod
    def from_attempt(cls, attempt: Attempt) -> AttemptTrace:
        """The trace of one attempt of :func:`lorekit.llm.ask` (a refused one says why)."""
        if attempt.model_error is not None:
            error = attempt.model_error
            return cls.failed(error, error.usage, attempt.latency_s)
        assert attempt.completion is not None  # an attempt has an answer or a model error
        trace = cls.of(attempt.completion, attempt.latency_s)
        if attempt.error is not None:
            trace.rejected = attempt.error.feedback
        return trace

    @classmethod
    def failed(cls, error: Exception, billed: Usage | None, latency_s: float) -> AttemptTrace:
        """A failed model call, with the tokens the server billed for it if any."""
        u = billed if billed is not None else Usage()
        return cls(
            None,
            error=str(error),
            prompt_tokens=u.prompt_tokens,
            completion_tokens=u.completion_tokens,
            latency_s=latency_s,
            usage_estimated=u.estimated,
        )


@dataclass(slots=True)
class NodeTrace:
    """One node in one pass. ``status``: ``ok``, ``failed`` (retries spent or model
    error), ``skipped`` (reused its last result) or ``blocked`` (a dependency failed).
    Times are seconds since the pass started."""

    key: str
    role: str
    status: TraceStatus = "ok"
    messages: list[dict[str, str]] = field(default_factory=list)
    attempts: list[AttemptTrace] = field(default_factory=list)
    output: Any = None
    error: str | None = None
    temporary: bool = False
    started_s: float = 0.0
    ended_s: float = 0.0
    commit_index: int = -1

    @property
    def retries(self) -> int:
        return max(0, len(self.attempts) - 1)

    @property
    def answer(self) -> str | None:
        """The last answer the model gave."""
        return self.attempts[-1].answer if self.attempts else None

    @property
    def prompt_tokens(self) -> int:
        return sum(a.prompt_tokens for a in self.attempts)

    @property
    def completion_tokens(self) -> int:
        return sum(a.completion_tokens for a in self.attempts)

    @property
    def latency_s(self) -> float:
        return sum(a.latency_s for a in self.attempts)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["output"] = _jsonable(self.output)
        d.update(
            answer=self.answer,
            retries=self.retries,
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            latency_s=self.latency_s,
        )
        return d


@dataclass(slots=True)
class PassReport:
    """One evaluation pass: traces in commit order, and how long it took."""

    graph: str
    sequential: bool
    traces: list[NodeTrace] = field(default_factory=list)
    wall_s: float = 0.0

    @property
    def order(self) -> list[str]:
        return [t.key for t in self.traces]

    def trace(self, key: str) -> NodeTrace:
        for t in self.traces:
            if t.key == key:
                return t
        raise KeyError(f"no trace for node {key!r} in this pass (traced: {self.order})")

    @property
    def failed(self) -> list[NodeTrace]:
        return [t for t in self.traces if t.status in ("failed", "blocked")]

    def to_dict(self) -> dict[str, Any]:
        return {
            "graph": self.graph,
            "sequential": self.sequential,
            "wall_s": self.wall_s,
            "nodes": [t.to_dict() for t in self.traces],
        }


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return _jsonable(to_dict())
    return render_value(value)


class _TaggingSink:
    """Adds node tags to each record before handing it on."""

    __slots__ = ("meta", "sink")

    def __init__(self, sink: CallSink, meta: dict[str, Any]) -> None:
        self.sink = sink
        self.meta = meta

    def __call__(self, record: CallRecord) -> None:
        record.meta.update(self.meta)
        self.sink(record)


def node_model(llm: LLM, meta: dict[str, Any]) -> LLM:
    """``llm`` such that the call records it emits carry ``meta``.

    Only a :class:`MeteredLLM` with a sink emits records; it is rebuilt around
    the same inner model and ledger with a tagging sink, so accounting is
    unchanged. Anything else is returned as is (there is nothing to tag).
    """
    if isinstance(llm, MeteredLLM) and llm.sink is not None:
        return MeteredLLM(llm.inner, llm.role, llm.ledger, _TaggingSink(llm.sink, meta))
    return llm
