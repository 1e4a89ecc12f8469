"""Scripted AutoManual builder, consolidator and formulator for the Path Dependence study.

They read the prompts the way a model would and answer in the contract's
formats; what they can find is fixed by design. The builder recognises only
the errors the scripted planner
(:mod:`lorekit.agents.automanual.testing.planner`) makes and names, and writes
rules containing exactly the key phrases that planner follows
(:mod:`lorekit.agents.automanual.testing.rules`). The study built on them
therefore shows the mechanism (a rule fixes a systematic error that a copied
skill repeats), not that a real model would find these rules. With
``wrong`` it writes, in an episode drawn with that chance, the opposite
rules (:data:`~.rules.TWO_SAME`, :data:`~.rules.SKIP_CHANGE`),
which the planner follows as faithfully: the study's condition where a rule
hurts. A wrong rule that the planner followed into the same error again is
rewritten (drawn again) when the error is next repaired.

Prompt markers they rely on (the lead's prompts must keep them, or these
functions be adapted):

- Builder: the task's opening line ``Your task is to: ...`` somewhere in the
  prompt (the trajectory); the outcome as one of ``direct_success``,
  ``indirect_success``, ``failure`` after the word ``Result`` (e.g.
  ``## Result: failure``); the current rules in a ``## Current rules`` section
  rendered with ``rule_N (Type): content`` (the rule system's ``render()``).
  A request for a diagnosis (no earlier assistant answer with a ``Diagnosis:``
  line, and no ``## Manage rules`` in the last message: a direct success skips
  the diagnosis) gets one, ending ``Diagnosis: rules`` or ``Diagnosis: agent``;
  every other request gets one ```` ```python ```` block of
  ``rule_system.write_rule / update_rule / stop_generating`` calls.
- Consolidator: the rules rendered as above, anywhere in the user messages,
  and the limit as ``at most N``, ``the limit is N`` or ``max_rules: N``;
  answers one block of ``update_rule`` / ``delete_rule`` calls ending with
  ``stop_generating()``. A follow-up message that shows the rules again is
  read afresh (the last message showing rules wins).
- Formulator: the rules rendered as above, or as ``### rule_N`` blocks with
  ``Type:`` and ``Rule:`` lines; answers a ```` ```markdown ```` manual (``#``
  title, one ``##`` section per task type) listing every rule once as
  ``**rule_N**``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lorekit.agents.automanual.testing.code import (
    parse_goal,
)
from lorekit.agents.automanual.testing.planner import draw, sections
from lorekit.agents.automanual.testing.rules import (
    ALL_TYPES,
    SKIP_CHANGE,
    TRANSFORM,
    TWO_APART,
    TWO_SAME,
    TWO_TYPE,
    recognise,
    rule_chunks,
)
from lorekit.envs.alfworld.world import TASK_TYPES
from lorekit.llm.base import Message
from lorekit.llm.roles import Roles

ModelFn = Callable[[tuple[Message, ...]], str]

_RESULT = re.compile(r"Result\W*(direct_success|indirect_success|failure)", re.I)
_RENDERED = re.compile(r"^[ \t*#>-]*(rule_\d+)[ \t*]*\(([^)\n]+)\):[ \t]*(.+)$", re.M)
_BLOCK = re.compile(r"^#+\s*(rule_\d+)\s*\nType:\s*(.+)\nRule:\s*(.+)$", re.M)
_EXAMPLE = re.compile(r"^(`{3,})[a-z]*\n(.*?)^\1\s*$", re.M | re.S)
_LIMIT = re.compile(r"(?:at most|no more than|the limit is|max_rules\s*[:=])\s*(\d+)", re.I)

UNSOLVED = {
    "two_apart": "the second object was not in the receptacle where the first one was found",
    "forgot": "placing the object did not complete the task",
}
"""What the builder's Unsolved Error rules say, per error (how it finds them again)."""


@dataclass(frozen=True)
class _Finding:
    error: str  # "two_apart" | "forgot"
    solved: bool


def _prompt_text(messages: tuple[Message, ...]) -> str:
    return "\n\n".join(m.content for m in messages if m.role != "assistant")


def _findings(text: str, obj: str, succeeded: bool) -> list[_Finding]:
    """The planner errors the trajectory shows, and whether the episode got past them."""
    out = []
    if re.search(rf"no second {re.escape(obj)} in [a-z]+_\d+", text):
        out.append(_Finding("two_apart", succeeded and TWO_APART in text))
    if "I forgot to" in text:
        out.append(_Finding("forgot", succeeded))
    elif "the task was still not done" in text:
        out.append(_Finding("forgot", False))
    return out


