"""Scripted AutoManual models for MiniWoB++: planner, builder, consolidator, formulator.

``reproduce run --simulate`` on the MiniWoB++ experiments (Tables 2, 5 and 7)
and the suite's fake server answer with these. They read AutoManual's real
prompts as a model would and answer in its formats; what they can do is fixed
by design, so a run with them checks the plumbing (prompts, parsing, the rule
system, the libraries, the manual, the tables), never what a model can do.

Planner (:func:`planner_model`), from its first message and the system prompt:

- a skill under ``## Skill for a similar task`` is played as
  :func:`~.published.replay_model` plays it: part by part, its string
  literals adapted to this task's sentence (:func:`~.published.adapt_text`);
- with no skill, the human example of the system prompt whose task sentence
  is the most like this task's (word by word) is played the same way, answer
  by answer, adapted;
- a skill or example of another template stays another task's code: its
  xpaths name elements this page lacks, the page refuses the action and the
  code stops there, as a model's copied code would. After an error, or once
  the parts are played, it answers code that does nothing (it repairs
  nothing); ``## Rules`` and ``## Manual`` it reads but does not follow;
- ``## Conclusion`` of a success: the code it ran, one ```` ```python ````
  block opening with a ``# Task: SENTENCE`` line (the task its literals come
  from: a MiniWoB++ skill's stored goal is its page's name, so this note is what
  the planner adapts a skill from), each part but the last ending in a
  ``# Pause here`` line (where the next answer began; :func:`plan_parts`
  splits a skill there again), with
  ``### Mistakes`` for an indirect success; of a failure: ``### Reflection``
  quoting the part that stopped and the error the feedback showed.

Builder (:func:`builder_model`): it reads the episode the builder's prompt
shows (``Task type: TYPE`` and the ``Task: ...`` line of the trajectory, the
``Code:`` blocks, the feedback's ``The code stopped early: ...`` /
``Action failed: ...`` lines, and ``## Result: OUTCOME``) and the rules under
``## Current rules`` (``rule_N (Type): content``). It finds only what the
feedback states in words: the first error line (cut to 300 characters), or
that the code ran and the task was still not done. It never finds a cause, a
fix or a page's mechanism. A success of a type without a Success Process rule
gets one (``For TYPE tasks (like "..."): ...``, the ``# [Step N]`` comments of
the code that worked as its steps and that code as its example); an indirect
success whose feedback showed an error also gets a Corrected Error rule; a
failure gets an Unsolved Error rule naming the task type and what failed,
unless the type already has one that says so. Its diagnosis is ``rules`` when
it has something to write, else ``agent``.

Consolidator and formulator: :func:`~.builder.consolidator_model` and
:func:`~.builder.formulator_model`, given MiniWoB++'s task types (a rule's type
is the first one its text names, whole: ``email-inbox`` is not read inside
``email-inbox-forward-nl``).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from lorekit.agents.automanual.planner_parse import code_blocks
from lorekit.agents.automanual.testing.builder import (
    consolidator_model,
    formulator_model,
    rendered_rules,
    scope_of,
)
from lorekit.agents.automanual.testing.published import (
    _WORDS,
    adapt_text,
    parts,
    shown_skill,
    task_of,
)
from lorekit.llm.base import Message
from lorekit.llm.roles import Roles

ModelFn = Callable[[tuple[Message, ...]], str]

PAUSE = "# Pause here: read the page before going on."
"""The line a skill's part ends with where the next answer began."""
_PAUSE_LINE = re.compile(r"^[ \t]*# Pause\b.*$", re.M)
_TASK_LINE = re.compile(r"^Task: (.+)$", re.M)
_TASK_COMMENT = re.compile(r"\A\s*# Task: (.+)$", re.M)
_EXAMPLE_START = "The task (first observation):\n"
_ANSWER_START = "\nAn answer:\n"
_FEEDBACK_START = "\nThe feedback on it:\n"
_STOPPED = re.compile(r"The code stopped early: (.+)")
_REFUSED = re.compile(r"Action failed: (.+)")
_CONCLUSION = re.compile(r"^## Conclusion:\s*(\w+)", re.M)
_RESULT = re.compile(r"^## Result:\s*(direct_success|indirect_success|failure)", re.M)
_TYPE_LINE = re.compile(r"^Task type: (\S+)\s*$", re.M)
_CODE_IN_TRAJECTORY = re.compile(r"^Code:\n```python\n(.*?)\n```$", re.S | re.M)
_STEP = re.compile(r"^[ \t]*# \[Step \d+\]\s*(.+)$", re.M)
ERROR_CHARS = 300


# -- the planner -------------------------------------------------------------------------


def plan_parts(code: str) -> list[str]:
    """A skill's code in the parts it was played in: split where a part ends with a
    ``# Pause`` line (this module's skills) or at a fence line (the authors')."""
    return parts(_PAUSE_LINE.sub(lambda m: f"{m.group(0)}\n```", code))


