"""Experience from interaction records with a language model (the laws paper's
Algorithms 2 and 3), played by the role ``extractor``.

For each achievement ``g`` with records ``D_g`` (successes ``D_g+``):

1. **Costs and gains** (Algorithm 2), separately per aspect of the player's
   state (attributes, tools, materials) and then for the world's side (what
   the faced cell becomes: "reveals a path"): the model first says what a
   success should cost and give from its own knowledge, then revises that
   record by record, each step showing one success's before and after in
   that aspect.
2. **Preconditions** (Algorithm 3): from the costs alone the model guesses
   what must hold before the action (items held with counts, things nearby,
   the faced kind), then revises that over every record of ``g``, each step
   showing the record's state before and after: successes (which show what
   is *not* needed) and failures (which show what is).

Every step asks for words and a structured form (``extract_parse``); an
answer whose form is malformed or breaks the schema is fed back with the
problems and asked again, at most ``max_attempts`` answers a step, after
which the achievement is recorded as failed (in ``Experience.meta
["failures"]``), never silently dropped. Model errors (network, auth) are not
answers: they stop the extraction, and a rerun continues from the saved
progress (``extract_progress``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lorekit.laws.experience import LAW_ACTIONS, Experience, Law
from lorekit.laws.extract_parse import (
    Answer,
    FormError,
    Schema,
    effects_schema,
    face_schema,
    impossible_bounds,
    parse_answer,
    preconditions_schema,
    seen_items,
    seen_places,
)
from lorekit.laws.extract_progress import Progress, fingerprint
from lorekit.laws.extract_prompts import (
    ASPECTS,
    FACE,
    answer_format,
    bullets,
    compact,
    costs_text,
    effects_text,
    fill,
    situation,
    templates,
)
from lorekit.llm.ask import ParseError, ask
from lorekit.llm.base import LLM, Completion, Message, RequestParams

ROLE = "extractor"
_ITEMS: dict[str, tuple[str, ...]] = {
    "attributes": ("health", "food", "drink", "energy"),
    "tools": (
        "wood_pickaxe",
        "stone_pickaxe",
        "iron_pickaxe",
        "wood_sword",
        "stone_sword",
        "iron_sword",
    ),
    "materials": ("sapling", "wood", "stone", "coal", "iron", "diamond"),
}
# Kinds of cells and creatures a player can face or stand near in crafter.
_PLACES = (
    *("water", "grass", "stone", "path", "sand", "tree", "lava", "coal", "iron", "diamond"),
    *("table", "furnace", "cow", "zombie", "skeleton", "plant", "arrow"),
)


class ExtractError(RuntimeError):
    """The extraction cannot start (bad records or achievements); the message says why."""


def as_record(record: Any) -> dict[str, Any]:
    """A record in the contract's JSON shape, from a mapping or a record object."""
    if isinstance(record, Mapping):
        return dict(record)
    to_json = getattr(record, "to_json", None)
    if callable(to_json):
        out = to_json()
        if isinstance(out, Mapping):
            return dict(out)
    keys = ("achievement", "action", "success", "before", "after")
    return {k: getattr(record, k) for k in keys}


def group_records(records: Iterable[Any]) -> dict[str, list[dict[str, Any]]]:
    """Records by achievement, in their order; records of unknown achievements are refused."""
    out: dict[str, list[dict[str, Any]]] = {}
    for i, raw in enumerate(records):
        rec = as_record(raw)
        name = rec.get("achievement")
        if name not in LAW_ACTIONS:
            raise ExtractError(f"record {i + 1}: unknown achievement {name!r}")
        for key in ("before", "after"):
            if not isinstance(rec.get(key), Mapping):
                raise ExtractError(f"record {i + 1} ({name}): {key!r} must be a state object")
        out.setdefault(str(name), []).append(rec)
    return out


class _StepFailed(Exception):
    def __init__(self, step: str, problems: list[str], answer: str, calls: int) -> None:
        super().__init__(f"{step}: {'; '.join(problems)}")
        self.info = {"step": step, "problems": problems, "answer": answer[-2000:], "calls": calls}


@dataclass(frozen=True)
class _Task:
    achievement: str
    action: str
    records: list[dict[str, Any]]

    @property
    def successes(self) -> list[dict[str, Any]]:
        return [r for r in self.records if r.get("success")]


