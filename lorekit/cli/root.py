"""The ``lorekit`` group: its global options, the table of its commands, the entry point.

Every failure ends with one line on stderr: exit code 2 for what the user can
fix before running (arguments, config, roles, keys, extras, paths), 1 for a run
or request that failed (:mod:`lorekit.cli.errors`). Each command lives in a
module of its own and is imported only when it runs; adding a command is one
line in :data:`COMMANDS`.
"""

from __future__ import annotations

from collections.abc import Sequence

import click

from lorekit import __version__
from lorekit.cli.errors import run_cli, set_debug
from lorekit.cli.lazy import LazyCommand, LazyGroup

COMMANDS: dict[str, LazyCommand] = {
    "agents": LazyCommand(
        "lorekit.cli.agents:agents",
        "Agents: list them with their model roles and what they need.",
    ),
    "alfworld": LazyCommand(
        "lorekit.cli.alfworld:alfworld",
        "ALFWorld games: generate them offline, or install ALFWorld's release.",
    ),
    "automanual": LazyCommand(
        "lorekit.cli.automanual:automanual",
        "AutoManual: build rules by playing, formulate a manual, test with it.",
    ),
    "doctor": LazyCommand(
        "lorekit.cli.doctor:doctor",
        "Check the sandbox's OS isolation, tools and optional extras on this machine.",
    ),
    "envs": LazyCommand("lorekit.cli.envs:envs", "Environments."),
    "graph": LazyCommand(
        "lorekit.cli.graph:graph", "Agent graphs (AgentKit): show or run a YAML graph spec."
    ),
    "laws": LazyCommand(
        "lorekit.cli.laws:laws", "Laws of crafter from interaction records: collect, learn, score."
    ),
    "manual": LazyCommand("lorekit.cli.automanual:manual", "Manuals written by AutoManual builds."),
    "models": LazyCommand("lorekit.cli.models:models", "Check model endpoints."),
    "report": LazyCommand(
        "lorekit.cli.report:report_cmd",
        "Write one self-contained HTML file comparing RUNs, with their episodes to page through.",
    ),
    "reproduce": LazyCommand(
        "lorekit.cli.reproduce:reproduce",
        "Rerun a paper's table with your model; see ours beside the published figures.",
    ),
    "run": LazyCommand(
        "lorekit.cli.run:run_cmd",
        "Evaluate an agent on an environment; results go to the run store.",
    ),
    "runs": LazyCommand("lorekit.cli.runs:runs", "Inspect recorded runs."),
    "serve": LazyCommand("lorekit.cli.serve:serve", "Serve models for agents to use."),
    "show": LazyCommand(
        "lorekit.cli.runs:show_cmd",
        "Print one episode: steps, model calls, and an agent's own record (e.g. ADaPT's "
        "decomposition tree, a team's timeline). EPISODE is an index, key or task id; it may "
        "be left out when the run has one episode.",
    ),
    "team": LazyCommand(
        "lorekit.cli.team:team", "Teams of agents (S-Agents) in the multi-player Crafter world."
    ),
    "textcraft": LazyCommand("lorekit.cli.textcraft:textcraft", "TextCraft's optional data."),
    "view": LazyCommand(
        "lorekit.cli.report:view_cmd",
        "Serve the report of RUNs on 127.0.0.1, read-only; a reload shows new episodes.",
    ),
}
"""Every command of ``lorekit``: name -> where it lives, and its short help."""


@click.group(
    cls=LazyGroup,
    lazy_commands=COMMANDS,
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
