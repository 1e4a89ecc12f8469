"""A scripted test-time planner that plays the skill it is shown, adapted to its task.

The testing stage with a published manual needs a planner to run in the suite
and against a served model without one: this one reads the first planner
message as AutoManual's prompt lays it out (the skill under ``## Skill for a
similar task``, the task under ``## Task``) and answers, turn by turn, with the
skill's code. Its adaptations are small and mechanical, so that the same plans
can be run through the authors' own wrappers and compared outcome by outcome:

- ALFWorld (:func:`adapt_alfworld`): the skill's object, target and lamp types
  become the task's (read from both goal sentences), its list of receptacles
  to search becomes the room's, and a loop over ``range(1, N)`` receptacles of
  the target type counts the room's;
- MiniWoB++ (:func:`adapt_text`): inside the code's string literals, a word
  of the skill's task sentence is replaced by the one this task's sentence has
  in its place: where the two differ word for word in one template ("Tora" for
  "Bob"), where an email task of another template names its sender or
  recipient ("by X", "from X", "X's email"; "to Y"), and, for "the Nth"
  result, the index counted from 0 (``'1'`` for the 2nd).

A skill written in several parts (MiniWoB++'s, split where the build paused
to read the page: a line of ``` then ```python) is played one part per
answer (:func:`parts`); after the last part, and without a skill, the answer
runs nothing.
"""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Callable, Mapping
from typing import Any

from lorekit.agents.automanual.testing.code import kind, parse_goal, parse_receptacles
from lorekit.llm import Message, Roles

ModelFn = Callable[[tuple[Message, ...]], str]

_SKILL = re.compile(
    r"^## Skill for a similar task \((?P<type>[^)\n]*)\)\n"
    r"(?:Where that task began: [^\n]*\n)?Goal of that task: (?P<goal>[^\n]*)\n"
    r"[^\n]*\n```python\n(?P<code>.*)\n```\s*$",
    re.S | re.M,
)
_FENCE_LINE = re.compile(r"^\s*```\s*(?:python)?\s*$")
_IDS_LIST = re.compile(r"\[(?:\s*'[a-z]+_\d+'\s*,?)+\s*\]")
_RANGE = re.compile(r"range\(1, \d+\)")
_LITERAL = re.compile(r"(\"[^\"\n]*\"|'[^'\n]*')")
_WORDS = re.compile(r"\.?[\w@-]+(?:\.[\w@-]+)*|[^\w\s]")
"""A sentence's words: ``.png`` and ``a.b@c.d`` whole, a sentence's closing full stop apart."""
_NAME = r"([A-Z][a-z]+)"
_ROLES = {
    "sender": (rf"\b(?:by|from) {_NAME}", rf"{_NAME}'s (?:email|mail|message)",
               rf"\bemail {_NAME} sent"),
    "recipient": (rf"\bto {_NAME}", rf"^(?:Please )?[Ss]end {_NAME} the"),
}  # fmt: skip
"""Where an email task names its sender and its recipient, whatever its template."""
_ORDINAL = re.compile(r"\b(\d+)(?:st|nd|rd|th)\b")


def sections(text: str) -> dict[str, str]:
    """The first planner message's ``## `` sections (the skill's whole, code included)."""
    starts = [
        m.start()
        for m in re.finditer(r"^## (?:Manual|Rules|Skill for|Reflection from|Task)", text, re.M)
    ]
    out: dict[str, str] = {}
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(text)
        block = text[start:end].rstrip()
        out[block.split("\n", 1)[0][3:]] = block
    return out


def shown_skill(text: str) -> tuple[str, str] | None:
    """``(goal, code)`` of the skill the first planner message shows, if any."""
    for heading, block in sections(text).items():
        if heading.startswith("Skill for a similar task"):
            m = _SKILL.match(block)
            if m is not None:
                return m.group("goal").strip(), m.group("code")
    return None


def task_of(text: str) -> str:
    """The ``## Task`` section's text (the episode's opening)."""
    for heading, block in sections(text).items():
        if heading == "Task":
            return block.split("\n", 1)[1] if "\n" in block else ""
    return ""


def parts(code: str) -> list[str]:
    """The skill's code in the parts it was written in (split at fence lines), each
    a piece of Python: a part that does not parse alone (an ``else:`` cut from its
    ``if`` at a pause) is joined to the one before it, and parts that hold no
    statement (comments only) are left out."""
    chunks: list[list[str]] = [[]]
    for line in code.split("\n"):
        if _FENCE_LINE.match(line):
            chunks.append([])
        else:
            chunks[-1].append(line)
    out: list[str] = []
    for lines in chunks:
        body = "\n".join(lines).strip("\n")
        if not body.strip():
            continue
        if out and not _parses(body):
            out[-1] = f"{out[-1]}\n{body}"
        else:
            out.append(body)
    return [p for p in out if not _parses(p) or ast.parse(p).body]