def shown_examples(system: str) -> list[tuple[str, list[str]]]:
    """``(task sentence, [code of each answer])`` of each human example the planner's
    system prompt shows (``The task (first observation):`` / ``An answer:``)."""
    out: list[tuple[str, list[str]]] = []
    chunks = system.split(_EXAMPLE_START)[1:]
    for chunk in chunks:
        line = _TASK_LINE.search(chunk)
        if line is None:
            continue
        codes = []
        for piece in chunk.split(_ANSWER_START)[1:]:
            answer = piece.split(_FEEDBACK_START, 1)[0]
            code = "\n\n".join(b for b in code_blocks(answer) if b.strip())
            if code.strip():
                codes.append(code)
        if codes:
            out.append((line.group(1).strip(), codes))
    return out


def likeness(a: str, b: str) -> float:
    """How alike two task sentences are, word by word (0 to 1)."""
    return difflib.SequenceMatcher(a=_WORDS.findall(a), b=_WORDS.findall(b)).ratio()


def _task_sentence(text: str) -> str:
    task = task_of(text)
    line = _TASK_LINE.search(task)
    return line.group(1).strip() if line else task.strip().split("\n", 1)[0]


def _plan(messages: tuple[Message, ...], first: Message) -> tuple[list[str], str]:
    """The parts this episode plays, adapted, and where they come from."""
    sentence = _task_sentence(first.content)
    skill = shown_skill(first.content)
    if skill is not None:
        goal, code = skill
        noted = _TASK_COMMENT.match(code)  # the skill's own note of its task sentence
        if noted is not None:
            goal = noted.group(1).strip()
        return [adapt_text(p, goal, sentence) for p in plan_parts(code)], "the stored skill"
    system = next((m.content for m in messages if m.role == "system"), "")
    examples = shown_examples(system)
    if not examples:
        return [], ""
    goal, codes = max(examples, key=lambda e: likeness(e[0], sentence))
    return [adapt_text(c, goal, sentence) for c in codes], f'the example "{goal}"'


def _answer(code: str, analysis: str, plan: str) -> str:
    return (
        f"### Analysis\n{analysis}\n### Related rules\nnone\n### Plan\n{plan}\n"
        f"### Code\n```python\n{code}\n```"
    )


def _error_in(feedback: str) -> str:
    """The first error the feedback names (the code's stop, or a refused action)."""
    m = _STOPPED.search(feedback) or _REFUSED.search(feedback)
    return m.group(1).strip()[:ERROR_CHARS] if m else ""


def _progress(messages: tuple[Message, ...]) -> tuple[int, int | None, str]:
    """(answers with code so far, the answer whose code stopped with an error or None,
    that error)."""
    turns, failed, error = 0, None, ""
    for m in messages:
        if m.role == "assistant" and "### Code" in m.content:
            turns += 1
        elif m.role == "user" and turns and failed is None and m.content.startswith("## "):
            found = _error_in(m.content)
            if found:
                failed, error = turns - 1, found
    return turns, failed, error


def planner_model() -> ModelFn:
    """The scripted MiniWoB++ planner (see the module docstring)."""

    def answer(messages: tuple[Message, ...]) -> str:
        first = next((m for m in messages if m.role == "user" and "## Task" in m.content), None)
        if first is None:
            return _answer("pass", "There is no task in this prompt.", "none")
        plan, source = _plan(messages, first)
        turns, failed, error = _progress(messages)
        last = messages[-1].content if messages[-1].role == "user" else ""
        conclusion = _CONCLUSION.search(last)
        if conclusion is not None:
            sentence = _task_sentence(first.content)
            return _conclude(conclusion.group(1), plan, turns, failed, error, sentence)
        if not plan:
            return _answer("pass", "I have no code for this task.", "none")
        if failed is not None:
            return _answer(
                "pass",
                f"The page refused my code: {error}. I do not see how to do it otherwise.",
                "none",
            )
        if turns >= len(plan):
            return _answer("pass", f"I have played {source} to its end.", "none")
        return _answer(
            plan[turns],
            f"This task is like {source}: I play its part {turns + 1} of {len(plan)}, "
            "adapted to this task's words.",
            f"Run {source}'s code, adapted, one part per answer.",
        )

    return answer


def _conclude(
    outcome: str, plan: list[str], turns: int, failed: int | None, error: str, sentence: str
) -> str:
    played = plan[: min(turns, len(plan))]
    if outcome.endswith("success"):
        lines = [f"# Task: {sentence}"]  # what its literals are the words of
        for i, part in enumerate(played):
            part = _TASK_COMMENT.sub("", part, count=1).lstrip("\n") if i == 0 else part
            body = part.rstrip()
            if i < len(played) - 1 and not _PAUSE_LINE.search(body.rsplit("\n", 1)[-1]):
                body += f"\n{PAUSE}"
            lines.append(body)
        code = "\n".join([*lines[:1], "\n\n".join(lines[1:]) or "pass"])
        head = ""
        if outcome == "indirect_success":
            mistake = f"- the page refused: {error}" if error else "- none: I paused to read"
            head = f"### Mistakes\n{mistake}\n"
        return f"{head}### Code\n```python\n{code}\n```\n"
    if failed is not None and failed < len(plan):
        quoted = plan[failed]
        why = f"It stopped with: {error}"
    else:
        quoted = played[-1] if played else "pass"
        why = "It ran without errors, but the task was not accomplished."
    return (
        "### Reflection\nThe task failed. The code that failed was:\n"
        f"```python\n{quoted}\n```\n{why}\n"
    )


