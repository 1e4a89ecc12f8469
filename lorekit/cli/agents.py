"""``lorekit agents list``: the registered agents, their model roles and what they need.

Read from the registry (:mod:`lorekit.registry`: LoreKit's agents and every
installed plugin's, with the package that registered each); an agent is built
with its defaults only to ask which roles it uses, and one that cannot be built
shows ``?``.
"""

from __future__ import annotations

import click
from rich.markup import escape
from rich.table import Table

from lorekit.cli.console import console


@click.group()
def agents() -> None:
    """Agents: list them with their model roles and what they need."""


@agents.command("list")
def agents_list() -> None:
    """List registered agents: roles, whether they need a model, the extra they need."""
    from lorekit.agents.registry import agent_entry, agent_names, needs_model
    from lorekit.extras import extra_installed, install_command
    from lorekit.tables import fit_table

    rows = []
    for name in agent_names():
        entry = agent_entry(name)
        description = entry.description + _origin(entry.origin)
        model = "yes" if needs_model(name) else "no"
        extra = entry.meta.get("extra")
        needs = ""
        if extra is not None:
            missing = extra_installed(extra) is False
            needs = f"{extra} extra" + (f": {install_command(extra)}" if missing else "")
        rows.append((escape(name), escape(description), escape(_roles(name)), model, escape(needs)))
    wanted = ["agent", "description", "roles", "model", "needs"]
    if not any(row[4] for row in rows):  # no agent needs an extra: no empty column
        wanted.pop()
    table = Table(*wanted)
    for row in rows:
        table.add_row(*row[: len(wanted)])
    fit_table(console, table, keep=("agent", "roles", "model"), drop=("needs",))
    console.print(table)


def _origin(origin: str) -> str:
    """`` (from PACKAGE)`` for a part an outside package registered; nothing for LoreKit's."""
    package = origin.partition(":")[0]
    return "" if package in ("lorekit", "code") else f" (from {package})"


def _roles(name: str) -> str:
    """The model roles agent ``name`` asks for with its default options."""
    from lorekit.agents import declared_roles, make_agent, needs_model

    if not needs_model(name):
        return "-"
    try:
        roles = declared_roles(make_agent(name))
    except Exception:  # an agent that needs an option or an extra to be built
        return "? (set by its options)"
    return ", ".join(roles) if roles else "(any)"
