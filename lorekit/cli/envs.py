"""``lorekit envs list``: the registered environments and the extra each needs."""

from __future__ import annotations

import click
from rich.markup import escape
from rich.table import Table

from lorekit.cli.console import console


@click.group()
def envs() -> None:
    """Environments."""


@envs.command("list")
def envs_list() -> None:
    """List registered environments."""
    from lorekit.envs import list_envs
    from lorekit.envs.registry import env_extra
    from lorekit.extras import extra_installed, install_command

    table = Table("env", "description", "needs")
    for name, desc in list_envs():
        extra = env_extra(name)
        needs = ""
        if extra is not None:
            installed = extra_installed(extra)
            missing = "" if installed is not False else f": {install_command(extra)}"
            needs = f"{extra} extra{missing}"
        table.add_row(escape(name), escape(desc), escape(needs))  # "lorekit[crafter]"
    console.print(table)
