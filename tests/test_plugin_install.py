"""The tutorial's outside plugin (examples/tiny_plugin: an env, an agent, its view) is
pip-installed into a fresh virtual environment and every command sees it, with nothing
in LoreKit edited (docs/plugins.md walks through the same steps)."""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = ROOT / "examples" / "tiny_plugin"

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("plugin-install")]  # one venv


def _run(args: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, timeout=600, check=False, **kw)  # type: ignore[call-overload]


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new virtual environment that sees this one's packages (LoreKit and its
    dependencies, without copying them) and has the plugin installed by pip."""
    home = tmp_path_factory.mktemp("venv")
    done = _run([sys.executable, "-m", "venv", "--without-pip", str(home)])
    assert done.returncode == 0, done.stderr
    python = home / "bin" / "python"
    purelib = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
    ours = [*site.getsitepackages(), sysconfig.get_paths()["purelib"]]
    lines = "".join(f"import site; site.addsitedir({p!r})\n" for p in dict.fromkeys(ours))
    Path(purelib.stdout.strip(), "lorekit-host.pth").write_text(lines, encoding="utf-8")
    source = home / "tiny_plugin"  # a copy: setuptools writes its build folders beside it
    shutil.copytree(PLUGIN, source)
    install = _run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
         "--no-build-isolation", "--no-index", "-q", str(source)],
    )  # fmt: skip
    assert install.returncode == 0, install.stderr
    return home


def lorekit(venv: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(ROOT)  # this checkout's LoreKit, whatever the host venv holds
    return _run([str(venv / "bin" / "python"), "-m", "lorekit", *args], env=env)


def test_the_plugin_is_listed_by_every_listing_command(venv: Path) -> None:
    envs = lorekit(venv, "envs", "list")
    assert envs.returncode == 0 and "lamps" in envs.stdout, envs.stderr
    agents = lorekit(venv, "agents", "list")
    assert "first-choice" in agents.stdout and "lorekit-tiny-plugin" in agents.stdout
    plugins = lorekit(venv, "plugins")
    assert "lorekit-tiny-plugin:tiny" in plugins.stdout and "lamps" in plugins.stdout
    assert "failed" not in plugins.stderr


def test_run_show_and_report_work_with_the_plugin(venv: Path, tmp_path: Path) -> None:
    store = str(tmp_path / "runs.sqlite3")
    run = lorekit(venv, "run", "lamps", "--agent", "first-choice", "-n", "3", "--run-id", "t",
                  "--store", store, "--no-progress")  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "3" in run.stdout and "success" in run.stdout.lower()
    show = lorekit(venv, "show", "t", "0", "--store", store)
    assert show.returncode == 0, show.stderr
    assert "distinct actions" in show.stdout  # the view's header line
    assert any(line.strip().startswith("1. toggle") for line in show.stdout.splitlines())
    page = tmp_path / "report.html"
    report = lorekit(venv, "report", "t", "--store", store, "-o", str(page))
    assert report.returncode == 0, report.stderr
    assert 'registerView("first-choice"' in page.read_text(encoding="utf-8")


def test_the_plugin_env_keeps_the_contract_and_the_core_caps_it(venv: Path) -> None:
    code = (
        "from lorekit.envs import make, check_env\n"
        "env = make('lamps', lamps=3, max_steps=2)\n"
        "check_env(env)\n"
        "env.reset('lamps-1-2-3')\n"
        "steps = [env.step('look'), env.step('look')]\n"
        "print(steps[-1].done, steps[-1].info['truncated'], env.step('look').info['valid'])\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(ROOT)
    done = _run([str(venv / "bin" / "python"), "-c", code], env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True", "False"]


def test_a_broken_plugin_is_one_line_and_the_rest_still_works(venv: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    (broken / "broken_plugin").mkdir(parents=True)
    (broken / "broken_plugin" / "__init__.py").write_text(
        "def register(registry):\n    raise RuntimeError('this plugin is broken')\n"
    )
    (broken / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=68"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "broken-plugin"\nversion = "0.1"\n'
        '[project.entry-points."lorekit.plugins"]\nbroken = "broken_plugin:register"\n'
    )
    python = venv / "bin" / "python"
    install = _run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
                    "--no-build-isolation", "--no-index", "-q", str(broken)])  # fmt: skip
    assert install.returncode == 0, install.stderr
    try:
        envs = lorekit(venv, "envs", "list")
        assert envs.returncode == 0 and "lamps" in envs.stdout and "textcraft" in envs.stdout
        lines = [line for line in envs.stderr.splitlines() if "broken-plugin" in line]
        assert lines == [
            "lorekit: plugin broken-plugin:broken failed to load: RuntimeError: this plugin is "
            "broken"
        ]
    finally:
        _run([sys.executable, "-m", "pip", "--python", str(python), "uninstall", "-y", "-q",
              "broken-plugin"])  # fmt: skip
