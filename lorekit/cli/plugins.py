"""``lorekit plugins``: which installed package registered what, and which failed.

Every part LoreKit finds by name comes through the ``lorekit.plugins``
entry-point group (:mod:`lorekit.registry`), LoreKit's own core and methods
included; this lists them by the entry point that registered them, so a user
can see that ``pip install`` of an outside package took effect, and why a
broken one did not.
"""

from __future__ import annotations

from collections import defaultdict

import click
from rich.markup import escape
from rich.table import Table

from lorekit.cli.console import console, err_console


@click.command("plugins")
def plugins() -> None:
    """Plugins: what each installed package registered, and any that failed to load."""
    from lorekit.registry import ENTRY_POINT_GROUP, REGISTRY

    parts: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for entry in REGISTRY:
        parts[entry.origin][entry.kind].append(entry.name)
    table = Table("plugin", "registered")
    for origin in [*REGISTRY.plugins_loaded, *sorted(set(parts) - set(REGISTRY.plugins_loaded))]:
        kinds = parts.get(origin, {})
        listed = "; ".join(f"{kind}: {', '.join(sorted(names))}" for kind, names in kinds.items())
        table.add_row(escape(origin), escape(listed or "(nothing)"))
    console.print(table)
    console.print(f"entry-point group: {ENTRY_POINT_GROUP}", highlight=False)
    for line in REGISTRY.plugin_errors:
        err_console.print(escape(line), highlight=False)
