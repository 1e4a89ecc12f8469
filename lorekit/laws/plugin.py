"""From Laws to Motivation's registrations: the ``lorekit laws`` commands and the
``experience`` game knowledge other agents may be told (SPRING's
``context=experience:FILE``).

LoreKit's ``pyproject.toml`` names :func:`register` in the ``lorekit.plugins``
entry-point group, exactly as an outside package would.

The scripted extractors of ``laws extract --simulate`` (:mod:`lorekit.laws.testing`)
are not registered as ``scripted`` models: those answer an agent on an env
(``lorekit run --simulate``), and extraction is neither; its own command picks them.
"""

from __future__ import annotations

from lorekit.registry import Registry


def register(registry: Registry) -> None:
    """Add ``lorekit laws`` and the ``experience`` lore."""
    registry.add_command(
        "laws",
        "lorekit.laws.commands.group:laws",
        "Laws of crafter from interaction records: collect, learn, score.",
    )
    registry.add(
        "lore",
        "experience",
        "lorekit.laws.experience:lore_text",
        "the laws of an experience file (lorekit laws learn/extract), as text",
        argument="the path of an experience JSON file",
    )