# -- the builder -------------------------------------------------------------------------


def _section(text: str, heading: str, until: str) -> str:
    start = text.find(heading)
    if start < 0:
        return ""
    end = text.find(until, start + len(heading))
    return text[start + len(heading) : end if end >= 0 else len(text)]


def _call(fn: str, **kwargs: str) -> str:
    args = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
    return f"rule_system.{fn}({args})"


def _calls(rules_text: str, trajectory: str, outcome: str) -> list[str]:
    """The rule-system calls one episode gets (see the module docstring)."""
    typed = _TYPE_LINE.search(trajectory)
    if typed is None:
        return []
    task_type = typed.group(1)
    line = _TASK_LINE.search(trajectory)
    goal = line.group(1).strip()[:200] if line else ""
    mine = [r for r in rendered_rules(rules_text) if scope_of(r.content, [task_type]) == task_type]
    errors = [e for e in (_error_in(x) for x in trajectory.split("Feedback:\n")[1:]) if e]
    scope = f"For {task_type} tasks"
    calls: list[str] = []
    if outcome == "failure":
        what = errors[-1] if errors else "the code ran without errors and the task was not done"
        if not any(r.type == "Unsolved Error" and what in r.content for r in mine):
            calls.append(
                _call(
                    "write_rule",
                    rule=f"{scope}: {what}; the episode failed there.",
                    type="Unsolved Error",
                )
            )
        return calls
    code = [c.strip() for c in _CODE_IN_TRAJECTORY.findall(trajectory) if c.strip()]
    worked = code[len(code) - 1 :] if errors else code  # after an error: the last code only
    if outcome == "indirect_success" and errors and not any(errors[0] in r.content for r in mine):
        calls.append(
            _call(
                "write_rule",
                rule=f"{scope}: at first {errors[0]}; the code that followed worked.",
                type="Corrected Error",
                example=worked[-1][:3000] if worked else "",
            )
        )
    if not any(r.type == "Success Process" for r in mine):
        steps = [s.strip() for c in worked for s in _STEP.findall(c)]
        said = "; ".join(steps) if steps else "the code below"
        example = f"\n{PAUSE}\n".join(worked)[:5000]
        calls.append(
            _call(
                "write_rule",
                rule=f'{scope} (like "{goal}"): the steps that worked: {said}.'[:2000],
                type="Success Process",
                example=example,
            )
        )
    return calls


def builder_model() -> ModelFn:
    """The scripted MiniWoB++ builder: a diagnosis when asked, then rule-system calls."""

    def answer(messages: tuple[Message, ...]) -> str:
        text = "\n\n".join(m.content for m in messages if m.role == "user")
        rules_text = _section(text, "## Current rules", "## Trajectory")
        trajectory = _section(text, "## Trajectory", "## Result")
        result = _RESULT.search(text)
        calls = _calls(rules_text, trajectory, result.group(1)) if result else []
        asked = "## Manage rules" not in messages[-1].content and not any(
            m.role == "assistant" and "Diagnosis:" in m.content for m in messages
        )
        if asked:
            if calls:
                return "### Analysis\nThe rules do not cover this episode.\nDiagnosis: rules\n"
            return "### Analysis\nThe rules already say what happened here.\nDiagnosis: agent\n"
        body = "\n".join([*calls, "rule_system.stop_generating()"])
        return f"```python\n{body}\n```\n"

    return answer


# -- the four roles ----------------------------------------------------------------------


def task_types(env_kwargs: Mapping[str, Any] | None = None) -> list[str]:
    """The env's task types (``tasks``' pages), then AutoManual's 53 not among them."""
    from lorekit.envs.miniwob.env import resolve_tasks, task_lists

    given: Sequence[str] = resolve_tasks((env_kwargs or {}).get("tasks", "automanual-53"))
    return list(dict.fromkeys([*given, *task_lists()["automanual-53"]]))


def stage_roles(env_kwargs: Mapping[str, Any] | None = None) -> Roles:
    """One scripted model per AutoManual stage (``planner`` also the default), for
    ``reproduce run --simulate`` on MiniWoB++."""
    from lorekit.llm.scripted import ScriptedLLM

    types = task_types(env_kwargs)
    fns = {
        "planner": planner_model(),
        "builder": builder_model(),
        "consolidator": consolidator_model(task_types=types),
        "formulator": formulator_model(title="MiniWoB++ manual", task_types=types),
    }
    return Roles(
        {
            role: ScriptedLLM(fn=fn, model=f"simulated-automanual-{role}")
            for role, fn in fns.items()
        },
        "planner",
    )
