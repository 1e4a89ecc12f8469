"""Command-line options shared by every command that builds models.

``lorekit run`` and ``lorekit graph run`` both pick models the same way (a run
config, overridden by ``--model``, ``--base-url`` and ``--role``); declaring the
options once keeps their names and help identical. Kept apart from
``lorekit.cli`` because feature CLIs (``lorekit.graph.cli``) import it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import click

F = TypeVar("F", bound=Callable[..., object])


def model_options(f: F) -> F:
    """Add ``--config/-c``, ``--model/-m``, ``--base-url`` and ``--role`` to a command.

    The callback receives ``config_path``, ``model``, ``base_url`` and
    ``roles_opt`` (a tuple of ``ROLE=MODEL`` strings).
    """
    decorators = [
        click.option(
            "--config",
            "-c",
            "config_path",
            type=click.Path(dir_okay=False),
            default=None,
            help="YAML run config: roles, cache, store (docs/models.md).",
        ),
        click.option("--model", "-m", default=None, help="Model of the default role."),
        click.option(
            "--base-url", default=None, help="OpenAI-compatible endpoint of the default role."
        ),
        click.option("--role", "roles_opt", multiple=True, help="ROLE=MODEL, repeatable."),
    ]
    for decorate in reversed(decorators):
        f = decorate(f)
    return f
