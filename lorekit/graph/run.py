"""One evaluation pass: scheduling, model calls, retries, commits.

Kept apart from :mod:`lorekit.graph.graph` so the structure and its safeguards
read on their own. The ordering guarantee is documented there; this module
implements it: model calls start as soon as a node's dependencies have
committed, and commits happen one at a time in the sequential order.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import MutableMapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from lorekit.graph.access import DbView, FrozenResults, freeze
from lorekit.graph.compose import default_compose, feedback_message
from lorekit.graph.errors import (
    AfterQueryError,
    FailureKind,
    GraphError,
    MissingValueError,
    NodeFailedError,
    NodeFailure,
    hook_name,
)
from lorekit.graph.layout import Layout
from lorekit.graph.node import (
    ComposeInput,
    DepView,
    Node,
    NodeContext,
    Parser,
    PassGraph,
)
from lorekit.graph.parsers import parser_for
from lorekit.graph.shrink import Summaries, shrink_answer
from lorekit.graph.trace import AttemptTrace, NodeTrace, PassReport, node_model
from lorekit.graph.values import present
from lorekit.llm.ask import ParseError, ask
from lorekit.llm.base import Completion, Message, RequestParams, as_messages
from lorekit.llm.roles import Roles


@dataclass(slots=True)
class PassState:
    """One pass in progress: its layout (temporary edits included) and what it produced."""

    layout: Layout
    committed: dict[str, int] = field(default_factory=dict)
    results: dict[str, Any] = field(default_factory=dict)
    questions: dict[str, str] = field(default_factory=dict)
    editor: str | None = None
    added_by_editor: set[str] = field(default_factory=set)
    absent: set[str] = field(default_factory=set)  # `when` nodes left out of this pass


class PassHost(PassGraph, Protocol):
    """What the runner needs of the graph it runs (:class:`~lorekit.graph.graph.Graph`):
    its settings, its memory of last results, and the edits hooks may make. A
    protocol, so the runner sits below the graph that starts it."""

    @property
    def system(self) -> str | None: ...

    @property
    def max_retries(self) -> int: ...

    def _last_entry(self, key: str) -> tuple[str, Any] | None: ...

    def _remember(self, key: str, question: str, result: Any) -> None: ...


class _NodeRun:
    """A node's conversation with its model: ask, parse, and re-ask with feedback."""

    def __init__(self, runner: PassRunner, node: Node, trace: NodeTrace) -> None:
        self.runner = runner
        self.node = node
        self.trace = trace
        self.messages: list[Message] = []
        self.question = ""
        self.output: Any = None
        self.failure: NodeFailure | None = None
        retries = node.max_retries if node.max_retries is not None else runner.graph.max_retries
        self.max_attempts = 1 + retries
        self.parser: Parser = parser_for(node)

    async def compose(self) -> bool:
        """Build the messages; False (and a ``hook`` failure) if a custom compose raised."""
        r = self.runner
        node = self.node
        lay = r.state.layout
        deps = []
        for d in lay.deps[node.key]:
            if d in r.state.absent:
                continue
            question, result = r.dep_value(d)
            mode = lay.mode(d, node.key)
            shown = None
            if node.max_dep_chars is not None and mode != "hidden":
                shown = await shrink_answer(
                    node, d, result, roles=r.roles, graph=r.graph.name, summaries=r.summaries
                )
            if node.compose is not None:  # Python code: a result it cannot change in place
                result = freeze(result, f"compose of node {node.key!r}", f"@{d}")
            deps.append(DepView(d, question, result, mode, shown))
        custom = node.compose is not None
        owner = "compose" if custom else "the prompt"
        db = DbView(r.db, owner=owner, node=node.key, reads=node.reads_with(r.graph.system))
        inp = ComposeInput(node, db, tuple(deps), r.graph.system)
        if node.compose is None:
            self.messages = default_compose(inp)
            self.question = inp.fill(node.prompt)
        else:
            try:
                self.messages = list(as_messages(node.compose(inp)))
            except GraphError:
                raise
            except Exception as exc:
                self.fail("hook", _raised("compose", node.compose, exc))
                return False
            try:
                self.question = inp.fill(node.prompt)
            except MissingValueError:
                self.question = node.prompt
        self.trace.messages = [m.to_dict() for m in self.messages]
        return True

    async def ask(self) -> bool:
        """Query until the parser accepts an answer; False when attempts run out.

        Attempts are counted over the node's whole conversation: a re-ask after
        the after-query hook refused an answer spends the same budget."""
        done = len(self.trace.attempts)
        if done >= self.max_attempts:
            return False
        base = self.runner.roles[self.node.role]
        tags = {"graph": self.runner.graph.name, "node": self.node.key}
        answer = await ask(
            lambda i: node_model(base, {**tags, "attempt": done + i}),
            self.messages,
            self._parse,
            params=RequestParams(
                temperature=self.node.temperature, max_tokens=self.node.max_tokens
            ),
            attempts=self.max_attempts - done,
            feedback=lambda exc: feedback_message(exc.feedback).content,
            model_error="keep",
        )
        for attempt in answer.attempts:
            self.trace.attempts.append(AttemptTrace.from_attempt(attempt))
        if answer.ok:
            self.output = answer.value
            return True
        if answer.model_error is not None:
            self.fail("model", f"the model call failed: {answer.model_error}")
        elif isinstance(answer.error, _ParserRaised):
            self.fail("hook", _raised("parser", self.parser, answer.error.cause))
        elif answer.error is not None:
            n = len(self.trace.attempts)
            self.fail(
                "after_query",
                f"no usable answer after {n} attempts; last problem: {answer.error.feedback}",
            )
        return False

    def _parse(self, out: Completion) -> Any:
        """The node's parser; a parser that raises something other than a
        :class:`ParseError` is a broken hook, which re-asking cannot fix."""
        try:
            return self.parser(out.text)
        except (ParseError, GraphError):
            raise
        except Exception as exc:
            raise _ParserRaised(exc) from exc

    def reject(self, feedback: str) -> bool:
        """Record why the last answer was refused; True if another attempt is allowed."""
        self.trace.attempts[-1].rejected = feedback
        if len(self.trace.attempts) >= self.max_attempts:
            n = len(self.trace.attempts)
            self.fail(
                "after_query", f"no usable answer after {n} attempts; last problem: {feedback}"
            )
            return False
        self.messages.append(feedback_message(feedback))
        return True

    def fail(self, kind: FailureKind, error: str) -> None:
        self.failure = NodeFailure(self.node.key, kind, error, len(self.trace.attempts))
        self.trace.status = "failed"
        self.trace.error = error


