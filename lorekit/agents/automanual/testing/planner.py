"""A scripted AutoManual planner for ALFWorld, of controlled quality, for the Path Dependence study.

The model only reads its prompt (the planner layout of the issue's contract:
``## Rules`` or ``## Manual``, an optional ``## Skill for a similar task
(TYPE)`` or ``## Reflection from an earlier failure (TYPE)``, ``## Task``;
later ``## Feedback`` and ``## Conclusion: OUTCOME`` messages). It does not
know whether AutoManual or Planner+Lib. calls it; any difference between the
two comes from what their prompts contain.

What it does (knobs in brackets; every draw is seeded by the prompt, so the
same prompt gets the same answer):

1. It reads the goal and the receptacles from the ``## Task`` opening and
   writes real Python for the ALFWorld code API (search with a helper, take,
   change state, place; ``# [Step N]`` comments and asserts).
2. Rules first: a rule that applies to the task's type and carries a key
   phrase of :mod:`~lorekit.agents.automanual.testing.rules` sets that part
   of the strategy (``TWO_APART``: search again for Put Two's second object;
   ``TRANSFORM``: never forget the state change), and so does a wrong one
   (``TWO_SAME``: take the second where the first was; ``SKIP_CHANGE``: leave
   the state change out). It follows the rules of an episode with probability
   ``obey`` (drawn from the task, so both methods draw alike), else ignores them.
3. Otherwise it copies a skill of the same type (path dependence): Put Two's
   skill written after an episode where both objects lay together takes the
   second object from the first one's receptacle, which fails when they lie
   apart (the paper's appendix G.1 case).
4. With neither, it writes the generic program, and forgets the state change
   with probability ``forget`` (unless a reflection of its type names it).
5. On ``## Feedback`` it recognises its own error (the assert text it wrote,
   or a state change it left out) and repairs it with probability ``repair``,
   writing code that goes on from the current state; otherwise it looks again
   where it was (and fails again).
6. On ``## Conclusion`` it writes a skill (success: the program with what this
   episode saw baked in, e.g. "same receptacle" when both objects were
   together and no rule or error told it otherwise; with probability ``bake``,
   else the generic search), with ``### Mistakes`` for an indirect success, or a
   ``### Reflection`` naming the failing step.
"""

from __future__ import annotations

import random
import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

from lorekit.agents.automanual.testing.code import (
    FOUND,
    Strategy,
    TaskGoal,
    kind,
    parse_goal,
    parse_receptacles,
    write_code,
    write_recheck,
    write_redo_change,
    write_second_search,
)
from lorekit.agents.automanual.testing.rules import (
    LOOK_TYPE,
    SKIP_CHANGE,
    TRANSFORM,
    TWO_APART,
    TWO_SAME,
    TWO_TYPE,
    Knowledge,
    recognise,
)
from lorekit.llm.base import Message

ModelFn = Callable[[tuple[Message, ...]], str]
"""A scripted model: an answer for the messages (use with ``lorekit.llm.ScriptedLLM(fn=...)``)."""

_SECTION = re.compile(r"^## +(.+?)\s*$", re.M)
_TYPE_IN = re.compile(r"\(([a-z_]+)\)")
_CODE = re.compile(r"```python\n(.*?)```", re.S)
_CONCLUSION = re.compile(r"^## +Conclusion:?\s*(\w+)", re.M)
_FORGOT = "I forgot to"


def sections(text: str) -> dict[str, str]:
    """``## Heading`` -> body, for every H2 heading of ``text`` (first one wins)."""
    out: dict[str, str] = {}
    marks = list(_SECTION.finditer(text))
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        out.setdefault(m.group(1), text[m.end() : end].strip())
    return out


def draw(seed: int, *parts: str) -> float:
    """A number in [0, 1) fixed by ``seed`` and the text parts (stable across processes)."""
    key = "|".join((str(seed), *parts)).encode()
    return random.Random(zlib.crc32(key)).random()


@dataclass
class _Prompt:
    """The first planner message, read."""

    task: str
    goal: TaskGoal
    receptacles: list[str]
    knowledge: Knowledge
    skill: str | None = None
    reflection: str = ""


def _read_first(text: str, obey: float = 1.0, seed: int = 0) -> _Prompt | None:
    parts = sections(text)
    task = parts.get("Task", "")
    goal = parse_goal(task)
    if goal is None:
        return None
    obeys = obey >= 1.0 or draw(seed, "obey", task) < obey
    know = recognise(_rules_text(text), goal.task_type) if obeys else Knowledge()
    prompt = _Prompt(task, goal, parse_receptacles(task), know)
    for heading, body in parts.items():
        m = _TYPE_IN.search(heading)
        same = m is not None and m.group(1) == goal.task_type
        if heading.startswith("Skill for a similar task") and same:
            code = _CODE.search(body)
            prompt.skill = code.group(1) if code else None
        elif heading.startswith("Reflection from an earlier failure") and same:
            prompt.reflection = body
    return prompt