def _scope(task_type: str) -> str:
    return f"For {task_type} tasks"


def _fix_rule(task_type: str, error: str) -> tuple[str, str]:
    """(content, example) of the Corrected Error rule for ``error``."""
    if error == "two_apart":
        return (
            f"{_scope(task_type)}: the two objects {TWO_APART}. After putting the first one "
            "in place, search every receptacle again for the second one instead of going back "
            "to where the first one was.",
            "second, found_at = find_object(agent, places, 'soapbottle')  # search again",
        )
    key = TRANSFORM.get(task_type, "finish the state change")
    return (
        f"{_scope(task_type)}: placing the object is not enough; {key} before placing it "
        "(or, for a lamp, while holding the object).",
        f"# {key} first, then place the object",
    )


def _success_rule(task_type: str, learned_apart: bool) -> tuple[str, str]:
    steps = ["search the receptacles with find_object (open closed ones)", "take the object"]
    if task_type in TRANSFORM:
        steps.append(TRANSFORM[task_type])
    if task_type != "look_at_obj_in_light":
        steps.append("go to the target receptacle, open it if closed, and put the object there")
    if task_type == TWO_TYPE:
        tail = f"; the two {TWO_APART}" if learned_apart else ""
        steps.append(f"then find the second object and put it there too{tail}")
    return f"{_scope(task_type)}: " + ", ".join(steps) + ".", ""


def _wrong_rule(task_type: str, error: str) -> tuple[str, str]:
    """(content, example) of the opposite rule: what a builder that drew the wrong
    conclusion writes (the scripted planner follows it like a right one)."""
    if error == "two_apart" and task_type == TWO_TYPE:
        return (
            f"{_scope(task_type)}: the two objects {TWO_SAME}. After putting the first one "
            "in place, go back to where it was and take the second one there.",
            "",
        )
    if task_type in SKIP_CHANGE:
        return (
            f"{_scope(task_type)}: the object {SKIP_CHANGE[task_type]} when found; "
            "go straight on to the target.",
            "",
        )
    return _vague_rule(task_type)


def _wrong_success_rule(task_type: str) -> tuple[str, str]:
    """A Success Process that generalises wrongly (no state change; Put Two: one place)."""
    steps = ["search the receptacles with find_object (open closed ones)", "take the object"]
    if task_type in SKIP_CHANGE:
        steps.append(f"it {SKIP_CHANGE[task_type]}, so no state change is needed")
    if task_type != "look_at_obj_in_light":
        steps.append("go to the target receptacle, open it if closed, and put the object there")
    if task_type == TWO_TYPE:
        steps.append(f"the two objects {TWO_SAME}: take the second one where the first was")
    return f"{_scope(task_type)}: " + ", ".join(steps) + ".", ""


def _vague_rule(task_type: str) -> tuple[str, str]:
    """What a careless builder writes: true, and of no use to the planner."""
    return (
        f"{_scope(task_type)}: read every observation carefully and make sure each action "
        "worked before the next one.",
        "",
    )


def _call(fn: str, **kwargs: str) -> str:
    args = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
    return f"rule_system.{fn}({args})"


def builder_model(*, mistake: float = 0.0, seed: int = 0, wrong: float = 0.0) -> ModelFn:
    """The scripted builder: diagnosis first, then rule-system calls (see the module docstring).

    ``mistake`` is the chance, per episode (seeded by the prompt), that each
    rule it would write with a key phrase comes out vague instead; ``wrong``
    the chance (drawn from the trajectory) that it comes out as the opposite.
    """
    if not (0.0 <= mistake <= 1.0 and 0.0 <= wrong <= 1.0):
        raise ValueError(f"mistake and wrong are probabilities, got {mistake}, {wrong}")

    def answer(messages: tuple[Message, ...]) -> str:
        text = _prompt_text(messages)
        rules_text = sections(text).get("Current rules", "")
        trajectory = text.replace(rules_text, "") if rules_text else text
        goal = parse_goal(trajectory)
        result = _RESULT.search(text)
        asked = _asks_diagnosis(messages)
        if goal is None or result is None:
            if asked:
                return "I cannot read the task or its result.\nDiagnosis: agent"
            return "```python\nrule_system.stop_generating()\n```"
        outcome = result.group(1).lower()
        calls = _plan_calls(
            goal.task_type,
            rules_text,
            _findings(trajectory, goal.obj, outcome != "failure"),
            outcome != "failure",
            draw(seed, "builder", trajectory) < mistake,
            wrong > 0.0 and draw(seed, "wrong", _first_user(messages)) < wrong,
        )
        if asked:
            verdict = "rules" if calls else "agent"
            why = (
                "The rules do not cover what happened in this episode."
                if calls
                else "The rules already cover this; the errors, if any, were the agent's."
            )
            return f"### Analysis\n{why}\nDiagnosis: {verdict}\n"
        body = "\n".join([*calls, "rule_system.stop_generating()"])
        return f"```python\n{body}\n```\n"

    return answer


