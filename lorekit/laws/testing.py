"""Scripted extractor models: what one-record-at-a-time revision can reach.

Test models, not part of the method: the laws' ``testing`` module, which
``lorekit laws extract --simulate`` and the tests use and nothing else of the
laws imports.

The extractor (:mod:`lorekit.laws.extract`) asks a model, step by step, what
an action costs, gives, leaves behind and needs. No model server is reachable
where LoreKit is tested, so these stand-ins answer its prompts instead. They
read **only the prompt they are given** (never crafter's rules, the oracle or
the other records) and answer in the asked form, following the prompt's
instructions literally. What they decide:

- **Costs and gains** (Algorithm 2): nothing from their own knowledge (they
  have none); on each success, the before/after difference of the aspect
  shown. They follow the prompt's reading of vitals: a one-point fall of food,
  drink or energy and a one-point rise of health are the slow drift, not the
  action; and a vital already at 9 after the action may have gained less than
  the current understanding says (it stops at 9), so that part is kept.
  Otherwise the record shown wins: what it confirms stays, what it
  contradicts is corrected, what it adds is added.
- **What the faced cell becomes**: unknown at first; on each success, the
  faced kind after the action if it differs from the one before, else null.
- **Preconditions** (Algorithm 3): first, what the costs use up (the prompt
  offers nothing else); then per record:

  - a success loosens what its before state contradicts: a count above what
    was held is lowered to it (dropped at 0), an upper bound the state was not
    under is raised just past it, a nearby thing not nearby is dropped, and a
    faced kind is added when the list of kinds does not hold it;
  - a failure whose before state meets every current precondition is
    tightened by the smallest change that explains it, from the summary of
    earlier successes the model keeps in its own words (the prompt shows
    those words back as its current understanding; it is the only memory):
    facing first when every success so far faced one kind and this failure
    another; otherwise a tool or material every success held and this failure
    lacked (at one more than it had), then things every success had nearby
    and this one did not, then the kinds the successes faced, then a vital
    above its level in every success (``below`` the failure's value). With no
    success seen yet, or nothing in the summary that the failure lacks, the
    understanding is kept.

``careless`` adds seeded mistakes, decided per answer from a hash of the whole
conversation (so a rerun or a resumed run answers alike): with probability
``p`` an answer is wrong. On a step that shows a record, half of the wrong
answers ignore it (the current understanding comes back unchanged) and half
are malformed; a first guess, which shows no record, is malformed. Malformed
is one of: words with no JSON block, JSON that does not parse, a field the
schema forbids. The extractor feeds the problem back and asks again (at most
``max_attempts`` answers a step), which is where its retry path, and now and
then a failed achievement, shows.

These models show the pipeline's mechanism: what sequential revision over
records in their order can reach, on the prompts as written. They say nothing
of what a language model would conclude.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lorekit.llm.base import Message
from lorekit.llm.roles import Roles
from lorekit.llm.scripted import ScriptedLLM

CAREFUL = "scripted-careful"
KINDS = ("careful", "careless")
"""The names ``lorekit laws extract --simulate`` accepts."""
CARELESS_P = 0.2
"""The default chance that a careless answer is wrong."""

_DRIFT_DOWN = ("food", "drink", "energy")
_DRIFT_UP = ("health",)
_VITALS = ("health", "food", "drink", "energy")
_TOP = 9
_NOTE = re.compile(
    r"Successes so far: (\d+)(?:; faced: (.*?); every one held: (.*?); "
    r"every one had nearby: (.*?); vitals at most: (.*?))?\.\s*$",
    re.S,
)


def _line(prompt: str, pattern: str) -> str:
    found = re.search(pattern, prompt, re.M)
    if found is None:
        raise ValueError(f"the prompt has no line matching {pattern!r}")
    return found.group(1)


def _reply(text: str, form: Mapping[str, Any]) -> str:
    return f"{text}\n```json\n{json.dumps(form, sort_keys=True)}\n```"


def _names(items: Mapping[str, int]) -> str:
    return ", ".join(f"{k} {n}" for k, n in sorted(items.items())) or "nothing"


# ---- reading a state the way the preconditions prompt shows it ------------------


@dataclass(frozen=True)
class _Situation:
    held: dict[str, int]
    """Tools and materials with a count above 0."""
    vitals: dict[str, int]
    face: str
    nearby: frozenset[str]

    def count(self, item: str) -> int:
        return self.vitals.get(item, self.held.get(item, 0))


def _situation(block: str) -> _Situation:
    parts: dict[str, dict[str, int]] = {}
    face, nearby = "?", set()
    for raw in block.splitlines():
        key, sep, rest = raw.strip().partition(": ")
        if key in ("attributes", "tools", "materials") and sep:
            parts[key] = {str(k): int(v) for k, v in json.loads(rest).items()}
        elif key == "face" and sep:
            face = rest.strip()
        elif raw.startswith("  ") and "|" in raw:
            nearby |= {c.strip() for c in raw.split("|")} - {"player"}
    held = {k: n for p in ("tools", "materials") for k, n in parts.get(p, {}).items() if n > 0}
    return _Situation(held, parts.get("attributes", {}), face, frozenset(nearby))


@dataclass
class _Note:
    """What every success so far had in common, as the model writes it in its words."""

    successes: int = 0
    faced: set[str] = field(default_factory=set)
    held: dict[str, int] = field(default_factory=dict)
    nearby: set[str] = field(default_factory=set)
    vitals: dict[str, int] = field(default_factory=dict)

    def add(self, seen: _Situation) -> None:
        if self.successes == 0:
            self.held, self.nearby = dict(seen.held), set(seen.nearby)
            self.vitals = dict(seen.vitals)
        else:
            self.held = {k: min(n, seen.held[k]) for k, n in self.held.items() if k in seen.held}
            self.nearby &= seen.nearby
            for k, v in seen.vitals.items():
                self.vitals[k] = max(v, self.vitals.get(k, v))
        self.faced.add(seen.face)
        self.successes += 1

    def words(self) -> str:
        if not self.successes:
            return "Successes so far: 0."
        return (
            f"Successes so far: {self.successes}; faced: {', '.join(sorted(self.faced))}; "
            f"every one held: {_names(self.held)}; "
            f"every one had nearby: {', '.join(sorted(self.nearby)) or 'nothing'}; "
            f"vitals at most: {_names(self.vitals)}."
        )

    @classmethod
    def read(cls, text: str) -> _Note:
        found = _NOTE.search(text)
        if found is None or not int(found.group(1)):
            return cls()

        def counts(part: str) -> dict[str, int]:
            if part == "nothing":
                return {}
            pairs = (p.rsplit(" ", 1) for p in part.split(", "))
            return {name: int(n) for name, n in pairs}

        def kinds(part: str) -> set[str]:
            return set() if part == "nothing" else set(part.split(", "))

        return cls(
            successes=int(found.group(1)),
            faced=kinds(found.group(2)),
            held=counts(found.group(3)),
            nearby=kinds(found.group(4)),
            vitals=counts(found.group(5)),
        )


# ---- the careful model's steps ---------------------------------------------------


def _effects(prompt: str) -> tuple[str, dict[str, Any]]:
    if re.search(r"^before: ", prompt, re.M) is None:
        return "I cannot tell before seeing it.", {"costs": {}, "gains": {}}
    aspect = _line(prompt, r"player's\s+(\w+)\s+just before")
    current = json.loads(_line(prompt, r"^Structured: (.*)$"))
    before = json.loads(_line(prompt, r"^before: (.*)$"))
    after = json.loads(_line(prompt, r"^after: +(.*)$"))
    said = {**{k: -n for k, n in current["costs"].items()}, **current["gains"]}
    change: dict[str, int] = {}
    for key in sorted(set(before) | set(after) | set(said)):
        step = int(after.get(key, 0)) - int(before.get(key, 0))
        if aspect == "attributes":
            if (step == -1 and key in _DRIFT_DOWN) or (step == 1 and key in _DRIFT_UP):
                step = 0
            was = said.get(key, 0)
            if was > step >= 0 and after.get(key) == _TOP:
                step = was  # it stops at 9: this success could not show more
        if step:
            change[key] = step
    costs = {k: -n for k, n in change.items() if n < 0}
    gains = {k: n for k, n in change.items() if n > 0}
    return f"It uses {_names(costs)} and gives {_names(gains)}.", {"costs": costs, "gains": gains}


def _face(prompt: str) -> tuple[str, dict[str, Any]]:
    if "faced before: " not in prompt:
        return "I cannot tell before seeing it.", {"leaves": None}
    before = _line(prompt, r"^faced before: (.*)$").strip()
    after = _line(prompt, r"^faced after: +(.*)$").strip()
    if after == before:
        return f"The {before} stays as it was.", {"leaves": None}
    return f"The {before} becomes {after}.", {"leaves": after}


def _needs(form: Mapping[str, Any]) -> str:
    parts = [f"{k} at least {n}" for k, n in sorted(form["requires"].items())]
    parts += [f"{k} under {n}" for k, n in sorted(form.get("below", {}).items())]
    parts += [f"{k} nearby" for k in form["nearby"]]
    if form["faced"]:
        parts.append(f"facing {' or '.join(form['faced'])}")
    return "It needs " + ("; ".join(parts) if parts else "nothing I can name") + "."


def _preconditions_prior(prompt: str) -> tuple[str, dict[str, Any]]:
    costs_line = _line(prompt, r"uses up:\n(.*)$")
    costs = {} if costs_line.strip() == "nothing" else json.loads(costs_line)
    form = {"requires": dict(costs), "below": {}, "nearby": [], "faced": []}
    return f"{_needs(form)} {_Note().words()}", form


def _meets(form: Mapping[str, Any], seen: _Situation) -> bool:
    return (
        all(seen.count(k) >= n for k, n in form["requires"].items())
        and all(seen.count(k) < n for k, n in form.get("below", {}).items())
        and all(k in seen.nearby for k in form["nearby"])
        and (not form["faced"] or seen.face in form["faced"])
    )


def _loosen(form: dict[str, Any], seen: _Situation) -> None:
    form["requires"] = {
        k: min(n, seen.count(k)) for k, n in form["requires"].items() if seen.count(k) > 0
    }
    below = {}
    for k, n in form.get("below", {}).items():
        have = seen.count(k)
        if have < n:
            below[k] = n
        elif have + 1 <= _TOP:
            below[k] = have + 1
    form["below"] = below
    form["nearby"] = [k for k in form["nearby"] if k in seen.nearby]
    if form["faced"] and seen.face not in form["faced"]:
        form["faced"] = sorted({*form["faced"], seen.face})


def _tighten(form: dict[str, Any], seen: _Situation, note: _Note) -> None:
    lacking = {k: seen.count(k) + 1 for k, n in note.held.items() if seen.count(k) < n}
    absent = sorted(note.nearby - seen.nearby)
    new_face = seen.face not in note.faced
    too_high = {k: v for k, v in seen.vitals.items() if k in note.vitals and v > note.vitals[k]}
    if new_face and len(note.faced) == 1:
        form["faced"] = sorted(note.faced)
    elif lacking:
        form["requires"] = {**form["requires"], **lacking}
    elif absent:
        form["nearby"] = sorted({*form["nearby"], *absent})
    elif new_face:
        form["faced"] = sorted(note.faced)
    elif too_high:
        form["below"] = {**form.get("below", {}), **too_high}


def _preconditions(prompt: str) -> tuple[str, dict[str, Any]]:
    if "Here is the state just before" not in prompt:
        return _preconditions_prior(prompt)
    current_text = _line(prompt, r"can succeed:\n((?:.|\n)*?)\nStructured: ")
    form = json.loads(_line(prompt, r"^Structured: (.*)$"))
    form.setdefault("below", {})
    found = re.search(
        r"which (succeeded|failed):\n(.*?)\n\s*\nAnd the state just after", prompt, re.S
    )
    if found is None:
        raise ValueError("the preconditions prompt shows no state before the attempt")
    seen = _situation(found.group(2))
    note = _Note.read(current_text)
    if found.group(1) == "succeeded":
        _loosen(form, seen)
        note.add(seen)
    elif _meets(form, seen) and note.successes:
        _tighten(form, seen, note)
    return f"{_needs(form)} {note.words()}", form


def _careful(prompt: str) -> tuple[str, dict[str, Any]]:
    if '"leaves"' in prompt:
        return _face(prompt)
    if '"requires"' in prompt:
        return _preconditions(prompt)
    return _effects(prompt)


def careful_answer(messages: Sequence[Message]) -> str:
    """The careful model's answer to the question of ``messages`` (see the module
    docstring); retries of a step get the same answer."""
    return _reply(*_careful(messages[1].content))


# ---- the careless model ----------------------------------------------------------


def _draw(seed: int, messages: Sequence[Message]) -> random.Random:
    raw = json.dumps([seed, [[m.role, m.content] for m in messages]])
    return random.Random(int.from_bytes(hashlib.sha256(raw.encode()).digest()[:8], "big"))


def _malformed(text: str, form: Mapping[str, Any], rng: random.Random) -> str:
    how = rng.randrange(3)
    if how == 0:
        return text  # the words without the form
    if how == 1:
        return f"{text}\n```json\n{json.dumps(form)[:-1]},}}\n```"  # a trailing comma
    return _reply(text, {**form, "why": "from the record"})  # a field the schema forbids


def _ignoring(prompt: str) -> str | None:
    """The current understanding repeated as it stands (None: no record is shown)."""
    if "Structured: " not in prompt:
        return None
    current = json.loads(_line(prompt, r"^Structured: (.*)$"))
    words = re.search(r"understanding of .*?:\n((?:.|\n)*?)\nStructured: ", prompt, re.S)
    text = words.group(1).strip() if words else ""
    return _reply(text if text != "(none yet)" else "As before.", current)


def careless(p: float = CARELESS_P, seed: int = 0) -> Callable[[tuple[Message, ...]], str]:
    """The careful model with a wrong answer at rate ``p`` (see the module docstring)."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be between 0 and 1, got {p}")

    def answer(messages: tuple[Message, ...]) -> str:
        rng = _draw(seed, messages)
        if rng.random() >= p:
            return careful_answer(messages)
        prompt = messages[1].content
        if rng.random() < 0.5:
            same = _ignoring(prompt)
            if same is not None:
                return same
        return _malformed(*_careful(prompt), rng)

    return answer


def careful_model() -> ScriptedLLM:
    """The careful scripted extractor, as a model."""
    return ScriptedLLM(fn=careful_answer, model=CAREFUL)


def careless_model(p: float = CARELESS_P, seed: int = 0) -> ScriptedLLM:
    """The careless scripted extractor (wrong at rate ``p``), as a model."""
    return ScriptedLLM(fn=careless(p, seed), model=f"scripted-careless-p{p:g}-seed{seed}")


def simulated_roles(kind: str) -> Roles:
    """The ``extractor`` role played by the scripted model ``kind`` (one of :data:`KINDS`)."""
    if kind == "careful":
        return Roles({"extractor": careful_model()})
    if kind == "careless":
        return Roles({"extractor": careless_model()})
    raise ValueError(f"unknown scripted extractor {kind!r} (known: {', '.join(KINDS)})")