_PLANNER_HEADINGS = re.compile(
    r"^## +(?:Skill for a similar task|Reflection from an earlier failure|Task)\b", re.M
)
_RULES_HEADING = re.compile(r"^## +(?:Rules|Manual)\s*$", re.M)


def _rules_text(text: str) -> str:
    """The ``## Rules`` / ``## Manual`` section, up to the next planner section.

    A manual has headings of its own, so the section runs to the next heading
    of the planner layout, not to the next ``##`` line.
    """
    start = _RULES_HEADING.search(text)
    if start is None:
        return ""
    end = _PLANNER_HEADINGS.search(text, start.end())
    return text[start.end() : end.start() if end else len(text)]


@dataclass
class _Turn:
    """One planner answer: the text around the code and the strategy it used."""

    analysis: str
    plan: str
    code: str
    strategy: Strategy
    error: str | None = None  # the error kind this answer repaired, if any


@dataclass
class _Episode:
    """The planner's replay of its own episode so far."""

    prompt: _Prompt
    turns: list[_Turn] = field(default_factory=list)
    found: list[tuple[str, str]] = field(default_factory=list)
    repaired: list[str] = field(default_factory=list)
    feedback: str = ""


def planner_model(
    *,
    forget: float = 0.0,
    repair: float = 1.0,
    seed: int = 0,
    obey: float = 1.0,
    bake: float = 1.0,
) -> ModelFn:
    """The scripted planner (see the module docstring) as a function of the messages."""
    for name, p in (("forget", forget), ("repair", repair), ("obey", obey), ("bake", bake)):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"{name} is a probability, got {p}")

    def answer(messages: tuple[Message, ...]) -> str:
        first = next(
            (i for i, m in enumerate(messages) if m.role == "user" and "## Task" in m.content), None
        )
        if first is None:
            return _apology("I cannot find the task in this prompt.")
        prompt = _read_first(messages[first].content, obey, seed)
        if prompt is None:
            return _apology("I cannot tell what this task asks for.")
        episode = _Episode(prompt)
        episode.turns.append(_first_turn(prompt, forget, seed))
        for k in range(first + 1, len(messages)):
            msg = messages[k]
            if msg.role != "user":
                continue
            episode.found += FOUND.findall(msg.content)
            episode.feedback = msg.content
            conclusion = _CONCLUSION.search(msg.content)
            if conclusion is not None:
                return _conclude(episode, conclusion.group(1), bake, seed)
            if k == len(messages) - 1 or messages[k + 1].role == "assistant":
                episode.turns.append(_next_turn(episode, msg.content, repair, seed, k))
        return _render(episode.turns[-1], prompt.knowledge)

    return answer


def _apology(text: str) -> str:
    return (
        f"### Analysis\n{text}\n### Related rules\nnone\n"
        "### Plan\nnone\n### Code\n```python\npass\n```\n"
    )


def _first_turn(prompt: _Prompt, forget: float, seed: int) -> _Turn:
    goal, know = prompt.goal, prompt.knowledge
    notes: list[str] = []
    if prompt.skill is not None:
        strategy = _strategy_of(prompt.skill)
        notes.append(f"I follow the skill of the similar {goal.task_type} task.")
    else:
        forgets = draw(seed, "forget", prompt.task) < forget
        if goal.task_type in TRANSFORM and _mentions_change(prompt.reflection, goal):
            forgets = False
        strategy = Strategy(transform=not forgets)
        notes.append("No skill for this type yet: I search the receptacles with a helper.")
    if know.second == "search":
        strategy = strategy.but(second="search")
        notes.append(f"The rules say the two objects {TWO_APART}: I search again for the second.")
    elif know.second == "same":
        strategy = strategy.but(second="same")
        notes.append(f"The rules say the two objects {TWO_SAME}: I take both there.")
    if know.change is True:
        strategy = strategy.but(transform=True)
        notes.append(f"The rules remind me to {TRANSFORM[goal.task_type]}.")
    elif know.change is False:
        strategy = strategy.but(transform=False)
        notes.append(f"The rules say the object {SKIP_CHANGE[goal.task_type]}: no change.")
    analysis = f"The task is a {goal.task_type} task with {goal.obj}. " + " ".join(notes)
    plan = _plan_text(goal, strategy)
    return _Turn(analysis, plan, write_code(goal, prompt.receptacles, strategy), strategy)


def _strategy_of(skill: str) -> Strategy:
    """What a skill's code does, read back from the code this module writes."""
    same = "same receptacle as the first" in skill
    verbs = ("heat", "cool", "clean", "use", "heat_with", "cool_with", "clean_with")
    change = any(f"agent.{v}(" in skill for v in verbs)
    return Strategy(second="same" if same else "search", transform=change)


def _mentions_change(text: str, goal: TaskGoal) -> bool:
    key = TRANSFORM.get(goal.task_type, "")
    return bool(text) and (key in text.lower() or _FORGOT.lower() in text.lower())


