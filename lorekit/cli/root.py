"""The ``lorekit`` group: its global options, its commands (from the registry), the entry point.

Every failure ends with one line on stderr: exit code 2 for what the user can
fix before running (arguments, config, roles, keys, extras, paths), 1 for a run
or request that failed (:mod:`lorekit.cli.errors`). Each command lives in a
module of its own and is imported only when it runs. Commands come from
:mod:`lorekit.registry` (kind ``command``): the core's
(:mod:`lorekit.cli.plugin`), each method's group, and any installed plugin's.
"""

from __future__ import annotations

from collections.abc import Sequence

import click

from lorekit import __version__
from lorekit.cli.errors import run_cli, set_debug
from lorekit.cli.lazy import LazyGroup, registered_commands


@click.group(
    cls=LazyGroup,
    lazy_commands=registered_commands,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(__version__, "--version", "-V", prog_name="lorekit")
@click.option(
    "--debug",
    is_flag=True,
    help="Print the traceback of an error instead of one line (also: LOREKIT_DEBUG=1).",
)
def cli(debug: bool) -> None:
    """LoreKit: agents that learn how a world works, and the lab to test them."""
    set_debug(debug)


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point: every failure ends as one line and an exit code (see errors)."""
    run_cli(cli, argv)
