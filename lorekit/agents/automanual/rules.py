"""The rule system: AutoManual's online, versioned set of rules, kept in SQLite.

Why an event log rather than a JSON file of current rules (the paper's way):
every change (write, update, delete, restore) is one appended row with the
rule before and after and the episode it came from, so any earlier rule set
can be shown, diffed or restored, ``lorekit show`` can say which episode did
what, and a resumed build can drop exactly the changes of episodes the run
store never committed (:meth:`RuleSystem.truncate_to`). The current rules are
a replay of the events, held in memory and caught up whenever another
connection has written more.

Rule ids (``rule_0``, ``rule_1``, ...) are never reused within a history: a
deleted rule's id stays retired. Ids issued by a truncated tail do not count
(that tail never happened), so after a resume the next id is the one an
uninterrupted build would have issued, and the resumed history is identical.

The five functions a model may call (:attr:`RuleSystem.TOOLS`) return a short
text for the model or raise :class:`RuleError` with one line saying what to
fix; :meth:`RuleSystem.apply` runs a parsed :class:`~.toolcalls.ToolCall`.
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any, ClassVar

from lorekit.agents.automanual.core import SUCCESS_TYPES, Rule, RuleType
from lorekit.agents.automanual.rulediff import (
    RuleChange,
    RuleDiff,
    RuleEvent,
    copy_rule,
    diff_fields,
    diff_rules,
    ordered,
    render_rules,
    replay,
    rule_number,
)
from lorekit.agents.automanual.store import (
    RULE_EVENTS,
    insert_rule_event,
    last_rule_event,
    load_rule_events,
    transaction,
    truncate_episodes,
)
from lorekit.agents.automanual.toolcalls import ToolCall, ToolSpec

__all__ = ["ACTORS", "RuleChange", "RuleDiff", "RuleError", "RuleEvent", "RuleSystem"]

ACTORS = frozenset({"builder", "consolidator", "seed", "user", "published"})
_EP_TAG = re.compile(r"\[ep=([^\]]+)\]")


class RuleError(ValueError):
    """What a model (or user) asked of the rule system that cannot be done, in one line."""


class RuleSystem:
    """The rules of one build (``build_id``), stored as events in ``db``.

    Call :meth:`begin` before each batch of calls to say where they come
    from: the episode (for tagging and for resume), whether it succeeded
    (the guard against success rules from failures) and who acts.
    """

    TOOLS: ClassVar[Mapping[str, ToolSpec]] = {
        "write_rule": ToolSpec(
            "write_rule", ("rule", "type", "example", "validation_record"), ("rule", "type")
        ),
        "update_rule": ToolSpec(
            "update_rule", ("rule_id", "rule", "type", "example", "validation_record"), ("rule_id",)
        ),
        "delete_rule": ToolSpec("delete_rule", ("rule_id",), ("rule_id",)),
        "get_trajectory": ToolSpec("get_trajectory", ("episode_id",), ("episode_id",)),
        "stop_generating": ToolSpec("stop_generating", ()),
    }

    def __init__(
        self,
        db: sqlite3.Connection,
        build_id: str,
        *,
        keep_logs: int = 3,  # as the published rule manager keeps them
        trajectory: Callable[[str], str | None] | None = None,
        max_content: int = 3000,
        max_example: int = 6000,
        max_record: int = 600,
    ) -> None:
        if keep_logs < 1:
            raise ValueError("keep_logs must be at least 1")
        self._db = db
        self.build_id = build_id
        self.keep_logs = keep_logs
        self.max_content = max_content
        self.max_example = max_example
        self.max_record = max_record
        self._trajectory = trajectory
        self._events: list[RuleEvent] = []
        self._rules: dict[str, Rule] = {}
        self._next_id = 0
        self.episode_id: str | None = None
        self.succeeded: bool | None = None
        self.actor = "user"
        self.stopped = False
        self._sync()

    # -- context ----------------------------------------------------------------

    def begin(self, episode_id: str | None, *, succeeded: bool | None, actor: str) -> None:
        """Set where the next calls come from; clears :attr:`stopped`."""
        if actor not in ACTORS:
            raise ValueError(f"unknown actor {actor!r}; use one of {sorted(ACTORS)}")
        self.episode_id = episode_id
        self.succeeded = succeeded
        self.actor = actor
        self.stopped = False

    # -- the functions a model calls --------------------------------------------

    def write_rule(
        self, rule: str, type: str, example: str = "", validation_record: str = ""
    ) -> str:
        """Add a rule with the next unused id."""
        content = self._text(rule, "rule", self.max_content)
        if not content:
            raise RuleError("write_rule needs the rule text (rule='...'), starting with its scope")
        rtype = self._type(type)
        self._guard(rtype, "write")
        example_text = self._text(example, "example", self.max_example)
        record = self._text(validation_record, "validation_record", self.max_record)
        with self._writing():
            rule_id = f"rule_{self._next_id}"
            new = Rule(rule_id, rtype, content, example_text, [self._tag(record or "written")])
            self._append("write", rule_id, None, new)
        return f"wrote {rule_id} ({rtype.value})"

    def import_rules(self, rules: Sequence[Rule]) -> int:
        """Write ``rules`` as they are (their ids, texts and logs) into this empty rule
        system: a run made elsewhere, such as one the AutoManual authors published.
        Returns how many were written."""
        with self._writing():
            if self._events:
                raise RuleError(f"build {self.build_id!r} has rules already; import into a new one")
            for rule in sorted(rules, key=lambda r: rule_number(r.rule_id)):
                number = rule_number(rule.rule_id)
                if rule.rule_id != f"rule_{number}" or rule.rule_id in self._rules:
                    raise RuleError(f"cannot import rule id {rule.rule_id!r} (rule_N, once each)")
                self._append("write", rule.rule_id, None, copy_rule(rule))
        return len(rules)

    def update_rule(
        self,
        rule_id: str,
        rule: str | None = None,
        type: str | None = None,
        example: str | None = None,
        validation_record: str | None = None,
    ) -> str:
        """Change the given fields of a rule; None or "" leaves a field as it is."""
        content = self._text(rule, "rule", self.max_content)
        example_text = self._text(example, "example", self.max_example)
        record = self._text(validation_record, "validation_record", self.max_record)
        rtype = self._type(type) if type is not None and str(type).strip() else None
        with self._writing():
            rid = self._existing(rule_id, "update_rule")
            before = self._rules[rid]
            if rtype is not None and rtype != before.type:
                self._guard(rtype, "update")
            logs = list(before.logs)
            if record:
                logs = [*logs, self._tag(record)][-self.keep_logs :]
            after = Rule(
                rid,
                rtype or before.type,
                content or before.content,
                example_text or before.example,
                logs,
            )
            if after == before:
                raise RuleError(
                    f"update_rule({rid!r}) changes nothing; pass a new rule=, type=, "
                    "example= or validation_record="
                )
            self._append("update", rid, before, after)
        changed = [
            f for f in ("type", "content", "example", "logs") if f in diff_fields(before, after)
        ]
        return f"updated {rid} ({', '.join(changed)})"

    def delete_rule(self, rule_id: str) -> str:
        """Remove a rule; its id is never given to another rule."""
        with self._writing():
            rid = self._existing(rule_id, "delete_rule")
            self._append("delete", rid, self._rules[rid], None)
        return f"deleted {rid}"

    def get_trajectory(self, episode_id: str) -> str:
        """The trajectory of an earlier episode, for checking where a rule came from."""
        if self._trajectory is None:
            raise RuleError("get_trajectory is not available here; decide from the rules shown")
        key = str(episode_id).strip()
        match = _EP_TAG.fullmatch(key)
        key = match.group(1) if match else key.removeprefix("ep=").strip()
        text = self._trajectory(key)
        if text is None:
            known = self.logged_episodes()
            hint = f"; ids in the logs: {', '.join(known[-8:])}" if known else ""
            raise RuleError(
                f"no episode {key!r}; use an id exactly as written after 'ep=' in the rules' "
                f"validation logs{hint}"
            )
        return text

    def stop_generating(self) -> str:
        """The model is done with this trajectory; the caller reads :attr:`stopped`."""
        self.stopped = True
        return "stopped"

    def apply(self, call: ToolCall) -> str:
        """Run one parsed call; arguments must be strings (a rule id may be a number)."""
        if call.name not in self.TOOLS:
            raise RuleError(f"unknown function {call.name!r}; use one of {', '.join(self.TOOLS)}")
        args: dict[str, Any] = {}
        for name, value in call.kwargs.items():
            if name == "rule_id" and isinstance(value, int) and not isinstance(value, bool):
                value = f"rule_{value}"
            if not (isinstance(value, str) or (value is None and call.name == "update_rule")):
                raise RuleError(
                    f"{call.name}: argument {name!r} must be a string, not {type(value).__name__}"
                )
            args[name] = value
        methods: dict[str, Callable[..., str]] = {
            "write_rule": self.write_rule,
            "update_rule": self.update_rule,
            "delete_rule": self.delete_rule,
            "get_trajectory": self.get_trajectory,
            "stop_generating": self.stop_generating,
        }
        return methods[call.name](**args)

    def apply_all(self, calls: Sequence[ToolCall]) -> list[str]:
        """Run the calls of one answer all-or-nothing; the results, in order.

        When one call is refused, the changes of the calls before it are
        rolled back too, so the model can send its corrected answer whole
        without writing a rule twice. The error names the call and its line.
        """
        results: list[str] = []
        stopped = self.stopped
        try:
            with self._writing():
                for i, call in enumerate(calls, start=1):
                    try:
                        results.append(self.apply(call))
                    except RuleError as exc:
                        raise RuleError(
                            f"call {i} of {len(calls)} (line {call.line}, {call.name}): {exc}; "
                            "none of the calls was applied"
                        ) from None
        except RuleError:
            self.stopped = stopped
            raise
        return results

    # -- reading and history ----------------------------------------------------

    def rules(self) -> list[Rule]:
        """The current rules, ordered by id number (copies)."""
        self._sync()
        return ordered(self._rules)

    @property
    def version(self) -> int:
        """Number of changes so far (0 = no rules ever)."""
        self._sync()
        return len(self._events)

    def rules_at(self, version: int) -> list[Rule]:
        """The rules as they were after the first ``version`` changes."""
        self._check_version(version)
        return ordered(replay(self._events[:version]))

    def history(self) -> list[RuleEvent]:
        """Every change, oldest first."""
        self._sync()
        return [
            replace(e, before=copy_rule(e.before), after=copy_rule(e.after)) for e in self._events
        ]

    def diff(self, a: int, b: int) -> RuleDiff:
        """What changed between versions ``a`` and ``b`` (either order)."""
        return diff_rules(a, self.rules_at(a), b, self.rules_at(b))

    def restore(self, version: int) -> int:
        """Make the current rules equal ``rules_at(version)`` by appending events.

        The history stays: restoring is itself a change, one ``restore`` event
        per rule that differs. A restored rule keeps its old id (it is the
        same rule coming back); ids issued since stay retired. Returns the
        number of events appended.
        """
        self._check_version(version)
        with self._writing():
            target = {r.rule_id: r for r in self.rules_at(version)}
            ids = sorted(set(target) | set(self._rules), key=rule_number)
            count = 0
            for rid in ids:
                before, after = self._rules.get(rid), target.get(rid)
                if before != after:
                    self._append("restore", rid, before, after)
                    count += 1
        return count

    def truncate_to(self, kept_episode_ids: Collection[str]) -> int:
        """Drop the changes of episodes not in ``kept_episode_ids`` (a tail); for resume."""
        dropped = truncate_episodes(self._db, RULE_EVENTS, self.build_id, kept_episode_ids)
        self._reload()
        return dropped

    def render(self, *, logs: bool = False) -> str:
        """The rules as prompt text; ``logs=True`` adds validation logs (builder, consolidator)."""
        return render_rules(self.rules(), logs=logs)

    def logged_episodes(self) -> list[str]:
        """Episode ids named in the current rules' validation logs, first seen first."""
        seen: dict[str, None] = {}
        for rule in self.rules():
            for entry in rule.logs:
                for ep in _EP_TAG.findall(entry):
                    seen.setdefault(ep, None)
        return list(seen)

    # -- internals --------------------------------------------------------------

    def _text(self, value: str | None, name: str, limit: int) -> str:
        text = "" if value is None else str(value).strip()
        if len(text) > limit:
            raise RuleError(
                f"{name} has {len(text)} characters, more than the {limit} allowed; shorten it"
            )
        return text

    def _type(self, value: str) -> RuleType:
        try:
            return RuleType.parse(value)
        except ValueError as exc:
            raise RuleError(str(exc)) from None

    def _guard(self, rtype: RuleType, what: str) -> None:
        if self.succeeded is False and rtype in SUCCESS_TYPES:
            raise RuleError(
                f"cannot {what} a {rtype.value!r} rule from episode {self.episode_id!r}, which "
                "failed; record what went wrong as an 'Unsolved Error' or 'Special Phenomenon' rule"
            )

    def _tag(self, record: str) -> str:
        where = f"ep={self.episode_id}" if self.episode_id is not None else self.actor
        return f"[{where}] {record}"

    def _existing(self, rule_id: str, fn: str) -> str:
        n = rule_number(rule_id)
        rid = f"rule_{n}" if n >= 0 else str(rule_id).strip()[:80]
        if rid in self._rules:
            return rid
        existing = ", ".join(r.rule_id for r in ordered(self._rules)) or "none"
        gone = any(e.rule_id == rid for e in self._events)
        why = "was deleted" if gone else "does not exist"
        raise RuleError(f"{fn}: {rid!r} {why}; existing rules: {existing}")

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """A write transaction that starts from the database's latest state."""
        try:
            with transaction(self._db):
                self._sync()
                yield
        except BaseException:
            self._reload()  # rolled back: forget anything appended in memory
            raise

    def _append(self, op: str, rule_id: str, before: Rule | None, after: Rule | None) -> None:
        event = RuleEvent(
            len(self._events) + 1,
            self.episode_id,
            self.actor,
            op,
            rule_id,
            before,
            after,
            time.time(),
        )
        insert_rule_event(self._db, self.build_id, event)
        self._take(event)

    def _take(self, event: RuleEvent) -> None:
        self._events.append(event)
        if event.after is None:
            self._rules.pop(event.rule_id, None)
        else:
            self._rules[event.rule_id] = event.after
        self._next_id = max(self._next_id, rule_number(event.rule_id) + 1)

    def _sync(self) -> None:
        """Catch up with events other connections appended (or reload after a truncation)."""
        mine = (self._events[-1].version, self._events[-1].at) if self._events else None
        if last_rule_event(self._db, self.build_id) != mine:
            self._reload()

    def _reload(self) -> None:
        self._events, self._rules, self._next_id = [], {}, 0
        for event in load_rule_events(self._db, self.build_id):
            self._take(event)

    def _check_version(self, version: int) -> None:
        current = self.version
        if not 0 <= version <= current:
            raise RuleError(f"no rule version {version}; versions go from 0 to {current}")