def _parses(code: str) -> bool:
    try:
        ast.parse(code)
    except SyntaxError:
        return False
    return True


def _rename(code: str, mapping: Mapping[str, str]) -> str:
    if not mapping:
        return code
    names = "|".join(re.escape(k) for k in sorted(mapping, key=len, reverse=True))
    pattern = re.compile(rf"(?<![A-Za-z0-9])({names})(?![A-Za-z0-9])")
    return pattern.sub(lambda m: mapping[m.group(1)], code)


def adapt_alfworld(code: str, skill_goal: str, opening: str) -> str:
    """The skill's code for the task ``opening`` describes (see the module docstring)."""
    was = parse_goal(f"Your task is to: {skill_goal}")
    now = parse_goal(opening)
    if was is None or now is None:
        return code
    pairs = ((was.obj, now.obj), (was.recep, now.recep), (was.toggle, now.toggle))
    code = _rename(code, {a: b for a, b in pairs if a and b and a != b})
    places = parse_receptacles(opening)
    if places:
        code = _IDS_LIST.sub(repr(places), code, count=1)
    count = sum(1 for p in places if kind(p) == now.recep)
    if count:
        code = _RANGE.sub(f"range(1, {count + 1})", code)
    return code


def adapt_text(code: str, skill_goal: str, task: str) -> str:
    """The skill's string literals with the words its task sentence has where this
    task's sentence, in the same template, has others."""
    old, new = _WORDS.findall(skill_goal), _WORDS.findall(task)
    mapping: dict[str, str] = {}
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "replace" and a1 - a0 == b1 - b0:
            for a, b in zip(old[a0:a1], new[b0:b1], strict=True):
                if re.fullmatch(r"\.?[\w@-]+(?:\.[\w@-]+)*", a):
                    mapping.setdefault(a, b)
    for role, was in _roles(skill_goal).items():  # another template: by role
        now = _roles(task).get(role)
        if now and now != was:
            mapping.setdefault(was, now)
    ranks = _ORDINAL.findall(skill_goal), _ORDINAL.findall(task)
    if len(ranks[0]) == len(ranks[1]) == 1 and ranks[0] != ranks[1]:
        # "the 2nd result" is the element numbered 1 (counted from 0)
        mapping.setdefault(str(int(ranks[0][0]) - 1), str(int(ranks[1][0]) - 1))
    if not mapping:
        return code
    return _LITERAL.sub(lambda m: _rename(m.group(1), mapping), code)


def _roles(sentence: str) -> dict[str, str]:
    """The sender and recipient an email task names (see ``_ROLES``), where it does."""
    found: dict[str, str] = {}
    for role, patterns in _ROLES.items():
        for pattern in patterns:
            m = re.search(pattern, sentence)
            if m is not None:
                found[role] = m.group(1)
                break
    return found


def _answer(code: str, note: str) -> str:
    return (
        f"### Analysis\n{note}\n### Related rules\nnone\n### Plan\n"
        f"Run the stored skill's code, adapted to this task.\n### Code\n```python\n{code}\n```"
    )


def replay_model(env_name: str) -> ModelFn:
    """The scripted planner for ``env_name`` (``alfworld`` or ``miniwob``)."""

    def answer(messages: tuple[Message, ...]) -> str:
        first = next((m for m in messages if m.role == "user" and "## Task" in m.content), None)
        if first is None:
            return _answer("pass", "There is no task in this prompt.")
        skill = shown_skill(first.content)
        if skill is None:
            return _answer("pass", "No skill is shown: nothing to replay.")
        goal, code = skill
        task = task_of(first.content)
        if env_name == "alfworld":
            plan = [adapt_alfworld(code, goal, task)]
        else:
            line = next((x for x in task.splitlines() if x.startswith("Task: ")), task)
            plan = [adapt_text(p, goal, line.removeprefix("Task: ")) for p in parts(code)]
        turn = sum(1 for m in messages if m.role == "assistant" and "### Code" in m.content)
        if turn >= len(plan):
            return _answer("pass", "The skill has been played to its end.")
        return _answer(plan[turn], f"Playing part {turn + 1} of {len(plan)} of the stored skill.")

    return answer


def replay_roles(
    env_kwargs: Mapping[str, Any] | None = None, *, env_name: str = "miniwob"
) -> Roles:
    """The scripted planner as the ``planner`` role, for ``lorekit.evaluate(models=...)``."""
    from lorekit.llm.scripted import ScriptedLLM

    llm = ScriptedLLM(fn=replay_model(env_name), model="simulated-automanual-replay")
    return Roles({"planner": llm}, "planner")