class Extractor:
    """Runs Algorithms 2 and 3 with ``roles[ROLE]`` over records; see the module docstring.

    ``progress`` is the sidecar file that makes a run resumable (None: keep
    progress in memory only). ``jobs`` achievements are worked on at once
    (each one's steps are sequential); the result does not depend on it.
    """

    def __init__(
        self,
        roles: Mapping[str, LLM],
        *,
        max_attempts: int = 3,
        jobs: int = 4,
        progress: str | Path | None = None,
    ) -> None:
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, got {max_attempts}")
        if jobs < 1:
            raise ValueError(f"jobs must be at least 1, got {jobs}")
        self.llm = roles[ROLE]
        self.max_attempts = max_attempts
        self.jobs = jobs
        self.progress = Progress(progress)
        self._system = fill("system")

    async def extract(
        self, records: Iterable[Any], achievements: Sequence[str] | None = None
    ) -> Experience:
        """The experience of ``achievements`` (default: all that the records cover)."""
        grouped = group_records(records)
        names = list(dict.fromkeys(achievements if achievements is not None else grouped))
        for name in names:
            if name not in LAW_ACTIONS:
                raise ExtractError(
                    f"unknown achievement {name!r} (known: {', '.join(sorted(LAW_ACTIONS))})"
                )
            if name not in grouped:
                raise ExtractError(f"the records hold no attempt at {name!r}")
        tasks = [_Task(n, LAW_ACTIONS[n], grouped[n]) for n in names]
        states = {t.achievement: self._state(t) for t in tasks}
        gate = asyncio.Semaphore(self.jobs)

        async def one(task: _Task) -> None:
            async with gate:
                await self._achievement(task, states[task.achievement])

        try:
            async with asyncio.TaskGroup() as group:
                for task in tasks:
                    group.create_task(one(task))
        except BaseExceptionGroup as errors:
            raise errors.exceptions[0] from None
        return self._experience(tasks, states)

    def _state(self, task: _Task) -> dict[str, Any]:
        prompts = fingerprint(templates=templates())
        print_ = fingerprint(
            model=self.llm.model,
            prompts=prompts,
            records=task.records,
        )
        return self.progress.state(task.achievement, print_)

    async def _achievement(self, task: _Task, state: dict[str, Any]) -> None:
        if state["status"] == "done":
            return
        if state["status"] == "failed":
            # Ask the failed step again (a rerun may allow more attempts); its
            # earlier answers are not counted twice.
            state["calls"] -= state["failure"]["calls"]
            state["retries"] -= state["failure"]["calls"] - 1
            state["status"], state["failure"] = "running", None
        try:
            for aspect in ASPECTS:
                await self._effects(task, state, aspect)
            await self._face(task, state)
            await self._preconditions(task, state)
        except _StepFailed as failed:
            state["status"], state["failure"] = "failed", failed.info
        else:
            state["status"] = "done"
        self.progress.save()

    async def _effects(self, task: _Task, state: dict[str, Any], aspect: str) -> None:
        """Algorithm 2 for one aspect: a guess, then one revision per success."""
        items = sorted(set(_ITEMS[aspect]) | seen_items(task.records, aspect))
        schema = effects_schema(items)
        common = {"action": task.action, "achievement": task.achievement, "aspect": aspect}
        common |= answer_format(schema)
        await self._guess_then_revise(
            task,
            state,
            aspect,
            f"{aspect} effects",
            schema,
            lambda: fill("effects_prior", items=", ".join(items), **common),
            lambda slot, rec: fill(
                "effects_refine",
                current_text=slot["text"] or "(none yet)",
                current_form=compact(slot["form"]),
                before=compact(rec["before"].get(aspect, {})),
                after=compact(rec["after"].get(aspect, {})),
                **common,
            ),
        )

    async def _face(self, task: _Task, state: dict[str, Any]) -> None:
        """Algorithm 2 for the world's side: what the faced cell holds after a success."""
        places = sorted(set(_PLACES) | seen_places(task.records))
        schema = face_schema(places)
        common = {"action": task.action, "achievement": task.achievement}
        common |= answer_format(schema)
        await self._guess_then_revise(
            task,
            state,
            FACE,
            "faced cell",
            schema,
            lambda: fill("face_prior", places=", ".join(places), **common),
            lambda slot, rec: fill(
                "face_refine",
                current_text=slot["text"] or "(none yet)",
                current_form=compact(slot["form"]),
                before=rec["before"].get("face", "?"),
                after=rec["after"].get("face", "?"),
                **common,
            ),
        )

    async def _guess_then_revise(
        self,
        task: _Task,
        state: dict[str, Any],
        key: str,
        label: str,
        schema: Schema,
        prior: Callable[[], str],
        refine: Callable[[dict[str, Any], Mapping[str, Any]], str],
    ) -> None:
        """Algorithm 2's loop for one effect: a first guess, then one revision per
        success, each answer saved so an interrupted extraction resumes mid-loop."""
        slot = state["effects"].setdefault(key, {"done": 0, "text": "", "form": {}})
        successes = task.successes
        while slot["done"] <= len(successes):
            step = slot["done"]
            prompt = prior() if step == 0 else refine(slot, successes[step - 1])
            answer = await self._ask(state, f"{label}, step {step}", prompt, schema)
            slot.update(done=step + 1, text=answer.text, form=answer.form)
            self.progress.save()

    async def _preconditions(self, task: _Task, state: dict[str, Any]) -> None:
        """Algorithm 3: a guess from the costs alone, then one revision per record."""
        items = {i for a in ASPECTS for i in (*_ITEMS[a], *seen_items(task.records, a))}
        places = set(_PLACES) | seen_places(task.records)
        schema = preconditions_schema(items, places)
        slot = state["preconditions"]
        common = {"action": task.action, "achievement": task.achievement}
        common |= answer_format(schema)
        while slot["done"] <= len(task.records):
            step = slot["done"]
            if step == 0:
                prompt = fill("preconditions_prior", costs=costs_text(state), **common)
            else:
                rec = task.records[step - 1]
                ok = bool(rec.get("success"))
                prompt = fill(
                    "preconditions_refine",
                    current_text=slot["text"] or "(none yet)",
                    current_form=compact(slot["form"]),
                    outcome="succeeded" if ok else "failed",
                    state=situation(rec["before"]),
                    after=situation(rec["after"]),
                    check=fill("check_success" if ok else "check_failure"),
                    **common,
                )
            answer = await self._ask(
                state, f"preconditions, step {step}", prompt, schema, check=impossible_bounds
            )
            slot.update(done=step + 1, text=answer.text, form=answer.form)
            self.progress.save()

    async def _ask(
        self,
        state: dict[str, Any],
        step: str,
        prompt: str,
        schema: Schema,
        check: Callable[[dict[str, Any]], list[str]] | None = None,
    ) -> Answer:
        """One step: ask, check the form (the schema, then ``check``: problems the
        schema cannot state), feed problems back; at most ``max_attempts`` answers."""

        def read(out: Completion) -> Answer:
            answer = parse_answer(out.text, schema)
            problems = check(answer.form) if check is not None else []
            if problems:
                raise FormError(problems)
            return answer

        def feedback(exc: ParseError) -> str:
            problems = exc.problems if isinstance(exc, FormError) else [exc.feedback]
            return fill("feedback", problems=bullets(problems))

        messages = [Message("system", self._system), Message("user", prompt)]
        asked = await ask(
            self.llm,
            messages,
            read,
            params=RequestParams(temperature=0.0),
            attempts=self.max_attempts,
            feedback=feedback,
        )
        # Counts enter the state only when the step ends, with no await before the
        # save that follows, so saved progress always sits on a step boundary.
        calls = len(asked.attempts)
        state["calls"] += calls
        state["retries"] += calls - 1
        if asked.ok:
            return asked.value
        problems = asked.error.problems if isinstance(asked.error, FormError) else []
        raise _StepFailed(step, problems, asked.text or "", calls)

    def _experience(self, tasks: list[_Task], states: Mapping[str, dict[str, Any]]) -> Experience:
        laws: dict[str, Law] = {}
        failures: dict[str, Any] = {}
        for task in tasks:
            state = states[task.achievement]
            if state["status"] == "failed":
                failures[task.achievement] = state["failure"]
            elif state["status"] == "done":
                laws[task.achievement] = _law(task, state)
        meta = {
            "method": "llm extraction (laws paper, algorithms 2 and 3)",
            "role": ROLE,
            "model": self.llm.model,
            "max_attempts": self.max_attempts,
            "achievements": [t.achievement for t in tasks],
            "failures": failures,
            "calls": sum(states[t.achievement]["calls"] for t in tasks),
            "retries": sum(states[t.achievement]["retries"] for t in tasks),
        }
        return Experience(laws=laws, source=f"llm:{self.llm.model}", meta=meta)


