"""The harness knows no agent and no env: ``lorekit/eval`` imports neither a specific agent
package nor a specific env package, directly or through a ``module:name`` string.

What is particular to an agent reaches ``lorekit show`` and the report through
:mod:`lorekit.agents.views`; what is particular to an env's runs through
:mod:`lorekit.envs.summaries`.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import lorekit

ROOT = Path(lorekit.__file__).parent
#: The generic modules of ``lorekit.agents`` the harness may use.
AGENT_MODULES = {"lorekit.agents.base", "lorekit.agents.views", "lorekit.agents.registry"}
#: Files allowed to name a specific agent or env package, with the name (none).
EXCEPTIONS: set[tuple[str, str]] = set()
_SPEC = re.compile(r"lorekit\.(?:agents|envs)(?:\.\w+)+(?::\w+)?")


def _part(name: str, layer: str) -> str | None:
    """``lorekit.<layer>.X`` when ``name`` is in module or package X of that layer."""
    parts = name.split(".")
    if len(parts) < 3 or parts[:2] != ["lorekit", layer]:
        return None
    here = ROOT / layer / parts[2]
    return (
        f"lorekit.{layer}.{parts[2]}" if here.is_dir() or here.with_suffix(".py").exists() else None
    )


def imported(tree: ast.AST) -> list[str]:
    """Every module an ``import``/``from`` names (and each name it imports, which may be a
    module), and every ``"module:name"`` string in the code (what ``importlib`` loads lazily)."""
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
            names += [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Constant) and _SPEC.fullmatch(str(node.value)):
            names.append(str(node.value).split(":")[0])
    return names


def violations(path: Path) -> list[str]:
    """The specific agents and envs a file imports: any agent module but the generic ones,
    any env that is a package of its own (``lorekit.envs.crafter``; not ``envs.base``)."""
    found = []
    for name in imported(ast.parse(path.read_text(encoding="utf-8"))):
        if any(path.name == f and (name + ".").startswith(m + ".") for f, m in EXCEPTIONS):
            continue
        agent = _part(name, "agents")
        env = _part(name, "envs")
        env_package = env is not None and (ROOT / "envs" / env.rsplit(".", 1)[1]).is_dir()
        if (agent and agent not in AGENT_MODULES) or env_package:
            found.append(name)
    return [f"{path.name}: {name}" for name in found]


def test_eval_imports_no_specific_agent_or_env() -> None:
    files = sorted((ROOT / "eval").rglob("*.py"))
    assert len(files) > 10
    assert [v for f in files for v in violations(f)] == []


def test_the_check_sees_each_way_in(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import lorekit.agents.adapt\n"
        "from lorekit.agents.teams.view import render_teams\n"
        "from lorekit.agents import spring\n"
        "from lorekit.envs.crafter.scoring import crafter_score\n"
        "LAZY = 'lorekit.agents.automanual.view:VIEW'\n"
        "from lorekit.agents.views import load_views\n"
        "from lorekit.agents.base import Agent\n"
        "from lorekit.agents import Trajectory, make_agent\n"
        "from lorekit.envs.summaries import run_summary\n"
        "from lorekit.envs.base import Task\n"
        "DOC = 'see lorekit.agents.adapt for the tree'\n",
        encoding="utf-8",
    )
    names = sorted(v.split(": ")[1] for v in violations(probe))
    assert names == sorted(
        [
            "lorekit.agents.adapt",
            "lorekit.agents.teams.view",
            "lorekit.agents.teams.view.render_teams",
            "lorekit.agents.spring",
            "lorekit.envs.crafter.scoring",
            "lorekit.envs.crafter.scoring.crafter_score",
            "lorekit.agents.automanual.view",
        ]
    )