def _first_user(messages: tuple[Message, ...]) -> str:
    """The first request's text: the same for the diagnosis and the calls that follow."""
    return next((m.content for m in messages if m.role == "user"), "")


def _asks_diagnosis(messages: tuple[Message, ...]) -> bool:
    if messages and "## Manage rules" in messages[-1].content:
        return False
    return not any(m.role == "assistant" and "Diagnosis:" in m.content for m in messages)


def _plan_calls(
    task_type: str,
    rules_text: str,
    findings: list[_Finding],
    succeeded: bool,
    careless: bool,
    wrong: bool = False,
) -> list[str]:
    """The rule-system calls for one trajectory (empty: nothing to add)."""
    know = recognise(rules_text, task_type)
    mine = [c for c in rule_chunks(rules_text) if c.applies_to(task_type)]
    covered = {"two_apart": know.second == "search", "forgot": know.change is True}
    # a wrong rule that decided the point the error is about: rewritten in place
    # unless it is a Success Process (then a newer Corrected Error outranks it)
    misled = {
        error: know.deciders.get(point, "")
        for error, point, bad in (("two_apart", "second", "same"), ("forgot", "change", False))
        if (know.second if point == "second" else know.change) == bad
    }
    types = {c.rule_id: c.rule_type for c in mine}
    calls: list[str] = []
    for f in findings:
        if covered[f.error]:
            continue
        if not f.solved:
            if not any(UNSOLVED[f.error] in c.text for c in mine):
                content = f"{_scope(task_type)}: {UNSOLVED[f.error]}; the episode failed there."
                calls.append(_call("write_rule", rule=content, type="Unsolved Error"))
            continue
        content, example = (
            _vague_rule(task_type)
            if careless
            else _wrong_rule(task_type, f.error)
            if wrong
            else _fix_rule(task_type, f.error)
        )
        old_id = next((c.rule_id for c in mine if UNSOLVED[f.error] in c.text), "")
        bad = misled.get(f.error, "")
        if not old_id and bad and types.get(bad) != "Success Process":
            old_id = bad
        if old_id:
            calls.append(
                _call(
                    "update_rule",
                    rule_id=old_id,
                    rule=content,
                    type="Corrected Error",
                    example=example,
                )
            )
        else:
            calls.append(_call("write_rule", rule=content, type="Corrected Error", example=example))
    if succeeded and not any(c.rule_type == "Success Process" for c in mine):
        apart = any(f.error == "two_apart" and f.solved for f in findings)
        content, _ = (
            _vague_rule(task_type)
            if careless
            else _wrong_success_rule(task_type)
            if wrong
            else _success_rule(task_type, apart)
        )
        calls.append(_call("write_rule", rule=content, type="Success Process"))
    return calls


# -- consolidator and formulator ----------------------------------------------------------


@dataclass(frozen=True)
class _Rendered:
    rule_id: str
    type: str
    content: str
    example: str = ""

    def scope(self, task_types: Sequence[str] = TASK_TYPES) -> str:
        """The first of ``task_types`` the content names (as a whole name), else general."""
        return scope_of(self.content, task_types)


def scope_of(content: str, task_types: Sequence[str]) -> str:
    """The first of ``task_types`` named in ``content`` (a whole name: ``email-inbox``
    is not found in ``email-inbox-forward-nl``), else ``"general"``."""
    low = content.lower()
    for t in task_types:
        if re.search(rf"(?<![\w-]){re.escape(t)}(?![\w-])", low):
            return t
    return "general"


def rendered_rules(text: str) -> list[_Rendered]:
    """Rules shown as ``rule_N (Type): content`` lines (the rule system's ``render()``) or
    as ``### rule_N`` / ``Type: ...`` / ``Rule: ...`` blocks (the formulator's prompt);
    the first mention of each id, with the first fenced example before the next rule."""
    seen: dict[str, _Rendered] = {}
    for pattern in (_RENDERED, _BLOCK):
        marks = list(pattern.finditer(text))
        for i, m in enumerate(marks):
            end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
            fenced = _EXAMPLE.search(text, m.end(), end)
            example = fenced.group(2).strip("\n") if fenced else ""
            parts = (m.group(2).strip(), m.group(3).strip(), example)
            seen.setdefault(m.group(1), _Rendered(m.group(1), *parts))
    return sorted(seen.values(), key=lambda r: int(r.rule_id.split("_")[1]))


