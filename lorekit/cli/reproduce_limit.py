"""``--max-cost``'s stop, on its own so that the build and cost modules both raise it
without importing each other."""

from __future__ import annotations

import click

EXIT_COST_LIMIT = 3


class CostLimitReached(click.ClickException):
    """The spend recorded in the store reached ``--max-cost``; exit 3, resumable."""

    exit_code = EXIT_COST_LIMIT
