"""A model writes the reward predicates: the paper's Algorithm 1, and a checked loop.

For each objective the ``rewarder`` role gets the law's text (what the
experience says about the action) and the state API's description, and
answers with ``def valid(state, target)``. Two loops:

``loop="paper"`` (the default) is the paper's Algorithm 1: the model refines
its function ``refinements`` times, each round seeing the objective, the law
and its previous version only (not the older ones) and no outside feedback,
and the last version is kept. Only an answer our
sandbox cannot run is answered with the reason (the paper executes whatever
comes back; we cannot), and the last answer that compiled is kept. Records,
when given, only measure the kept function's accuracy: it is never shown.

``loop="checked"`` is our extension, not the paper's algorithm: every answer
is checked before it is trusted:

1. it must contain one function, which :func:`~lorekit.sandbox.compile_predicate`
   accepts (no imports, no dunder tricks, no ``while``...) and which takes
   ``(state, target)``; otherwise the reason goes back to the model;
2. it is run on the records of that achievement (True expected on successes,
   False on failures) and the accuracy, with a few mistakes, goes back.

This repeats for at most ``refinements`` rounds after the first answer, and
stops early at 100%. The most accurate compiled answer is kept (the earliest
among equals), with its accuracy. An objective for which no answer compiled
falls back to the law's own code (:func:`~lorekit.laws.rewards.law_source`),
marked as such, unless ``fallback=False``.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from lorekit.laws.experience import LAW_ACTIONS, Experience, Law
from lorekit.laws.record_format import LawRecord
from lorekit.laws.rewards import (
    Check,
    PredicateEntry,
    PredicateSet,
    check_predicate,
    law_source,
    penalty_source,
)
from lorekit.laws.state_api import describe_state_api, prompt_text
from lorekit.llm import LLM, Message
from lorekit.llm.base import RequestParams
from lorekit.sandbox import PredicateRejected, compile_predicate

LOOPS = ("paper", "checked")
"""``paper``: Algorithm 1 as published; ``checked``: our loop with feedback on records."""

_FENCE = re.compile(r"```[ \t]*+([A-Za-z0-9_+-]*+)[ \t]*+\n(.*?)```", re.DOTALL)  # linear
_DEF_LINE = re.compile(r"^[^\S\n]*+def\s", re.MULTILINE)


def extract_function(text: str) -> str | None:
    """The first fenced block holding a ``def`` (or the bare answer if it is one)."""
    for _lang, body in _FENCE.findall(text):
        if _DEF_LINE.search(body):
            return str(body).strip() + "\n"
    stripped = text.strip()
    return stripped + "\n" if stripped.startswith("def ") else None


def law_text(law: Law) -> str:
    """What the model reads about one law: its text, or its structure in words."""
    if law.text.strip():
        return law.text.strip()
    parts = []
    if law.requires:
        parts.append("needs " + ", ".join(f"{n} {k}" for k, n in sorted(law.requires.items())))
    if law.below:
        parts.append("needs " + ", ".join(f"{k} below {n}" for k, n in sorted(law.below.items())))
    if law.nearby:
        parts.append("needs nearby: " + ", ".join(law.nearby))
    if law.faced:
        parts.append("must face one of: " + ", ".join(law.faced))
    if law.costs:
        parts.append("uses up " + ", ".join(f"{n} {k}" for k, n in sorted(law.costs.items())))
    if law.gains:
        parts.append("gives " + ", ".join(f"{n} {k}" for k, n in sorted(law.gains.items())))
    return "; ".join(parts) or "no conditions were observed"


def _feedback(check: Check, action: str) -> str:
    lines = []
    for m in check.mistakes:
        if m.error is not None:
            lines.append(prompt_text("crashed").format(state=m.state.describe(), error=m.error))
        else:
            lines.append(
                prompt_text("mistake").format(
                    expected=m.expected, got=m.got, state=m.state.describe()
                )
            )
    return prompt_text("checked").format(
        total=check.total,
        correct=check.correct,
        accuracy=check.accuracy or 0.0,
        action=action,
        successes=check.successes,
        failures=check.failures,
        mistakes="".join(lines).rstrip(),
    )


@dataclass(frozen=True)
class Attempt:
    """One answer of the model and what became of it."""

    source: str | None
    accuracy: float | None
    feedback: str


async def write_predicate(
    llm: LLM,
    law: Law,
    records: Sequence[LawRecord],
    *,
    refinements: int = 3,
    temperature: float = 0.0,
    fallback: bool = True,
    origin: str | None = None,
    loop: str = "paper",
) -> tuple[PredicateEntry | None, list[Attempt]]:
    """Algorithm 1 (``loop="paper"``) or the checked loop for one objective;
    see the module docstring.

    Returns the kept entry (None if nothing compiled and ``fallback`` is
    off) and every attempt in order, for reports and tests.
    """
    if refinements < 0:
        raise ValueError(f"refinements must be >= 0, got {refinements}")
    if loop not in LOOPS:
        raise ValueError(f"loop must be one of {', '.join(LOOPS)}, got {loop!r}")
    paper = loop == "paper"
    action = law.action or LAW_ACTIONS[law.achievement]
    task = prompt_text("task").format(
        state_api=describe_state_api(),
        action=action,
        achievement=law.achievement,
        experience=law_text(law),
    )
    opening = [Message("system", prompt_text("system").strip()), Message("user", task.strip())]
    messages = list(opening)
    attempts: list[Attempt] = []
    best: tuple[float, str, Check] | None = None
    for _ in range(refinements + 1):
        reply = await llm.complete(messages, RequestParams(temperature=temperature))
        if paper:  # the next round sees this version alone (Algorithm 1's r_(i-1))
            messages = list(opening)
        messages.append(Message("assistant", reply.text))
        source = extract_function(reply.text)
        check: Check | None = None
        if source is None:
            feedback = prompt_text("no_code")
        else:
            try:
                predicate = compile_predicate(source)
                if len(predicate.params) < 2:
                    raise PredicateRejected(
                        f"the function takes ({', '.join(predicate.params)}); "
                        "it must take (state, target)"
                    )
            except PredicateRejected as exc:
                feedback = prompt_text("rejected").format(reason=exc)
            else:
                check = check_predicate(predicate, records, law.achievement)
                feedback = prompt_text("refine") if paper else _feedback(check, action)
        accuracy = check.accuracy if check is not None else None
        attempts.append(Attempt(source, accuracy, feedback.strip()))
        if check is not None and source is not None:
            score = accuracy if accuracy is not None else 1.0
            if paper:
                best = (score, source, check)  # the paper keeps the last version
            elif best is None or score > best[0]:
                best = (score, source, check)
            if not paper and (check.total == 0 or check.correct == check.total):
                break
        messages.append(Message("user", feedback.strip()))
    model = getattr(llm, "model", "model")
    if best is not None:
        _, source, check = best
        entry = PredicateEntry(
            achievement=law.achievement,
            action=action,
            source=source,
            penalty_source=penalty_source(law),
            origin=origin or f"llm:{model}",
            accuracy=check.accuracy,
            checked=check.total,
            attempts=len(attempts),
        )
        return entry, attempts
    if not fallback:
        return None, attempts
    entry = PredicateEntry(
        achievement=law.achievement,
        action=action,
        source=law_source(law),
        penalty_source=penalty_source(law),
        origin="law-fallback",
        attempts=len(attempts),
        notes=[f"no usable answer from {model} in {len(attempts)} attempts; the law's own code"],
    )
    if records:
        fallback_check = check_predicate(compile_predicate(entry.source), records, law.achievement)
        entry.accuracy, entry.checked = fallback_check.accuracy, fallback_check.total
    return entry, attempts


async def write_predicates(
    llm: LLM,
    experience: Experience,
    records: Sequence[LawRecord],
    *,
    achievements: Iterable[str] | None = None,
    refinements: int = 3,
    concurrency: int = 4,
    fallback: bool = True,
    loop: str = "paper",
) -> PredicateSet:
    """Algorithm 1 over the objectives (default: every law of ``experience``),
    ``concurrency`` of them at a time. Wrap ``llm`` in a cache to resume."""
    wanted = sorted(experience.laws) if achievements is None else list(achievements)
    missing = [a for a in wanted if a not in experience.laws]
    if missing:
        raise ValueError(f"the experience has no law for {missing}; drop them or add laws")
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(achievement: str) -> PredicateEntry | None:
        async with gate:
            entry, _ = await write_predicate(
                llm,
                experience.laws[achievement],
                records,
                refinements=refinements,
                fallback=fallback,
                loop=loop,
            )
            return entry

    entries = await asyncio.gather(*(one(a) for a in wanted))
    meta = {
        "experience": experience.source,
        "model": getattr(llm, "model", "model"),
        "refinements": refinements,
        "loop": loop,
    }
    return PredicateSet({e.achievement: e for e in entries if e is not None}, meta)
