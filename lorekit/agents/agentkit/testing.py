"""Scripted models that answer the AgentKit specs' questions, for tests and demos.

Each node is told apart by a phrase only its prompt holds (``CRAFTER_QUESTIONS``,
``WEBSHOP_QUESTIONS``; the tests check them against the specs). Reasoning nodes
get short canned answers, JSON nodes well-formed JSON, and the deciding nodes
work an action out of the prompt:

* Crafter: ``actor_actions`` reads the observation it is shown and walks toward
  the nearest tree (``do`` once facing it), repeating a move twice when the
  tree is far; ``actor_final`` names that action. ``gate`` asks for a new plan
  while there is no subgoal yet (unless ``first_replan`` is off) and on every
  ``replan_every``-th pass; ``unknown`` and ``kb_add`` open and then
  answer one question (how much wood one ``do`` gives), so the knowledge base
  can be seen filling up.
* WebShop: ``action`` searches from the search page, opens the first product of
  the results, and on a product page clicks the options the task names (once
  each, judging by the browsing history) and then buys.

``invalid`` makes the deciding node answer that many times per step with an
unusable answer first (bad JSON, then an unknown action), to show re-asking and,
past the node's retry limit, the agent's fallback. These are stand-ins for a
model, not players.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence

from lorekit.agents.agentkit.hooks import GATE_FLAGS
from lorekit.envs.crafter.textnav import step_toward
from lorekit.llm.base import Message

CRAFTER_QUESTIONS: dict[str, str] = {
    "obs_objects": "Describe the objects around the player",
    "obs_inventory": "Write the player's inventory",
    "obs_vitals": "Write the player's vitals",
    "obs_changes": "note only what changed in the last step",
    "obs_last_action": "What should that action have changed",
    "s_obs": "Summarise the surroundings and the inventory",
    "s_vitals": "Summarise the vitals in one sentence",
    "s_action": "Report the last action as a JSON object",
    "obs_actions": "decide from the surroundings and the manual whether it can",
    "achievements": "List the locked achievements that are easy",
    "reflect": "summarise how the player got",
    "unexpected": "Did the player meet an obstacle",
    "mistake": "Did the player make a mistake",
    "challenge": "Name three high-level challenges",
    "plan_check": "explain briefly how the chosen",
    "gate": "From the reasoning so far, answer with one JSON object",
    "subgoals": "list the three most important subgoals",
    "top_subgoal": "Write the most urgent subgoal",
    "subgoal_analysis": "what the subgoal above requires",
    "skill": "Pick the skill of the library",
    "adaptive": "List at most three questions that make",
    "adaptive_answers": "Answer the planner's current questions",
    "kb_add": "say whether the last step answered it",
    "unknown": "Merge the missing information",
    "kb_refine": "should add to the manual, never repeat it",
    "actor_reflect": "Name up to two kinds of information",
    "actor_plan": "Which objects that matter for the subgoal",
    "actor_actions": "choose the actions for at most the next six steps",
    "actor_final": "Take the first action of the plan above",
    "s_plan": "state the current subgoals and why",
    "s_mistakes": "explain briefly any unexpected situation or mistake",
    "feed": "List at most three significant mistakes or dangerous",
}
"""Node -> a phrase only its prompt holds."""

WEBSHOP_QUESTIONS: dict[str, str] = {
    "page": "Describe the products and the buttons of this page",
    "match": "how well each product on the page fits the task",
    "sketch": "summarise the pages, actions and that information",
    "action": "name the best action for this step",
    "summary_page": "In one sentence, say how the items on the page fit",
    "summary_plan": "In one sentence, give the plan with its coming actions",
}

UNKNOWN_NAME = "wood_per_hit"
_CLEAR = {"obstacles": "no", "hazards": "no"}
_BEST = re.compile(r"best: (\w+)(?: x(\d+))?")
_FAR = r"^\s*{kind}: .*?\((\d+) steps?\)"
_OBSERVATION = "using this observation:"


def which(messages: Sequence[Message], questions: Mapping[str, str]) -> str | None:
    """The node whose question was asked last in the conversation (retries included);
    line breaks count as spaces, as prompts wrap their lines."""
    text = " ".join(" ".join(m.content for m in messages if m.role != "assistant").split())
    found = {key: text.rfind(phrase) for key, phrase in questions.items()}
    key, where = max(found.items(), key=lambda kv: kv[1])
    return key if where >= 0 else None


def _refused(messages: Sequence[Message]) -> int:
    return sum(1 for m in messages if m.role == "assistant")


def _bad(refused: int) -> str:
    return "I think I will go west." if refused == 0 else '{"action": "chop_tree", "repeats": 1}'


def crafter_model(
    seek: str = "tree", invalid: int = 0, replan_every: int = 5, first_replan: bool = True
) -> Callable[[tuple[Message, ...]], str]:
    """Answers for :class:`~lorekit.llm.ScriptedLLM` ``fn=``; see the module docstring."""
    gates = [0]

    def answer(messages: tuple[Message, ...]) -> str:
        node = which(messages, CRAFTER_QUESTIONS)
        prompt = "\n".join(m.content for m in messages if m.role == "user")
        if node == "actor_actions":
            obs = prompt.rpartition(_OBSERVATION)[2]
            best = step_toward(obs, seek)
            far = re.search(_FAR.format(kind=re.escape(seek)), obs, re.MULTILINE)
            repeats = 2 if best.startswith("move_") and far and int(far.group(1)) >= 5 else 1
            return f"No hazard. Walk to the {seek}, then use it.\nbest: {best} x{repeats}"
        if node == "actor_final":
            refused = _refused(messages)
            if refused < invalid:
                return _bad(refused)
            picks = _BEST.findall(prompt)
            action, count = picks[-1] if picks else ("noop", "1")
            repeats = int(count or 1)
            return json.dumps({"action": action, "repeats": repeats, **_CLEAR})
        if node == "gate":
            gates[0] += 1
            fresh = first_replan and "(none yet" in prompt
            replan = "yes" if fresh or gates[0] % replan_every == 0 else "no"
            flags = dict.fromkeys(GATE_FLAGS, "no")
            return "Reasoning first.\n" + json.dumps({**flags, "replan": replan})
        if node == "kb_add":
            if UNKNOWN_NAME in prompt.rpartition("Open questions the manual")[2]:
                found = {"discovered": "yes", "discovery": "one wood per do on a tree"}
                checks = dict.fromkeys(("general", "unknown", "concrete", "solid"), "yes")
                return json.dumps({UNKNOWN_NAME: {**found, **checks}})
            return "{}"
        if node == "unknown":
            if UNKNOWN_NAME in prompt.partition("Open questions so far")[0]:
                return "{}"  # already in the knowledge base
            item = {"info": "how much wood one do on a tree gives", "known": "NA"}
            checks = dict.fromkeys(("unknown", "novel", "general", "relevant", "correct"), "yes")
            return json.dumps({UNKNOWN_NAME: {**item, **checks}})
        canned: dict[str, object] = {
            "obs_inventory": {"wood": 0},
            "obs_vitals": {"health": "9/9", "food": "9/9", "drink": "9/9", "energy": "9/9"},
            "s_action": {"action": "move", "repeats": 1, "success": "yes"},
            "obs_actions": {"do": {"allowed": "yes"}, "noop": {"allowed": "yes"}},
            "top_subgoal": {
                "subgoal": f"collect wood from a {seek}",
                "completion_criteria": "wood 1 in the inventory",
                "guide": f"walk to the nearest {seek} and use do",
            },
            "skill": {"CollectResource": ["gather a material", "material", "walk, face, do"]},
            "actor_plan": {
                "plan_sketch": f"reach the {seek}",
                "details": f"walk straight to the nearest {seek}",
                "target": seek,
                "relevance": f"a {seek} is in view",
                "expiration": "wood collected",
            },
        }
        if node in canned:
            return json.dumps(canned[node])
        if node == "adaptive":
            return f"1. How many steps away is the nearest {seek}?\n2. What blocks the way?"
        if node == "adaptive_answers":
            return f"1. The nearest {seek} is a few steps away. 2. Nothing blocks the way."
        return f"({node}) Everything looks as expected; keep working on the {seek}."

    return answer


def webshop_model(invalid: int = 0) -> Callable[[tuple[Message, ...]], str]:
    """Answers for the WebShop spec; see the module docstring."""

    def answer(messages: tuple[Message, ...]) -> str:
        node = which(messages, WEBSHOP_QUESTIONS)
        prompt = "\n".join(m.content for m in messages if m.role == "user")
        if node != "action":
            return f"({node}) The page is read; the plan goes on."
        refused = _refused(messages)
        if refused < invalid:
            return "I would buy it." if refused == 0 else '{"action": "click", "target": "nope"}'
        buttons = prompt.rpartition("Buttons on this page:")[2].splitlines()[0]
        names = [b.strip() for b in buttons.split("|") if b.strip()]
        task = prompt.rpartition("Task:")[2].splitlines()[0].strip()
        wanted = [n for n in names if re.search(rf"\b{re.escape(n)}\b", task, re.IGNORECASE)]
        wanted = [n for n in wanted if f"click[{n}]" not in prompt]
        if "buy now" in [n.lower() for n in names] and wanted:
            step = {"action": "click", "target": wanted[0]}
        elif "buy now" in [n.lower() for n in names]:
            step = {"action": "click", "target": "buy now"}
        elif "(search box)" in names:
            step = {"action": "search", "target": task}
        else:
            items = [n for n in names if re.fullmatch(r"[A-Z0-9]{10}", n)]
            step = {"action": "click", "target": items[0] if items else "back to search"}
        return "Plan: shop.\n" + json.dumps(step)

    return answer
