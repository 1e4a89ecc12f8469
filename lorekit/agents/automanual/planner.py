"""AutoManual's planner: plays one episode by writing code (paper, section 3.2).

Each turn the planner answers in four parts (analysis, related rule ids,
plan, code); the code runs in :mod:`lorekit.sandbox` against the env's code
API (``agent``); what it did comes back as the next turn's feedback. The
episode ends when the env ends it (success or its action limit) or after
``1 + max_replans`` turns. The outcome is read from the env, never from the
model: direct success (the first turn finished the task), indirect success
(a later turn did), or failure.
The planner then writes its conclusion: a clean code block for a success
(plus its mistakes for an indirect one), a reflection for a failure.

One namespace per episode, as in the authors' code: every turn's code runs
in the same sandbox worker (:class:`~lorekit.sandbox.SandboxSession`), so
variables and functions of earlier turns are still there. Before the first
run the env profile's helper functions, the function definitions in the
rules' examples and those of the retrieved skill are defined (``preload``),
as the authors' code defines them before the planner's code.
Should the worker be lost mid-episode (a time limit, a guard violation), the
next turn starts on a fresh one with the helpers and the functions earlier
turns defined (only
``def`` statements, so nothing an earlier turn did is done again); their
variables are gone, and the feedback says so.

The whole :class:`PlannerEpisode` is kept in ``trajectory.notes["automanual"]``
and updated after every turn, so an episode cut off part-way keeps it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar

from lorekit.agents.automanual.core import Outcome, PlannerEpisode, PlannerTurn
from lorekit.agents.automanual.planner_feedback import (
    RecordingApi,
    render_examples,
    render_feedback,
)
from lorekit.agents.automanual.planner_parse import (
    PlannerAnswer,
    defined_functions,
    definitions,
    parse_answer,
    parse_conclusion,
)
from lorekit.agents.automanual.planner_prompt import (
    Retrieved,
    fill,
    first_message,
    items,
    prompts,
)
from lorekit.agents.automanual.planner_prompt import (  # re-exported: their old home
    helper_examples as helper_examples,
)
from lorekit.agents.automanual.planner_prompt import (
    nest_headings as nest_headings,
)
from lorekit.agents.automanual.profiles import EnvProfile, profile_for
from lorekit.agents.base import Episode
from lorekit.llm.ask import Answer, ParseError, ask
from lorekit.llm.base import Message, RequestParams
from lorekit.llm.roles import Roles
from lorekit.sandbox import Limits, SandboxResult, SandboxSession, WorkerPool

T = TypeVar("T")

NOTES_KEY = "automanual"
FORMAT_ERROR = "AnswerFormatError"
"""``PlannerTurn.error`` of a turn whose answer had no usable code."""


class Planner:
    """The code-writing planner for one env (see the module docstring).

    ``limits`` and ``max_replans`` default to the env profile's. ``pool`` is
    the sandbox's worker pool (default: the process-wide one).
    ``format_retries`` bounds how often an answer without code (or a
    conclusion without its part) is sent back before the turn counts as failed.
    ``predefine_skills`` (default, as published): the functions of a skill
    shown in the prompt are defined before the planner's first code runs.
    ``examples``: how many of the profile's human examples the system prompt
    shows, from the first (default all; MiniWoB++ has four, the paper's planner
    on the 9 types with feedback had the first alone). ``build``: the planner of
    the building stage (its turn budget and build-only helpers) or, False, of
    the testing stage; ``max_replans`` may be ``"paper"`` (the paper's figure).
    """

    def __init__(
        self,
        profile: EnvProfile | str,
        *,
        role: str = "planner",
        limits: Limits | None = None,
        max_replans: int | str | None = None,
        format_retries: int = 2,
        max_tokens: int | None = None,
        pool: WorkerPool | None = None,
        predefine_skills: bool = True,
        examples: int | None = None,
        build: bool = True,
    ) -> None:
        self.predefine_skills = predefine_skills
        self.profile = profile_for(profile) if isinstance(profile, str) else profile
        self.examples = self.profile.first_examples(examples)
        self.role = role
        self.build = build
        self.limits = limits or self.profile.limits
        self.max_replans = self.profile.replans(max_replans, testing=not build)
        self.format_retries = format_retries
        self.max_tokens = max_tokens
        self.pool = pool

    # -- prompts -------------------------------------------------------------------------

    def system_prompt(self) -> str:
        """Role, the ``agent`` object's methods, how to answer, and the human examples."""
        p = self.profile
        helpers = p.helper_description(build=self.build)
        if helpers:
            helpers = "\nFunctions already defined for you:\n" + helpers + "\n"
        return fill(
            "system",
            role=p.role,
            api_intro=p.api_intro,
            api=p.api_description(),
            helpers=helpers,
            examples=render_examples(self.examples),
        )

    def first_message(
        self,
        opening: str,
        *,
        rules_text: str,
        rules_heading: Literal["Rules", "Manual"] = "Rules",
        retrieved: Retrieved | Sequence[Retrieved] | None = None,
    ) -> str:
        """The episode's first user message: rules (or manual), what the libraries gave
        (a skill, a reflection, or both, in that order), the task."""
        return first_message(
            opening,
            rules_text=rules_text,
            rules_heading=rules_heading,
            retrieved=retrieved,
            skill_opening=self.profile.skill_opening,
        )

    # -- the episode ---------------------------------------------------------------------

    async def play(
        self,
        ep: Episode,
        roles: Roles,
        *,
        rules_text: str,
        rules_heading: Literal["Rules", "Manual"] = "Rules",
        retrieved: Retrieved | Sequence[Retrieved] | None = None,
        episode_id: str,
        task_type: str,
        helper_sources: Sequence[str] = (),
        conclude: bool = True,
    ) -> PlannerEpisode:
        """Play ``ep`` to its end and conclude; the planner's trajectory.

        ``helper_sources`` are the examples of the rules (or any code whose
        function definitions should be predefined): only
        their ``def`` statements are used; with ``predefine_skills`` the
        retrieved skills' follow them (a skill's function wins over a rule's
        of the same name, as in the authors' code). ``conclude=False`` (the testing
        stage, which stores no skill or reflection) skips the conclusion
        request. Model errors propagate; what was
        played so far stays in ``ep.trajectory.notes["automanual"]``.
        """
        opening = self.profile.opening(ep.trajectory.initial_observation)
        planned = PlannerEpisode(episode_id, task_type, self.profile.goal(opening), opening)
        if not planned.goal:
            planned.goal = ep.trajectory.task.goal
        notes = ep.trajectory.notes

        def save() -> None:
            notes[NOTES_KEY] = planned.to_dict()

        save()
        api = self.profile.code_api(ep.env)
        gate = RecordingApi(api, self.profile.callable_methods, ep)
        preload = [h for h in self._helpers() if h.strip()]
        sources = list(helper_sources)
        if self.predefine_skills:
            sources += [r.text for r in items(retrieved) if r.kind == "skill"]
        preload += [d for d in (definitions(s) for s in sources) if d]
        earlier: dict[str, str] = {}  # this episode's functions by name, the latest version
        messages = [
            Message("system", self.system_prompt()),
            Message(
                "user",
                self.first_message(
                    opening, rules_text=rules_text, rules_heading=rules_heading, retrieved=retrieved
                ),
            ),
        ]
        session = SandboxSession(pool=self.pool, limits=self.limits, runs=1 + self.max_replans)
        ran = False  # whether code ran before in this episode (a fresh worker then lost it)
        try:
            for number in range(1 + self.max_replans):
                text, answer, problem = await self._answer(roles, messages)
                if answer is None:
                    turn = PlannerTurn(
                        answer=text,
                        feedback=fill("format_failed", problem=problem),
                        error=FORMAT_ERROR,
                    )
                else:
                    carried: list[str] = []
                    if session.fresh:  # the first run, or the worker was lost
                        carried = (
                            [*preload, "\n\n\n".join(earlier.values())] if earlier else preload
                        )
                    lost = session.fresh and ran
                    turn = await self._run(answer, text, gate, ep, carried, session)
                    ran = True
                    if lost:
                        turn.feedback = fill("namespace_lost") + "\n" + turn.feedback
                    for name, source in defined_functions(answer.code).items():
                        earlier.pop(name, None)
                        earlier[name] = source
                planned.turns.append(turn)
                save()
                if ep.done or number == self.max_replans:
                    break
                messages.append(Message("user", fill("feedback", feedback=turn.feedback)))
        finally:
            session.close()
        planned.outcome = classify(ep.trajectory.success, planned.turns)
        save()
        if conclude:
            await self._conclude(roles, messages, planned)
            save()
        return planned

    def _helpers(self) -> list[str]:
        """The profile's helper functions for this stage, in the order they are defined."""
        return [self.profile.helpers, *([self.profile.build_helpers] if self.build else [])]

    def _state_reader(self, api: Any) -> Callable[[], dict[str, Any]] | None:
        """The profile's state attributes read off the code API (None if it has none)."""
        names = tuple(self.profile.api_attributes)
        if not names:
            return None

        def read() -> dict[str, Any]:
            state = api.state()
            return {name: state.get(name) for name in names}

        return read

    async def _ask(
        self,
        roles: Roles,
        messages: list[Message],
        parse: Callable[[str], T],
        retry: Callable[[ParseError], str],
    ) -> Answer[T]:
        """Ask the planner's model until ``parse`` accepts, at most ``1 +
        format_retries`` answers; each refused one stays in ``messages`` with
        ``retry``'s message after it, so the model sees what was wrong."""
        return await ask(
            roles[self.role],
            messages,
            lambda out: parse(out.text),
            params=RequestParams(temperature=0.0, max_tokens=self.max_tokens),
            attempts=1 + self.format_retries,
            feedback=retry,
        )

    async def _answer(
        self, roles: Roles, messages: list[Message]
    ) -> tuple[str, PlannerAnswer | None, str]:
        """One turn's answer, asked again (bounded) while it has no code block.

        Returns (answer text, parsed answer or None, the problem); the last
        answer is the conversation's last message."""
        answer = await self._ask(
            roles,
            messages,
            parse_answer,
            lambda exc: fill("format_retry", problem=str(exc)),
        )
        if answer.ok:
            return answer.text or "", answer.value, ""
        return answer.text or "", None, str(answer.error)

    async def _run(
        self,
        answer: PlannerAnswer,
        text: str,
        gate: RecordingApi,
        ep: Episode,
        preload: list[str],
        session: SandboxSession,
    ) -> PlannerTurn:
        """Run one answer's code in the episode's sandbox session; the turn with its feedback."""
        start, recorded = gate.recorded + gate.skipped, gate.recorded
        result: SandboxResult = await session.run_async(
            answer.code,
            gate,
            api_name="agent",
            api_methods=self.profile.callable_methods,
            api_state=self._state_reader(gate.api),
            preload=preload,
        )
        gate.flush()
        entries = gate.api.history[start:]
        style = self.profile.feedback
        page = None
        if style.show_page and not ep.done:
            page = await asyncio.to_thread(gate.api.html)
        feedback = render_feedback(
            prompts(),
            result,
            entries,
            ep,
            actions=tuple(getattr(type(gate.api), "ACTIONS", ())),
            style=style.action_results,
            result_chars=style.result_chars,
            page=page,
            page_chars=style.page_chars,
        )
        return PlannerTurn(
            answer=text,
            analysis=answer.analysis,
            related_rules=answer.related_rules,
            plan=answer.plan,
            code=answer.code,
            feedback=feedback,
            error=result.error_kind,
            actions=gate.recorded - recorded,  # steps the env took (not calls it refused)
        )

    async def _conclude(
        self, roles: Roles, messages: list[Message], planned: PlannerEpisode
    ) -> None:
        """Ask for the conclusion of the outcome; fill skill_code or reflection."""
        outcome = planned.outcome.value
        last = planned.turns[-1].feedback if planned.turns else ""
        messages.append(
            Message(
                "user",
                fill("conclusion", outcome=outcome, instructions=fill(outcome), feedback=last),
            )
        )
        succeeded = planned.outcome.succeeded
        answer = await self._ask(
            roles,
            messages,
            lambda text: parse_conclusion(text, succeeded=succeeded),
            lambda exc: fill("conclusion_retry", outcome=outcome, problem=str(exc)),
        )
        planned.conclusion = answer.text or ""
        if answer.ok:
            found = answer.value
            planned.skill_code = found.skill_code
            planned.reflection = found.mistakes if found.skill_code else found.reflection


def classify(succeeded: bool, turns: Sequence[PlannerTurn]) -> Outcome:
    """The paper's three cases, from the env's verdict and the turn that reached it.

    Direct success is success within the first turn (the original's
    ``error_step == 0``); success reached in any later turn is indirect,
    whether or not an earlier turn raised: a first turn that ran cleanly but
    left the task undone was still a plan that did not work.
    """
    if not succeeded:
        return Outcome.FAILURE
    if len(turns) > 1:
        return Outcome.INDIRECT_SUCCESS
    return Outcome.DIRECT_SUCCESS
