"""After-query hooks of the AgentKit specs (``crafter.yaml``, ``webshop.yaml``).

Each one turns a node's parsed JSON into what the agent or the database needs,
or raises :class:`AfterQueryError` with a sentence the model reads when it is
asked again. They touch only the database keys their node declares
(``hook_reads`` / ``hook_writes``), which the graph enforces.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from lorekit.graph import AfterQueryError, NodeContext

MAX_UNKNOWNS = 20
"""Open questions kept; the oldest go first, so the planner's prompt stays bounded."""


def yes(value: Any) -> bool:
    """A model's yes/no field as a bool ("Yes, because ..." counts as yes)."""
    if isinstance(value, bool):
        return value
    return str(value).strip().lower().startswith(("yes", "true"))


def _entries(output: Any, what: str) -> dict[str, Mapping[str, Any]]:
    if not isinstance(output, Mapping):
        raise AfterQueryError(f"Answer with one JSON object mapping each {what} to its fields.")
    return {str(k): v for k, v in output.items() if isinstance(v, Mapping)}


# -- crafter -------------------------------------------------------------------


GATE_FLAGS = (
    "unexpected",
    "mistake",
    "correction_planned",
    "confused",
    "subgoal_done",
    "subgoal_changed",
    "replan",
)
"""The gate's seven questions, as the published agent asks them."""


def gate_decision(ctx: NodeContext, output: Any) -> str:
    """``replan`` (the planner nodes run) or ``keep`` (they reuse their last answers).

    As in the published agent, the plan is kept only when all seven answers are
    no: an unexpected encounter, a mistake, a planned correction or confusion
    alone re-plans too. An answer missing one of the seven is asked again (the
    original refuses it as well) rather than read as no.

    On the very first pass there is nothing to keep: the spec's branch then runs
    the planner nodes the actor needs whatever this says (see
    :class:`lorekit.graph.hooks.BranchHook`)."""
    if not isinstance(output, Mapping):
        raise AfterQueryError('Answer with one JSON object such as {"replan": "no", ...}.')
    missing = [f for f in GATE_FLAGS if f not in output]
    if missing:
        raise AfterQueryError(
            f"Answer all seven questions; missing: {', '.join(map(repr, missing))}. "
            'Each value is "yes" or "no".'
        )
    flagged = yes(output["mistake"]) or yes(output["confused"])
    ctx.db["step_flagged"] = "yes" if flagged else "no"  # long-term reflection counts these
    return "replan" if any(yes(output[f]) for f in GATE_FLAGS) else "keep"


def choose_skill(ctx: NodeContext, output: Any) -> dict[str, Any]:
    """The chosen (or new) skill as ``{name: entry}``, merged into the library; its
    name becomes ``current_skill`` (the long-term reflection groups steps by it)."""
    if not isinstance(output, Mapping) or not output:
        raise AfterQueryError(
            'Answer with one JSON object with one entry: {"skill name": ["description", '
            '"parameters", "guide"]}.'
        )
    name, entry = next(iter(output.items()))
    name = str(name).strip()
    if not name:
        raise AfterQueryError("The skill needs a name.")
    ctx.db["current_skill"] = name
    return {name: entry}


def store_questions(ctx: NodeContext, output: Any) -> str:
    """The planner's adaptive questions into ``adaptive_questions``, or "" for NA (no
    questions): the dynamic node ``adaptive_answers`` joins the passes only while
    there are some."""
    text = str(output).strip()
    none = not text or text.strip(" .\"'`").upper() in ("NA", "N/A", "NONE")
    ctx.db["adaptive_questions"] = "" if none else text
    return text


FINDING_CHECKS = ("discovered", "general", "unknown", "concrete", "solid")
"""kb_add: a finding enters the knowledge only when all five are yes."""
QUESTION_CHECKS = ("unknown", "novel", "general", "relevant", "correct")
"""unknown: an open question is kept only when all five are yes."""


def _all_yes(item: Mapping[str, Any], checks: tuple[str, ...]) -> bool:
    """All ``checks`` answered yes; a missing field is not a yes (the published agent
    refuses such an item too)."""
    return all(f in item and yes(item[f]) for f in checks)


def learn(ctx: NodeContext, output: Any) -> dict[str, Any]:
    """Move each open question the last step answered for good (the five checks of
    ``FINDING_CHECKS``) into ``knowledge``; the result is what was learned."""
    found = _entries(output, "open question")
    learned = {
        name: str(item.get("discovery", "")).strip()
        for name, item in found.items()
        if _all_yes(item, FINDING_CHECKS)
    }
    learned = {k: v for k, v in learned.items() if v and v.upper() != "NA"}
    if learned:
        knowledge = dict(ctx.db["knowledge"])
        knowledge.update(learned)
        ctx.db["knowledge"] = knowledge
        ctx.db["unknowns"] = {k: v for k, v in dict(ctx.db["unknowns"]).items() if k not in learned}
    return learned


