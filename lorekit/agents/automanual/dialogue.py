"""A bounded conversation in which a model changes the rule system by tool calls.

The builder and the consolidator both talk to the rule system the same way:
the model answers with a ```python block of ``rule_system.<function>(...)``
calls, which are parsed with :mod:`ast` (never executed) and dispatched to
:class:`~lorekit.agents.automanual.rules.RuleSystem`. An answer is applied
all or nothing: a block that does not parse, or one with a call the rule
system refuses (a guard, an unknown id), changes nothing, and the reasons go
back to the model, which sends the whole block again corrected (so a retry
never writes a rule twice). Retries (refused answers) and rounds (applied
answers) are bounded, and everything (answers, each call and
its result or error) is kept in a :class:`DialogueLog` for the run store.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from lorekit.agents.automanual.rules import RuleError, RuleSystem
from lorekit.agents.automanual.texts import fill
from lorekit.agents.automanual.toolcalls import ToolCallError, ToolSpec, parse_tool_calls
from lorekit.llm.ask import ParseError, ask
from lorekit.llm.base import Completion, Message, RequestParams
from lorekit.llm.roles import Roles


class Refused(ParseError):
    """The rule system refused an answer's calls (a guard, an unknown id); nothing changed."""


@dataclass(slots=True)
class CallResult:
    """One parsed call and what the rule system answered (or why it refused)."""

    source: str
    result: str | None = None
    error: str | None = None


@dataclass(slots=True)
class DialogueLog:
    """What one builder or consolidator conversation did, as plain data."""

    answers: int = 0
    calls: list[CallResult] = field(default_factory=list)
    refused_blocks: list[str] = field(default_factory=list)
    stopped: bool = False
    failed: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def tool_text(tools: Collection[str]) -> str:
    """The functions the model may call, one line each, for the system prompt."""
    lines = {
        "write_rule": 'rule_system.write_rule(rule="...", type="...", example="...", '
        'validation_record="...")  # add a rule',
        "update_rule": 'rule_system.update_rule(rule_id="rule_N", rule="...", type="...", '
        'example="...", validation_record="...")  # rewrite only the fields you pass',
        "delete_rule": 'rule_system.delete_rule(rule_id="rule_N")  # remove a rule',
        "get_trajectory": 'rule_system.get_trajectory(episode_id="...")  # read an episode',
        "stop_generating": "rule_system.stop_generating()  # you are done for this episode",
    }
    return "\n".join(lines[name] for name in tools)


@dataclass(slots=True)
class ToolDialogue:
    """Drive one conversation until the model stops, runs out of rounds or keeps failing.

    ``more(log, results_text)`` returns the next user message when the
    conversation should go on after a round of applied calls (the
    consolidator's "still too many rules"), or None to end it. A round that
    called ``stop_generating()`` ends the conversation whatever ``more`` would say.
    """

    roles: Roles
    role: str
    rules: RuleSystem
    tools: tuple[str, ...]
    max_rounds: int = 3
    retries: int = 2
    temperature: float = 0.0
    max_tokens: int = 4_000

    async def run(
        self,
        messages: list[Message],
        more: Callable[[DialogueLog, str], str | None] | None = None,
    ) -> DialogueLog:
        log = DialogueLog()
        specs: dict[str, ToolSpec] = {n: RuleSystem.TOOLS[n] for n in self.tools}
        retries_left = self.retries
        rounds = 0

        def apply(out: Completion) -> str:
            log.answers += 1
            try:
                calls = parse_tool_calls(out.text, specs)
            except ToolCallError as exc:
                log.refused_blocks.append(str(exc))
                raise
            return self._apply(calls, log)

        while rounds < self.max_rounds:
            # refused answers spend one budget over the whole conversation
            answer = await ask(
                self.roles[self.role],
                messages,
                apply,
                params=RequestParams(temperature=self.temperature, max_tokens=self.max_tokens),
                attempts=retries_left + 1,
                feedback=lambda exc: fill("builder", "refused", problems=str(exc)),
            )
            retries_left -= len(answer.attempts) - 1
            if not answer.ok:
                why = answer.error
                log.failed = f"no acceptable tool calls after {self.retries} retries: {why}"
                return log
            results = answer.value
            rounds += 1
            if log.stopped:  # the model said it is done: it is not asked again
                return log
            follow = more(log, results) if more is not None else None
            if follow is None:
                return log
            log.stopped = False
            messages.append(Message("user", follow))
        if not log.stopped and log.failed is None:
            log.failed = f"ended after {self.max_rounds} rounds with work left to do"
        return log

    def _apply(self, calls: Sequence[Any], log: DialogueLog) -> str:
        """Apply one answer's calls all-or-nothing; the results text, or a
        :class:`Refused` (nothing changed) whose message goes back to the model."""
        try:
            results = self.rules.apply_all(calls)
        except RuleError as exc:
            log.refused_blocks.append(str(exc))
            log.calls.extend(CallResult(call.source, error=str(exc)) for call in calls)
            raise Refused(str(exc)) from exc
        lines = []
        for call, result in zip(calls, results, strict=True):
            log.calls.append(CallResult(call.source, result=result))
            lines.append(f"line {call.line}: {call.source} -> {result}")
            if call.name == "stop_generating":
                log.stopped = True
        return "\n".join(lines)
