"""The dry run's models, and how each agent orders its prompts.

A cost estimate needs the agent's own prompts (their manuals, examples and
growing histories) and answers of the length and form a model would give, so
that the agent takes the turns, plans and retries it would. No model is
called: :func:`shape_roles` gives the same scripted models that ``reproduce run
--simulate`` plays with (the registry :mod:`lorekit.agents.simulated`), so the
estimate and a simulated run meter one and the same thing. Rows that test with
a build (AutoManual) are not measured: the dry run does not play builds.
:data:`PROMPT_ORDER` says, per agent, why its prompts share a stable prefix.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lorekit.agents.simulated import ADAPT_FAMILY, simulated_roles
from lorekit.llm.roles import Roles

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

BUILT_FIRST = frozenset({"automanual"})
"""Agents whose rows test with what a build made: the dry run does not play builds."""


def shape_roles(env: str, agent: str, env_options: Mapping[str, Any] | None = None) -> Roles:
    """The scripted models for ``agent`` on ``env``; LookupError when there are none."""
    if agent in BUILT_FIRST:
        raise LookupError(
            f"agent {agent!r} tests with a build, and the dry run does not play builds yet"
        )
    return simulated_roles(env, env_options or {}, agent)