def _plan_text(goal: TaskGoal, s: Strategy) -> str:
    steps = [f"find a {goal.obj} and take it"]
    if goal.task_type in TRANSFORM and s.transform:
        steps.append(TRANSFORM[goal.task_type])
    if goal.task_type != LOOK_TYPE:
        steps.append(f"put it in/on a {goal.recep}")
    if goal.task_type == TWO_TYPE:
        where = "from the same receptacle" if s.second == "same" else "by searching again"
        steps.append(f"get the second {goal.obj} {where} and put it there too")
    return "; ".join(steps) + "."


def _error_kind(episode: _Episode, feedback: str) -> str:
    """Which of its own mistakes the feedback shows: two_apart, forgot or other."""
    goal, last = episode.prompt.goal, episode.turns[-1]
    if goal.task_type == TWO_TYPE and f"no second {goal.obj}" in feedback:
        return "two_apart"
    if goal.task_type in TRANSFORM and not last.strategy.transform:
        return "forgot"
    return "other"


def _next_turn(episode: _Episode, feedback: str, repair: float, seed: int, k: int) -> _Turn:
    prompt, last = episode.prompt, episode.turns[-1]
    goal = prompt.goal
    error: str | None = _error_kind(episode, feedback)
    fixes = draw(seed, "repair", prompt.task, str(k)) < repair
    objs = [o for o, _ in episode.found if kind(o) == goal.obj]
    if error == "two_apart" and fixes:
        analysis = (
            f"The second {goal.obj} was not where the first one was. The two objects "
            f"{TWO_APART}, so I search every receptacle for the second one."
        )
        code = write_second_search(goal, prompt.receptacles)
        strategy = last.strategy.but(second="search")
    elif error == "forgot" and fixes and (objs or goal.task_type == LOOK_TYPE):
        verb = TRANSFORM[goal.task_type]
        analysis = f"{_FORGOT} {verb.split(' it ')[0]}: the task needs me to {verb}."
        lamps = [o for o, _ in episode.found if kind(o) == (goal.toggle or "desklamp")]
        code = write_redo_change(
            goal, prompt.receptacles, objs[0] if objs else "", lamps[0] if lamps else "desklamp_1"
        )
        strategy = last.strategy.but(transform=True)
    elif error == "other" and fixes:
        analysis = "Something went wrong; I start over with the whole program."
        strategy = last.strategy
        code = write_code(goal, prompt.receptacles, strategy)
    else:
        analysis = "I do not see what went wrong. I look again where I found the object."
        strategy = last.strategy
        code = write_recheck(goal, prompt.receptacles, episode.found)
        error = None
    if error is not None:
        episode.repaired.append(error)
    return _Turn(analysis, "Go on from the current state.", code, strategy, error)


def _render(turn: _Turn, know: Knowledge) -> str:
    related = ", ".join(know.used) or "none"
    return (
        f"### Analysis\n{turn.analysis}\n### Related rules\n{related}\n"
        f"### Plan\n{turn.plan}\n### Code\n```python\n{turn.code}```\n"
    )


def _conclude(episode: _Episode, outcome: str, bake: float = 1.0, seed: int = 0) -> str:
    prompt = episode.prompt
    goal = prompt.goal
    if outcome.endswith("success"):
        strategy = episode.turns[-1].strategy.but(transform=True)
        if goal.task_type == TWO_TYPE:
            baked = _baked_second(episode)
            if baked == "same" and bake < 1.0 and draw(seed, "bake", prompt.task) >= bake:
                baked = "search"  # this skill keeps the generic search
            strategy = strategy.but(second=baked)
        code = write_code(goal, prompt.receptacles, strategy)
        parts = []
        if outcome == "indirect_success":
            mistakes = [t.analysis for t in episode.turns[1:] if t.error is not None]
            parts.append("### Mistakes\n" + ("\n".join(f"- {m}" for m in mistakes) or "- none"))
        parts.append(f"### Code\n```python\n{code}```")
        return "\n".join(parts) + "\n"
    named = "Error in [Step" in episode.feedback
    failing = _failing_step(episode.turns[-1 if named else 0].code, episode.feedback)
    return (
        f"### Reflection\nThe task ({goal.task_type}) failed. The code that failed was:\n"
        f"```python\n{failing}\n```\n"
        + (
            "Its assert failed: what it expected was not what the observation showed.\n"
            if named
            else "The code ran to the end, but the task was still not done after this step.\n"
        )
    )


def _baked_second(episode: _Episode) -> str:
    """Put Two's shortcut, written into the skill when this episode saw both objects together."""
    if episode.prompt.knowledge.second == "search" or "two_apart" in episode.repaired:
        return "search"
    places = [p for o, p in episode.found if kind(o) == episode.prompt.goal.obj]
    return "same" if len(places) >= 2 and places[0] == places[1] else "search"


def _failing_step(code: str, feedback: str) -> str:
    """The ``# [Step N]`` segment the feedback's error names (else the last one)."""
    named = re.findall(r"Error in \[Step (\d+)\]", feedback)
    marks = {m.group(1): m.start() for m in re.finditer(r"^# \[Step (\d+)\]", code, re.M)}
    if not marks:
        return code.strip()
    start = marks.get(named[-1], 0) if named else max(marks.values())
    following = [p for p in marks.values() if p > start]
    return code[start : min(following) if following else len(code)].strip()
