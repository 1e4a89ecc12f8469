"""The root group imports a command's module only when that command runs (the
commands come from the registry: the core's, the methods', plugins'), and the
modules of ``lorekit/cli/`` form no import circle."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import click
import pytest

from lorekit.cli import cli
from lorekit.cli.lazy import LazyGroup, registered_commands

COMMANDS = registered_commands()

CLI_DIR = Path(__file__).resolve().parents[2] / "lorekit" / "cli"
SHARED = {"__init__", "__main__", "root", "lazy", "console", "errors", "checks", "options",
          "prepare", "stores", "local_model", "typed", "plugin"}  # fmt: skip
HEAVY = ("lorekit.agents", "lorekit.envs", "lorekit.eval", "lorekit.graph", "lorekit.laws",
         "lorekit.sandbox")  # fmt: skip


def modules_after(args: list[str]) -> set[str]:
    """The modules loaded once ``lorekit ARGS`` has run, in a fresh interpreter."""
    code = (
        "import json, sys\n"
        "from lorekit.cli import main\n"
        "try:\n"
        f"    main({args!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(json.dumps(sorted(sys.modules)), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


def command_modules() -> set[str]:
    return {entry.target.partition(":")[0] for entry in COMMANDS.values()}


def _registrations(loaded: set[str]) -> set[str]:
    """The plugin registration modules loaded, and the packages above them (whose
    ``__init__`` had to run to reach them)."""
    plugins = {m for m in loaded if m.endswith(".plugin")}
    parents = {m.rsplit(".", k)[0] for m in plugins for k in range(1, m.count("."))}
    return plugins | parents


@pytest.mark.parametrize("args", [["--version"], ["--help"]])
def test_version_and_help_import_no_command_and_no_agent_or_env(args: list[str]) -> None:
    loaded = modules_after(args)
    assert "lorekit.cli.root" in loaded  # the probe did run the command line
    assert not loaded & command_modules()
    # --help reads the registrations (each method's plugin module and the lazy package
    # above it); nothing else of an agent, env or the harness is imported
    assert not [m for m in loaded - _registrations(loaded) if m.startswith(HEAVY)]
    if args == ["--version"]:  # --version does not even read the registrations
        assert not _registrations(loaded)


def test_a_command_imports_its_own_module_only() -> None:
    loaded = modules_after(["runs", "list", "--store", "/nonexistent/store.sqlite3"])
    assert loaded & command_modules() == {"lorekit.cli.runs"}


def test_the_table_lists_exactly_the_commands_the_group_serves() -> None:
    ctx = click.Context(cli)
    assert isinstance(cli, LazyGroup)
    assert cli.list_commands(ctx) == sorted(COMMANDS)
    for name, entry in COMMANDS.items():
        command = cli.get_command(ctx, name)
        assert isinstance(command, click.Command), name
        assert command is entry.load()
        assert command.name == name
        # the listing shortens the table's help exactly as the command's own
        for limit in (45, 70, 1_000):
            listed = click.Command(name, help=entry.help).get_short_help_str(limit)
            assert listed == command.get_short_help_str(limit), name
    assert cli.get_command(ctx, "no-such-command") is None


def test_help_listing_is_the_same_before_and_after_the_commands_load() -> None:
    def listing(group: LazyGroup) -> str:
        ctx = click.Context(group, info_name="lorekit", terminal_width=100)
        return group.get_help(ctx)

    fresh = LazyGroup("lorekit", lazy_commands=COMMANDS)
    before = listing(fresh)
    assert not fresh.commands  # nothing imported to list them
    ctx = click.Context(fresh)
    for name in COMMANDS:
        fresh.get_command(ctx, name)
    assert listing(fresh) == before
    assert all(f"  {name} " in before for name in COMMANDS)


def test_commands_added_the_usual_way_are_served_and_win() -> None:
    group = LazyGroup("g", lazy_commands={"runs": COMMANDS["runs"]})

    @click.command("runs")
    def plugin_runs() -> None:
        """A plugin's runs."""

    group.add_command(plugin_runs)
    group.add_lazy_command("show", COMMANDS["show"].target, COMMANDS["show"].help)
    ctx = click.Context(group)
    assert group.list_commands(ctx) == ["runs", "show"]
    assert group.get_command(ctx, "runs") is plugin_runs
    assert isinstance(group.get_command(ctx, "show"), click.Command)


def _cli_imports(path: Path) -> set[str]:
    """The ``lorekit.cli`` modules that ``path`` imports, anywhere in the file."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "lorekit.cli":
                found |= {alias.name for alias in node.names if (CLI_DIR / f"{alias.name}.py")
                          .exists()}  # fmt: skip
            elif node.module.startswith("lorekit.cli."):
                found.add(node.module.split(".")[2])
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[2] for a in node.names if a.name.startswith("lorekit.cli.")}
    return found - {path.stem}


def _private_names(path: Path) -> set[tuple[str, str]]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("lorekit.cli."):
            out |= {(node.module or "", a.name) for a in node.names if a.name.startswith("_")}
    return out


def test_cli_modules_form_no_circle_and_shared_ones_import_no_command() -> None:
    graph = {path.stem: _cli_imports(path) for path in CLI_DIR.glob("*.py")}
    assert set(graph) >= SHARED
    for name in SHARED:
        assert graph[name] <= SHARED, f"{name} imports a command: {graph[name] - SHARED}"
    for path in CLI_DIR.glob("*.py"):
        assert not _private_names(path), f"{path.name} imports private names"
    state: dict[str, int] = {}

    def visit(name: str, trail: list[str]) -> None:
        if state.get(name) == 1:
            pytest.fail("import circle: " + " -> ".join([*trail, name]))
        if state.get(name) == 2:
            return
        state[name] = 1
        for nxt in sorted(graph.get(name, ())):
            visit(nxt, [*trail, name])
        state[name] = 2

    for name in sorted(graph):
        visit(name, [])
