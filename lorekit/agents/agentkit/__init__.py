"""AgentKit's two published agents as shipped graph specs (Wu et al. 2024).

* :class:`AgentKitCrafterAgent` (``--agent agentkit-crafter``): ``crafter.yaml``,
  32 nodes with planning behind a gate, short- and long-term reflection, a
  knowledge base, a skill library and action repeats.
* :class:`AgentKitWebShopAgent` (``--agent agentkit-webshop``): ``webshop.yaml``,
  the 6-node zero-shot shopper.

See ``docs/agentkit.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lorekit.lazyexports import lazy_attributes

if TYPE_CHECKING:
    from lorekit.agents.agentkit.common import AgentKitPassError
    from lorekit.agents.agentkit.crafter import AgentKitCrafterAgent
    from lorekit.agents.agentkit.webshop import AgentKitWebShopAgent

__all__ = ["AgentKitCrafterAgent", "AgentKitPassError", "AgentKitWebShopAgent"]

if not TYPE_CHECKING:  # mypy checks the names above; at run time they load on use
    __getattr__ = lazy_attributes(
        __name__,
        {
            "lorekit.agents.agentkit.common": ("AgentKitPassError",),
            "lorekit.agents.agentkit.crafter": ("AgentKitCrafterAgent",),
            "lorekit.agents.agentkit.webshop": ("AgentKitWebShopAgent",),
        },
    )