def remember_unknowns(ctx: NodeContext, output: Any) -> dict[str, Any]:
    """Add the new open questions that pass the five checks of ``QUESTION_CHECKS`` to
    ``unknowns``, keeping the newest ``MAX_UNKNOWNS``; the result is the list."""
    found = _entries(output, "open question")
    merged = dict(ctx.db["unknowns"])
    for name, item in found.items():
        if _all_yes(item, QUESTION_CHECKS):
            merged.pop(name, None)
            merged[name] = str(item.get("info", "")).strip() or name
    while len(merged) > MAX_UNKNOWNS:
        merged.pop(next(iter(merged)))
    ctx.db["unknowns"] = merged
    return merged


def refine_knowledge(ctx: NodeContext, output: Any) -> dict[str, Any]:
    """Drop the known items that repeat another, add nothing to the manual or
    contradict it; the result is what was dropped (name -> why)."""
    found = _entries(output, "known item")
    fields = ("duplicate", "addition", "contradiction")
    for name, item in found.items():
        missing = [f for f in fields if f not in item]
        if missing:
            raise AfterQueryError(f"Item {name!r} lacks {', '.join(map(repr, missing))}.")
    knowledge = dict(ctx.db["knowledge"])
    dropped: dict[str, Any] = {}
    for name, item in found.items():
        if name not in knowledge:
            continue
        if yes(item["duplicate"]):
            dropped[name] = "duplicate"
        elif yes(item["contradiction"]):
            dropped[name] = "contradicts the manual"
        elif not yes(item["addition"]):
            dropped[name] = "adds nothing to the manual"
    ctx.db["knowledge"] = {k: v for k, v in knowledge.items() if k not in dropped}
    return dropped


def _norm(name: str) -> str:
    return re.sub(r"[\s\-]+", "_", name.strip().strip("`'\".").lower())


MOVE_REPEATS = 4
"""Most repeats of a move, and only when neither a hazard nor an obstacle is reported."""
DO_REPEATS = 3
"""Most repeats of ``do``; any other action is played once."""


def choose_action(ctx: NodeContext, output: Any) -> dict[str, Any]:
    """``{"action": name, "repeats": n}`` with an allowed name and the published
    agent's repeat rule: a move up to ``MOVE_REPEATS`` times when no hazard or
    obstacle is reported, ``do`` up to ``DO_REPEATS``, anything else once (a larger
    count is cut down, as there; ``max_repeats`` caps them all). A count that is
    no whole number >= 1, or a missing hazard/obstacle answer, is asked again."""
    if not isinstance(output, Mapping):
        raise AfterQueryError(
            'Answer with one JSON object: {"action": "...", "repeats": 1, '
            '"obstacles": "no", "hazards": "no"}.'
        )
    allowed = [a.strip() for a in str(ctx.db["actions"]).split(",") if a.strip()]
    name = _norm(str(output.get("action", "")))
    if name not in allowed:
        shown = str(output.get("action", ""))[:60] or "(nothing)"
        raise AfterQueryError(
            f"{shown!r} is not an allowed action. Use exactly one of: {', '.join(allowed)}."
        )
    missing = [f for f in ("repeats", "obstacles", "hazards") if f not in output]
    if missing:
        raise AfterQueryError(f"Give {', '.join(map(repr, missing))} as well.")
    raw = output["repeats"]
    try:
        asked = int(str(raw).strip()) if not isinstance(raw, bool) else 0
    except ValueError:
        asked = 0
    if asked < 1:
        raise AfterQueryError(f"'repeats' must be a whole number of at least 1, got {raw!r}.")
    danger = yes(output["hazards"]) or yes(output["obstacles"])
    if name.startswith("move_"):
        rule = 1 if danger else MOVE_REPEATS
    elif name == "do":
        rule = DO_REPEATS
    else:
        rule = 1
    repeats = min(asked, rule, int(ctx.db["max_repeats"]))
    return {"action": name, "repeats": repeats, "hazard": danger}


# -- webshop -------------------------------------------------------------------


def choose_web_action(ctx: NodeContext, output: Any) -> str:
    """``search[query]`` or ``click[button]``, checked against the page's options.

    ``ctx.db["clickables"]`` lists the page's buttons (``|``-separated) and
    ``ctx.db["can_search"]`` says whether it has a search box."""
    if not isinstance(output, Mapping):
        raise AfterQueryError(
            'Answer with one JSON object: {"action": "search" or "click", "target": "..."}.'
        )
    kind = str(output.get("action", "")).strip().lower()
    target = " ".join(str(output.get("target", "")).split())
    if not target:
        raise AfterQueryError("'target' is empty: give the search words or the button to click.")
    if kind == "search":
        if not yes(ctx.db["can_search"]):
            raise AfterQueryError(
                "This page has no search box; click one of its buttons (e.g. 'back to search')."
            )
        return f"search[{target}]"
    if kind != "click":
        raise AfterQueryError(f"'action' must be 'search' or 'click', got {kind!r}.")
    buttons = [b for b in str(ctx.db["clickables"]).split("|") if b]
    by_norm = {b.strip().lower(): b for b in buttons}
    chosen = by_norm.get(target.lower().strip("[]"))
    if chosen is None:
        listed = ", ".join(buttons) or "none"
        raise AfterQueryError(f"{target!r} is not a button on this page. Buttons: {listed}.")
    return f"click[{chosen}]"