def _without_scope(content: str) -> str:
    """A merged rule's content, its "For ... tasks:" scope dropped (the host rule says it)."""
    rest = content.split(":", 1)[1].strip() if content.startswith("For ") else content
    return rest[:1].upper() + rest[1:]


def _last_rules(messages: tuple[Message, ...]) -> str:
    """The last user message that shows rules (a follow-up shows them as they are now)."""
    shown = [m.content for m in messages if m.role == "user" and rendered_rules(m.content)]
    return shown[-1] if shown else ""


_CODE_TYPES = ("Success Process", "Useful Helper Method")
"""Rule types that hold code: never deleted by the consolidator, never merged together."""


def consolidator_model(
    *, default_limit: int = 12, task_types: Sequence[str] = TASK_TYPES
) -> ModelFn:
    """Folds rules of one task type into one (update + delete) until under the limit.

    A rule's task type is the first of ``task_types`` (ALFWorld's by default) its
    text names. In each task type (or the general group), the rules without code are
    merged into the type's Success Process rule when there is one, else into
    the oldest of them; rules holding code are never deleted, and two of them
    are never merged.
    """

    def answer(messages: tuple[Message, ...]) -> str:
        text = _last_rules(messages)
        rules = rendered_rules(text)
        m = _LIMIT.search(text) or _LIMIT.search(_prompt_text(messages))
        limit = int(m.group(1)) if m else default_limit
        groups: dict[str, list[_Rendered]] = {}
        for r in rules:
            groups.setdefault(r.scope(task_types), []).append(r)
        calls: list[str] = []
        count = len(rules)
        for group in sorted(groups.values(), key=lambda g: (-len(g), g[0].rule_id)):
            if count <= limit:
                break
            loose = [r for r in group if r.type not in _CODE_TYPES]
            hosts = [r for r in group if r.type == "Success Process"] or loose[:1]
            if not hosts or len(loose) - (hosts[0] in loose) < 1:
                continue
            keep = hosts[0]
            gone = [r for r in loose if r is not keep]
            merged = " ".join([keep.content, *(_without_scope(r.content) for r in gone)])
            extra = [r.example for r in gone if r.example]
            if extra:  # keep the merged rules' examples too
                example = "\n\n".join([keep.example, *extra]).strip("\n")
                calls.append(
                    _call("update_rule", rule_id=keep.rule_id, rule=merged, example=example)
                )
            else:
                calls.append(_call("update_rule", rule_id=keep.rule_id, rule=merged))
            calls += [_call("delete_rule", rule_id=r.rule_id) for r in gone]
            count -= len(gone)
        calls.append("rule_system.stop_generating()")
        return "```python\n" + "\n".join(calls) + "\n```\n"

    return answer


def formulator_model(
    *, title: str = "ALFWorld manual", task_types: Sequence[str] = TASK_TYPES
) -> ModelFn:
    """Groups the rules by the task type they name (the first of ``task_types``,
    ALFWorld's by default) and writes them out as a Markdown manual."""

    def answer(messages: tuple[Message, ...]) -> str:
        rules = rendered_rules(_last_rules(messages))
        groups: dict[str, list[_Rendered]] = {}
        for r in rules:
            scope = "general" if ALL_TYPES in r.content.lower() else r.scope(task_types)
            groups.setdefault(scope, []).append(r)
        lines = [f"# {title}", ""]
        for scope in ["general", *task_types]:
            if scope not in groups:
                continue
            heading = "General rules" if scope == "general" else f"Tasks of type {scope}"
            intro = (
                "What holds in every task."
                if scope == "general"
                else f"How {scope} tasks are done and the errors seen in them."
            )
            lines += [f"## {heading}", "", intro, ""]
            lines += [f"- **{r.rule_id}** ({r.type}): {r.content}" for r in groups[scope]]
            lines.append("")
        return "```markdown\n" + "\n".join(lines).rstrip() + "\n```\n"

    return answer


def stage_roles(env_kwargs: Mapping[str, Any] | None = None) -> Roles:
    """One scripted model per AutoManual stage (``planner`` also the default), as the
    Path Dependence study uses them; for ``reproduce run --simulate`` on ALFWorld."""
    from lorekit.agents.automanual.testing.planner import planner_model
    from lorekit.llm.scripted import ScriptedLLM

    fns = {
        "planner": planner_model(),
        "builder": builder_model(),
        "consolidator": consolidator_model(),
        "formulator": formulator_model(),
    }
    return Roles(
        {
            role: ScriptedLLM(fn=fn, model=f"simulated-automanual-{role}")
            for role, fn in fns.items()
        },
        "planner",
    )