def _law(task: _Task, state: Mapping[str, Any]) -> Law:
    costs: dict[str, int] = {}
    gains: dict[str, int] = {}
    for aspect in ASPECTS:
        form = state["effects"][aspect]["form"]
        costs.update(form["costs"])
        gains.update(form["gains"])
    leaves = state["effects"].get(FACE, {}).get("form", {}).get("leaves")
    pre = state["preconditions"]
    text = f"{effects_text(state)}\nPreconditions: {pre['text'] or compact(pre['form'])}"
    successes = len(task.successes)
    return Law(
        achievement=task.achievement,
        action=task.action,
        requires=dict(pre["form"]["requires"]),
        nearby=list(pre["form"]["nearby"]),
        faced=list(pre["form"]["faced"]),
        below={k: int(n) for k, n in pre["form"].get("below", {}).items() if int(n) > 0},
        costs=costs,
        gains=gains,
        leaves=leaves if isinstance(leaves, str) else None,
        text=text,
        evidence={
            "successes": successes,
            "failures": len(task.records) - successes,
            "calls": state["calls"],
            "retries": state["retries"],
        },
    )


async def extract_experience(
    roles: Mapping[str, LLM],
    records: Iterable[Any],
    *,
    achievements: Sequence[str] | None = None,
    max_attempts: int = 3,
    jobs: int = 4,
    progress: str | Path | None = None,
) -> Experience:
    """One call for the whole pipeline; see :class:`Extractor`."""
    extractor = Extractor(roles, max_attempts=max_attempts, jobs=jobs, progress=progress)
    return await extractor.extract(records, achievements)
