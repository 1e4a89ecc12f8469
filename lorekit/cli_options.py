"""Command-line options shared by every command that builds models.

``lorekit run`` and ``lorekit graph run`` both pick models the same way (a run
config, overridden by ``--model``, ``--base-url`` and ``--role``); declaring the
options once keeps their names and help identical. Kept apart from
``lorekit.cli`` because feature CLIs (``lorekit.graph.cli``) import it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TypeVar

import click

F = TypeVar("F", bound=Callable[..., object])


def positive_seconds(
    ctx: click.Context, param: click.Parameter, value: float | None
) -> float | None:
    """Option callback: a duration must be a positive, finite number of seconds
    (``inf`` or ``nan`` would disable a timeout silently, so they are refused
    like zero). Use with ``type=float``."""
    if value is not None and (not math.isfinite(value) or value <= 0):
        raise click.BadParameter(f"expected a positive, finite number of seconds, got {value}")
    return value


def model_options(f: F) -> F:
    """Add ``--config/-c``, ``--model/-m``, ``--base-url``, ``--role`` and
    ``--request-timeout`` to a command.

    The callback receives ``config_path``, ``model``, ``base_url``,
    ``roles_opt`` (a tuple of ``ROLE=MODEL`` strings) and ``request_timeout``
    (seconds or None), to hand to :func:`lorekit.config.apply_overrides`.
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
        click.option(
            "--request-timeout",
            "request_timeout",
            type=float,
            callback=positive_seconds,
            default=None,
            metavar="SECONDS",
            help="Deadline of each model request attempt, for every role "
            "(overrides the config's timeout_s; default 60).",
        ),
    ]
    for decorate in reversed(decorators):
        f = decorate(f)
    return f


# The harness options every command that plays recorded episodes shares
# (lorekit run, team run, automanual build, ...), declared once.
cache_option = click.option(
    "--cache",
    type=click.Choice(["read-write", "replay", "off"]),
    default=None,
    help="Model cache mode (default: the config's; read-write without a config).",
)
retry_errors_option = click.option(
    "--retry-errors", is_flag=True, help="On resume, replay episodes that errored."
)
progress_option = click.option(
    "--progress/--no-progress",
    default=None,
    help="Live progress bar on stderr [default: when stderr is a terminal].",
)
store_option = click.option(
    "--store", default=None, help="Run store (default: the config's, or $LOREKIT_STORE)."
)
