"""``lorekit doctor``: what this machine gives LoreKit, and how to fix what is missing.

Without the sandbox's OS layer (bubblewrap) LoreKit refuses to run
model-written code unless a command is given ``--unsafe-no-os-sandbox``; a
missing secondary layer (seccomp, the memory cgroup) only gives one warning.
This command is where a user sees exactly which layer is missing, why and
how to fix it, and where CI or a deployment script can insist on all of them
(the exit code is 1 while any sandbox layer is missing).
"""

from __future__ import annotations

import importlib.util
import platform
import shutil
import subprocess
import sys

import click
from rich.markup import escape
from rich.table import Table

#: Optional extras: (extra, the module that proves it is installed, what it enables).
EXTRAS: tuple[tuple[str, str, str], ...] = (
    ("crafter", "crafter", "the crafter and crafter-party environments"),
    ("rl", "stable_baselines3", "RL training on law-based rewards"),
    ("ray", "ray", "the Ray evaluation backend"),
    ("web", "miniwob", "MiniWoB++ in a headless Chromium (also needs Debian's chromium)"),
    ("alfworld", "alfworld", "the ALFWorld environment"),
    ("webshop", "bm25s", "WebShop's bm25s/tantivy search and thefuzz (FTS5 works without)"),
    ("local", "llama_cpp", "a bundled local model: lorekit serve local, --model local"),
)


def _tool_version(tool: str) -> str | None:
    path = shutil.which(tool)
    if path is None:
        return None
    try:
        done = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return path
    return (done.stdout or done.stderr).strip().splitlines()[0] if done.returncode == 0 else path


@click.command("doctor")
@click.option(
    "--isolation",
    type=click.Choice(["auto", "required", "off"]),
    default=None,
    help="Isolation mode to probe (default: $LOREKIT_SANDBOX_ISOLATION or auto).",
)
def doctor(isolation: str | None) -> None:
    """Check the sandbox's OS isolation, tools and optional extras on this machine."""
    from lorekit.cli.console import console
    from lorekit.sandbox.isolation import CORE_LAYERS, UNSAFE_OPTION
    from lorekit.sandbox.pool import memory_cgroup_summary, probe_isolation

    console.print(f"python {platform.python_version()} ({sys.executable})")
    for tool in ("bwrap", "setpriv", "chromium", "chromedriver"):
        console.print(f"{tool}: {_tool_version(tool) or 'not installed'}")

    report = probe_isolation(isolation)
    table = Table(title="sandbox isolation (checked on a started worker)")
    for column in ("layer", "status", "detail / fix"):
        table.add_column(column)
    for layer in report.layers:
        status = "[green]ok[/]" if layer.active else "[red]missing[/]"
        note = layer.detail + (f" (fix: {layer.fix})" if layer.fix else "")
        table.add_row(layer.name, status, escape(note))
    console.print(table)
    console.print(escape(report.summary()))
    outside = report.bwrap is None or any(
        not layer.active and (layer.name in CORE_LAYERS or layer.name == "bubblewrap")
        for layer in report.layers
    )
    if outside:
        console.print(
            escape(
                "without the OS layer LoreKit refuses to run model-written code (AutoManual's "
                "planner): get it with `apt-get install bubblewrap` (a pip install cannot bring "
                f"it), or pass {UNSAFE_OPTION} to such a command to run the code behind the "
                "in-process guard alone (unsafe)"
            )
        )
    console.print(escape(memory_cgroup_summary()))

    extras = Table(title="optional extras")
    for column in ("extra", "status", "enables"):
        extras.add_column(column)
    for extra, module, enables in EXTRAS:
        present = importlib.util.find_spec(module) is not None
        status = "[green]installed[/]" if present else escape(f"pip install 'lorekit[{extra}]'")
        extras.add_row(extra, status, enables)
    console.print(extras)
    if not report.complete:
        sys.exit(1)
