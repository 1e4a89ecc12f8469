"""A scripted model that answers the SPRING questions, for tests and demos.

It tells the questions of ``spring.yaml`` apart by their wording, answers the
reasoning ones briefly, and at ``feasible`` works out one action from the
current observation in its system text: face the nearest thing of the ``seek`` kind and
``do`` it (walk there along the longer axis first; a blocked step only turns
the player, which is how one comes to face a tree). The ``action`` question
then names that action. It walks straight lines and does not go around
obstacles: it is a stand-in for a model, not a player.

``invalid`` answers the action question that many times per step with an
unusable answer first, so the graph's re-asking (and, past the node's retry
limit, the agent's ``noop`` fallback) can be seen.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from lorekit.envs.crafter.textnav import step_toward
from lorekit.llm.base import Message

QUESTIONS: dict[str, str] = {
    "last": "Which action did you take at the previous step",
    "outcome": "Compare the observation before that action",
    "scene": "Go through the things in the current observation",
    "ready": "do you have what using it takes right now?",
    "subgoals": "Name the three sub-goals",
    "first": "Take the sub-goal with the highest priority.",
    "options": "Pick five of these allowed actions",
    "feasible": "Check every candidate action",
    "action": "pick the single best action",
}
"""Node -> a phrase only its question holds (the test suite checks them against the spec)."""

_BEST = re.compile(r"best: (\w+)")


def which_question(messages: Sequence[Message]) -> str | None:
    """The node whose question was asked last in the conversation (retries included)."""
    text = "\n".join(m.content for m in messages if m.role != "assistant")
    found = {key: text.rfind(phrase) for key, phrase in QUESTIONS.items()}
    key, where = max(found.items(), key=lambda kv: kv[1])
    return key if where >= 0 else None


def spring_model(seek: str = "tree", invalid: int = 0) -> Callable[[tuple[Message, ...]], str]:
    """Answers for :class:`~lorekit.llm.ScriptedLLM` ``fn=``; see the module docstring."""

    def answer(messages: tuple[Message, ...]) -> str:
        node = which_question(messages)
        if node == "feasible":
            obs = messages[0].content.rpartition("Current observation:")[2]
            best = step_toward(obs, seek)
            return f"{best}: met, it brings me to the {seek}.\nbest: {best}"
        if node == "action":
            refused = sum(1 for m in messages if m.role == "assistant")
            if refused < invalid:
                return "I would like to chop the tree down somehow."
            picks = _BEST.findall("\n".join(m.content for m in messages))
            return f"Action: {picks[-1] if picks else 'noop'}"
        canned = {
            "last": "The step before, meant to bring me closer.",
            "outcome": "Nothing to compare yet, or the step did what I wanted.",
            "scene": f"A {seek} is in view; it gives material and needs nothing.",
            "ready": f"{seek}: yes, nothing is missing.",
            "subgoals": f"1. reach the {seek} (5)\n2. use it (4)\n3. look around (2)",
            "first": f"Reaching the {seek} needs nothing held; walk toward it first.",
            "options": "move toward it (5); do once facing it (4)",
        }
        return canned.get(node or "", "I do not know.")

    return answer
