"""The core's environments and their run summaries, registered like any plugin's.

LoreKit's ``pyproject.toml`` names :func:`register` in the ``lorekit.plugins``
entry-point group. Each env is named by its class, whose keyword arguments are
the options ``--env-opt`` and experiment files may set.
"""

from __future__ import annotations

from lorekit.registry import Registry


def register(registry: Registry) -> None:
    """Add TextCraft, Crafter, ALFWorld, MiniWoB++ and WebShop, and the run summaries."""
    registry.add_env(
        "textcraft",
        "lorekit.envs.textcraft.env:TextCraftEnv",
        "Minecraft crafting from text recipes (ADaPT's TextCraft); sources: minecraft-data, "
        "datapack",
        expert=True,
    )
    registry.add_env(
        "crafter",
        "lorekit.envs.crafter.env:CrafterTextEnv",
        "Crafter survival world as text (crafter's engine, 22 achievements)",
        extra="crafter",
        expert=False,
    )
    registry.add_env(
        "alfworld",
        "lorekit.envs.alfworld.env:AlfWorldEnv",
        "ALFWorld households on the real TextWorld/PDDL engine; generated games or the "
        "official data",
        extra="alfworld",
        execution="process",
        expert=True,
    )
    registry.add_env(
        "miniwob",
        "lorekit.envs.miniwob.env:MiniWoBEnv",
        "MiniWoB++ web tasks in a real headless Chromium (AutoManual's 53 tasks and actions)",
        extra="web",
        expert=True,
    )
    registry.add_env(
        "webshop",
        "lorekit.envs.webshop.env:WebShopEnv",
        "WebShop online shopping (search, pages, reward as the original); generated catalogue "
        "or WebShop's files via WEBSHOP_DATA",
        expert=True,
    )
    registry.add_summary("crafter", "lorekit.envs.crafter.runs:run_summary")
    registry.add_summary("miniwob", "lorekit.envs.miniwob.runs:run_summary")
