"""SPRING's registrations: the agent and its scripted test models.

LoreKit's ``pyproject.toml`` names :func:`register` in the ``lorekit.plugins``
entry-point group, exactly as an outside package would.
"""

from __future__ import annotations

from lorekit.registry import Registry


def register(registry: Registry) -> None:
    """Add the ``spring`` agent."""
    registry.add_agent(
        "spring",
        "lorekit.agents.spring.agent:SpringAgent",
        "SPRING's question graph on Crafter, told the game by --agent-opt "
        "context=paper|actions|experience:FILE",
        prompt_order="stable parts first: the paper's context and the knowledge, then the last "
        "two observations, then the question; the questions of one step share all but the last",
    )
    registry.add_scripted(
        "crafter",
        "spring",
        "lorekit.agents.spring.testing:spring_model",
        "scripted SPRING answers (lorekit.agents.spring.testing)",
    )