class PassRunner:
    """Evaluates one pass of ``graph`` over ``state.layout``."""

    def __init__(
        self,
        graph: PassHost,
        state: PassState,
        db: MutableMapping[str, Any],
        roles: Roles,
        report: PassReport,
    ) -> None:
        self.graph = graph
        self.state = state
        self.db = db
        self.roles = roles
        self.report = report
        self.failures: list[NodeFailure] = []
        self.summaries: Summaries = {}
        self.t0 = time.perf_counter()

    def dep_value(self, key: str) -> tuple[str, Any]:
        st = self.state
        if key in st.results:
            return st.questions[key], st.results[key]
        last = self.graph._last_entry(key)
        if last is None:  # prevented by the reachability check
            raise GraphError(f"node {key!r} has no result to give its dependents")
        return last

    def _absent(self, key: str) -> bool:
        """A node whose ``when`` key holds nothing right now (see :class:`Node`)."""
        when = self.state.layout.nodes[key].when
        return when is not None and not present(self.db.get(when))

    def _runnable(self, key: str) -> bool:
        st = self.state
        if key in st.layout.skipped or self._absent(key):
            return False
        return not any(isinstance(st.results.get(d), NodeFailure) for d in st.layout.deps[key])

    async def _prepare(self, key: str) -> _NodeRun:
        node = self.state.layout.nodes[key]
        trace = NodeTrace(key, node.role, temporary=key in self.state.layout.temporary)
        trace.started_s = time.perf_counter() - self.t0
        run = _NodeRun(self, node, trace)
        if await run.compose():
            await run.ask()
        return run

    async def run(self, *, sequential: bool, raise_on_failure: bool) -> dict[str, Any]:
        st = self.state
        tasks: dict[str, asyncio.Task[_NodeRun]] = {}
        try:
            while True:
                lay = st.layout
                ready = [
                    k
                    for k in lay.nodes
                    if k not in st.committed and all(d in st.committed for d in lay.deps[k])
                ]
                if not ready:
                    if len(st.committed) < len(lay.nodes):
                        raise GraphError("no node can run; the graph is inconsistent")
                    break
                if not sequential:
                    for k in ready:
                        if k not in tasks and self._runnable(k):
                            tasks[k] = asyncio.create_task(self._prepare(k), name=f"node:{k}")
                key = ready[0]
                await self._commit(key, tasks.pop(key, None))
        finally:
            pending: list[asyncio.Future[Any]] = [*tasks.values(), *self.summaries.values()]
            for t in pending:
                t.cancel()
            if pending:
                await asyncio.gather(*pending, return_exceptions=True)
        if self.failures and raise_on_failure:
            raise NodeFailedError(self.failures, st.results, self.report)
        return dict(st.results)

    async def _commit(self, key: str, task: asyncio.Task[_NodeRun] | None) -> None:
        st = self.state
        lay = st.layout
        node = lay.nodes[key]
        if key in lay.skipped:
            trace = NodeTrace(key, node.role, "skipped", temporary=key in lay.temporary)
            last = self.graph._last_entry(key)
            if last is not None:
                st.questions[key], st.results[key] = last
                trace.output = last[1]
        elif self._absent(key):
            # left out of this pass: its edges stay (they order the pass), but its
            # dependents are asked without it
            trace = NodeTrace(key, node.role, "skipped", temporary=key in lay.temporary)
            trace.error = f"left out: {node.when!r} holds nothing"
            st.absent.add(key)
        elif not self._runnable(key):
            bad = [d for d in lay.deps[key] if isinstance(st.results.get(d), NodeFailure)]
            error = f"dependency {bad[0]!r} failed"
            trace = NodeTrace(key, node.role, "blocked", error=error)
            self._record_failure(NodeFailure(key, "upstream", error))
        else:
            run = await task if task is not None else await self._prepare(key)
            trace = run.trace
            result = await self._after_query(run)
            if run.failure is not None:
                self._record_failure(run.failure)
            else:
                st.questions[key] = run.question
                st.results[key] = result
                trace.output = result
                if key not in lay.temporary:
                    self.graph._remember(key, run.question, result)
        trace.commit_index = len(st.committed)
        trace.ended_s = time.perf_counter() - self.t0
        st.committed[key] = trace.commit_index
        self.report.traces.append(trace)

    async def _after_query(self, run: _NodeRun) -> Any:
        """Run the hook and the declared writes, re-asking the model while the hook
        rejects the output. Graph edits are allowed only inside this step.

        Each attempt is a transaction: the hook writes into a :class:`DbView` and
        edits a copy of the layout; both are kept only if the hook returns. A
        rejection (``AfterQueryError``) or any other exception restores the
        layout (temporary nodes, edges, skips) and drops the writes."""
        node = run.node
        st = self.state
        while run.failure is None:
            result = run.output
            if node.after_query is not None:
                view = DbView(
                    self.db,
                    owner="after-query hook",
                    node=node.key,
                    reads=node.reads_with(self.graph.system),
                    writes=node.write_keys,
                )
                ctx = self._context(run, view)
                before = st.layout
                st.editor, st.added_by_editor = node.key, set()
                try:
                    out = node.after_query(ctx, run.output)
                    result = await out if inspect.isawaitable(out) else out
                except AfterQueryError as exc:
                    st.layout = before
                    if run.reject(exc.feedback) and await run.ask():
                        continue
                    break
                except GraphError:
                    st.layout = before
                    raise
                except Exception as exc:
                    st.layout = before
                    run.fail("hook", _raised("after-query hook", node.after_query, exc))
                    break
                finally:
                    st.editor = None
                    st.added_by_editor = set()
                view.commit(self.db)
            for w in node.writes:
                w.apply(self.db, result)
            return result
        return None

    def _context(self, run: _NodeRun, db: DbView) -> NodeContext:
        return NodeContext(
            run.node.key,
            run.node,
            db,
            self.graph,
            run.trace.answer or "",
            len(run.trace.attempts) - 1,
            FrozenResults(self.state.results, f"after-query hook of node {run.node.key!r}"),
        )

    def _record_failure(self, failure: NodeFailure) -> None:
        self.failures.append(failure)
        self.state.results[failure.key] = failure


class _ParserRaised(ParseError):
    """A parser raised something other than a :class:`ParseError`: a bug in the
    hook, not an answer the model could fix, so the node fails without re-asking."""

    def __init__(self, cause: Exception) -> None:
        super().__init__(f"{type(cause).__name__}: {cause}", final=True)
        self.cause = cause


def _raised(what: str, fn: Any, exc: Exception) -> str:
    """``after-query hook 'hooks.py:learn' raised ValueError: ...`` (one line)."""
    text = " ".join(str(exc).split()) or "(no message)"
    return f"{what} {hook_name(fn)!r} raised {type(exc).__name__}: {text}"
