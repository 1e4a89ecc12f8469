"""The built-in envs' factories: what ``lorekit.envs.make(NAME, ...)`` calls.

The registry names these by import string (``lorekit.envs.builtin:make_alfworld``)
and imports this module only when an env is made or its arguments are checked.
Each factory states the arguments its env accepts, so a bad argument is refused
before the env's package (and its optional dependencies) is imported; the env
class itself is imported inside the factory, only when the env is built.
"""

from __future__ import annotations

from typing import Any

from lorekit.envs.base import TextEnv

__all__ = [
    "make_alfworld",
    "make_crafter",
    "make_crafter_party",
    "make_miniwob",
    "make_textcraft",
    "make_webshop",
]


def make_textcraft(
    source: Any = "minecraft-data",
    *,
    compat: bool = False,
    max_steps: int | None = 40,
    seed: int = 0,
    distractors: int = 10,
    test_size: int = 200,
    dev_size: int = 100,
) -> TextEnv:
    from lorekit.envs.textcraft import TextCraftEnv

    return TextCraftEnv(
        source,
        compat=compat,
        max_steps=max_steps,
        seed=seed,
        distractors=distractors,
        test_size=test_size,
        dev_size=dev_size,
    )


def make_crafter(
    *,
    length: int = 10_000,
    expanded: bool = False,
    tasks: str = "all",
    observation: str = "standard",
    area: int = 64,
) -> TextEnv:
    """``length=0``: no step limit (an episode ends on death); ``area``: the world's
    side in cells (AgentKit played 256)."""
    from lorekit.envs.crafter import CrafterTextEnv

    return CrafterTextEnv(
        length=length, expanded=expanded, tasks=tasks, observation=observation, area=area
    )


def make_crafter_party(players: int = 2, *, length: int = 2_000, peaceful: bool = False) -> TextEnv:
    from lorekit.envs.crafter import CrafterParty

    return CrafterParty(players, length=length, peaceful=peaceful)


def make_alfworld(
    source: str = "generated",
    *,
    split: str | None = None,
    data_dir: str | None = None,
    variant: str | None = None,
    syntax: str | None = None,
    arrival: str | None = None,
    strip_arrival: bool = False,
    commands: str = "exact",
    object_ids: bool = False,
    banner: bool = True,
    max_steps: int | None = 50,
) -> TextEnv:
    from lorekit.envs.alfworld import AlfWorldEnv

    return AlfWorldEnv(
        source,
        split=split,
        data_dir=data_dir,
        variant=variant,
        syntax=syntax,  # type: ignore[arg-type]
        arrival=arrival,  # type: ignore[arg-type]
        strip_arrival=strip_arrival,
        commands=commands,  # type: ignore[arg-type]
        object_ids=object_ids,
        banner=banner,
        max_steps=max_steps,
    )


def make_miniwob(
    tasks: str = "automanual-53",
    *,
    episodes_per_task: int = 6,
    seed: int = 0,
    success: str = "strict",
    html: str = "clean",
    actions: str = "plain",
    pages: str = "farama",
    page_time_ms: int | None = 1_000_000,
    max_steps: int | None = 20,
    pool_size: int | None = None,
) -> TextEnv:
    from lorekit.envs.miniwob import MiniWoBEnv

    return MiniWoBEnv(
        tasks,
        episodes_per_task=episodes_per_task,
        seed=seed,
        success=success,  # type: ignore[arg-type]
        html=html,  # type: ignore[arg-type]
        actions=actions,  # type: ignore[arg-type]
        pages=pages,  # type: ignore[arg-type]
        page_time_ms=page_time_ms,
        max_steps=max_steps,
        pool_size=pool_size,
    )


def make_webshop(
    *,
    size: int = 1000,
    goals: int = 2000,
    seed: int = 0,
    data_dir: str | None = None,
    search: str = "fts5",
    max_steps: int | None = 15,
    style: str = "plain",
) -> TextEnv:
    from lorekit.envs.webshop import WebShopEnv

    return WebShopEnv(
        size=size,
        goals=goals,
        seed=seed,
        data_dir=data_dir,
        search=search,
        max_steps=max_steps,
        style=style,
    )
