"""Scripted models that answer an agent's real prompts in the shape of a real model.

A cost estimate needs the agent's own prompts (their manuals, examples and
growing histories) and answers of the length and form a model would give,
so that the agent takes the turns, plans and retries it would. No model is
called: :func:`shape_roles` picks, per agent and env, the scripted models the
agents' own simulations provide (TextCraft's ADaPT study models, AgentKit's
and SPRING's Crafter and WebShop models), and for the ReAct/ADaPT family on
the other envs a model that replays the env's first worked example from the
prompt (its thoughts and actions, ending with its verdict), writes a two-step
plan when asked for one and a one-line lesson when asked to reflect. The
replayed actions meet another game, so most such episodes fail: they cost
what a failing episode costs, the dear case, which an estimate should not miss.
(On WebShop the replayed example ends with a purchase, which ends the episode:
ADaPT never decomposes there, so its estimate is ReAct's, a lower bound.)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from lorekit.agents.adapt.simulation import SimulatedLLM, textcraft_executor, textcraft_planner
from lorekit.llm.base import Message
from lorekit.llm.roles import Roles
from lorekit.llm.scripted import ScriptedLLM

ADAPT_FAMILY = frozenset({"react", "adapt", "plan-execute", "try-again", "reflexion"})
"""Agents that talk through ADaPT's executor, planner and reflection prompts."""
MODEL = "simulated"
"""The model name the scripted models record (priced at zero)."""

_ADAPT_ORDER = (
    "stable parts first: the system message (manual, rules, worked examples), then the "
    "task and state; each turn appends to the previous prompt"
)
PROMPT_ORDER: dict[str, str] = {
    **dict.fromkeys(ADAPT_FAMILY, _ADAPT_ORDER),
    "agentkit-crafter": "stable parts first: the system message (the manual), then what is "
    "known, this pass's earlier answers and the node's question; consecutive nodes differ "
    "after the shared start",
    "agentkit-webshop": "stable parts first: the system message (guidance), then the page "
    "and the node's question",
    "spring": "stable parts first: the paper's context and the knowledge, then the last two "
    "observations, then the question; the questions of one step share all but the last",
}
"""How each agent orders its prompts, for the dry run's report on prompt caching."""

_TURN = re.compile(r"^Thought: (.*)\nAction: (.*)$", re.M)
_GOAL = re.compile(r"^Goal: (.*)$", re.M)
_EXAMPLE = re.compile(r"^Example (\d+)$", re.M)


def shape_roles(env: str, agent: str, env_options: Mapping[str, Any] | None = None) -> Roles:
    """Scripted models for ``agent`` on ``env``; LookupError when there are none."""
    if agent in ADAPT_FAMILY:
        if env == "textcraft":
            return _textcraft_roles(env_options or {})
        return Roles(SimulatedLLM(replay_answer, model=MODEL))
    if agent == "agentkit-crafter" or agent == "spring":
        from lorekit.agents.agentkit.simulation import crafter_model
        from lorekit.agents.spring.simulation import spring_model

        fn = crafter_model() if agent == "agentkit-crafter" else spring_model()
        return Roles(ScriptedLLM(fn=fn, model=MODEL))
    if agent == "agentkit-webshop":
        from lorekit.agents.agentkit.simulation import webshop_model

        return Roles(ScriptedLLM(fn=webshop_model(), model=MODEL))
    raise LookupError(f"no scripted models answer agent {agent!r}'s prompts on env {env!r}")


def _textcraft_roles(env_options: Mapping[str, Any]) -> Roles:
    """The ADaPT study's TextCraft models (capability 2, noise 0.1: its defaults)."""
    from lorekit.envs import make

    env = make("textcraft", **dict(env_options))
    try:
        book = env.book  # type: ignore[attr-defined]
    finally:
        env.close()
    executor = textcraft_executor(book, capability=2, noise=0.1)
    planner = textcraft_planner(book)

    def answer(messages: tuple[Message, ...], draw: int = 0) -> str:
        if "Execution order:" in messages[0].content:
            return planner(messages, draw)
        return executor(messages, draw)

    return Roles(SimulatedLLM(answer, model=MODEL))


def replay_answer(messages: tuple[Message, ...], draw: int = 0) -> str:
    """The replaying model of the module docstring, for any env's ADaPT prompts."""
    system = messages[0].content
    if "Reflection:" in system:
        return (
            "Reflection: I acted before checking where the object was and repeated "
            "a failed action; next time I will look first and try each place once."
        )
    if "Execution order:" in system:
        goal = _GOAL.findall("\n".join(m.content for m in messages[1:]))
        task = goal[-1].strip() if goal else "the task"
        return (
            f"Thought: I split the task into finding what it needs and finishing it.\n"
            f"Step 1: find and take what this task needs: {task}\n"
            f"Step 2: {task}\n"
            "Execution order: (Step 1 AND Step 2)"
        )
    examples = _EXAMPLE.split(system)  # [before, "1", example 1, "2", example 2, ...]
    turns = _TURN.findall(examples[2]) if len(examples) > 2 else []
    taken = sum(1 for m in messages[2:] if m.role == "assistant")
    if not turns:
        return "Thought: I see no way to go on.\nAction: failed"
    thought, action = turns[min(taken, len(turns) - 1)]
    return f"Thought: {thought}\nAction: {action}"
