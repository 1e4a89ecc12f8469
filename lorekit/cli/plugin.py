"""The core's commands, registered like any plugin's (methods add their own groups).

Each command lives in a module of its own, imported only when it runs;
``help`` is the first paragraph of its own help, which ``lorekit --help`` shows
without importing it. LoreKit's ``pyproject.toml`` names :func:`register` in
the ``lorekit.plugins`` entry-point group.
"""

from __future__ import annotations

from lorekit.registry import Registry

COMMANDS: dict[str, tuple[str, str]] = {
    "agents": (
        "lorekit.cli.agents:agents",
        "Agents: list them with their model roles and what they need.",
    ),
    "alfworld": (
        "lorekit.cli.alfworld:alfworld",
        "ALFWorld games: generate them offline, or install ALFWorld's release.",
    ),
    "doctor": (
        "lorekit.cli.doctor:doctor",
        "Check the sandbox's OS isolation, tools and optional extras on this machine.",
    ),
    "envs": ("lorekit.cli.envs:envs", "Environments."),
    "graph": (
        "lorekit.cli.graph:graph",
        "Agent graphs (AgentKit): show or run a YAML graph spec.",
    ),
    "models": ("lorekit.cli.models:models", "Check model endpoints."),
    "plugins": (
        "lorekit.cli.plugins:plugins",
        "Plugins: what each installed package registered, and any that failed to load.",
    ),
    "report": (
        "lorekit.cli.report:report_cmd",
        "Write one self-contained HTML file comparing RUNs, with their episodes to page through.",
    ),
    "reproduce": (
        "lorekit.cli.reproduce:reproduce",
        "Rerun a paper's table with your model; see ours beside the published figures.",
    ),
    "run": (
        "lorekit.cli.run:run_cmd",
        "Evaluate an agent on an environment; results go to the run store.",
    ),
    "runs": ("lorekit.cli.runs:runs", "Inspect recorded runs."),
    "serve": ("lorekit.cli.serve:serve", "Serve models for agents to use."),
    "show": (
        "lorekit.cli.runs:show_cmd",
        "Print one episode: steps, model calls, and an agent's own record (e.g. ADaPT's "
        "decomposition tree, a team's timeline). EPISODE is an index, key or task id; it may "
        "be left out when the run has one episode.",
    ),
    "textcraft": ("lorekit.cli.textcraft:textcraft", "TextCraft's optional data."),
    "view": (
        "lorekit.cli.report:view_cmd",
        "Serve the report of RUNs on 127.0.0.1, read-only; the page refreshes itself as "
        "episodes arrive.",
    ),
}
"""The core's commands: name -> (where it lives, its short help)."""


def register(registry: Registry) -> None:
    """Add the core's commands."""
    for name, (target, help) in COMMANDS.items():
        registry.add_command(name, target, help)
