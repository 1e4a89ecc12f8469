"""AgentKit's registrations: its two published agents and their scripted test models.

LoreKit's ``pyproject.toml`` names :func:`register` in the ``lorekit.plugins``
entry-point group, exactly as an outside package would.
"""

from __future__ import annotations

from lorekit.registry import Registry


def register(registry: Registry) -> None:
    """Add ``agentkit-crafter`` and ``agentkit-webshop``."""
    registry.add_agent(
        "agentkit-crafter",
        "lorekit.agents.agentkit.crafter:AgentKitCrafterAgent",
        "AgentKit's 32-node Crafter agent: gated planning, reflection, knowledge base, "
        "skills; plays as published (a 256x256 world, episodes end only on death)",
        prompt_order="stable parts first: the system message (the manual), then what is "
        "known, this pass's earlier answers and the node's question; consecutive nodes differ "
        "after the shared start",
    )
    registry.add_agent(
        "agentkit-webshop",
        "lorekit.agents.agentkit.webshop:AgentKitWebShopAgent",
        "AgentKit's 6-node zero-shot WebShop agent",
        prompt_order="stable parts first: the system message (guidance), then the page "
        "and the node's question",
    )
    registry.add_scripted(
        "crafter",
        "agentkit-crafter",
        "lorekit.agents.agentkit.testing:crafter_model",
        "scripted AgentKit answers (lorekit.agents.agentkit.testing)",
    )
    registry.add_scripted(
        "webshop",
        "agentkit-webshop",
        "lorekit.agents.agentkit.testing:webshop_model",
        "scripted AgentKit answers (lorekit.agents.agentkit.testing)",
    )
