"""Every sample in README.md and docs/ works as written: each ``lorekit``
command line names commands and options that exist, with values of the right
type, and each run config (a YAML block with ``roles:``) loads."""

from __future__ import annotations

import itertools
import re
import shlex
from pathlib import Path

import click
import pytest

from lorekit.cli import cli
from lorekit.config import parse_config
from lorekit.yamlio import safe_load

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PLACEHOLDER = re.compile(r"[A-Z][A-Z_0-9.=]*")


def blocks(lang: str = "") -> list[tuple[str, str]]:
    out = []
    for page in PAGES:
        for tag, body in re.findall(r"```([a-z]*)\n(.*?)```", page.read_text("utf-8"), re.S):
            if not lang or tag == lang:
                out.append((page.name, body))
    return out


def command_lines() -> list[tuple[str, list[str]]]:
    """``lorekit ...`` lines that are examples, not synopses (no [OPTIONAL], RUN, ...)."""
    found = []
    for page, body in blocks():
        for line in body.replace("\\\n", " ").splitlines():
            for part in line.strip().removeprefix("$ ").split("&&"):
                part = part.strip().split(" #", 1)[0]
                if not part.startswith("lorekit ") or re.search(r"[\[|<>…]|\.\.\.", part):
                    continue
                args = shlex.split(part)[1:]
                if not any(PLACEHOLDER.fullmatch(a) for a in args):
                    found.append((page, args))
    return found


COMMANDS = command_lines()


def test_the_docs_have_samples_to_check() -> None:
    assert len(COMMANDS) > 50


@pytest.mark.parametrize(("page", "args"), COMMANDS, ids=[" ".join(a) for _, a in COMMANDS])
def test_command_samples_parse(page: str, args: list[str]) -> None:
    cmd: click.Command = cli
    rest = list(args)
    ctx = click.Context(cli)
    while isinstance(cmd, click.Group) and rest:
        sub = cmd.get_command(ctx, rest[0])  # the root group loads its commands lazily
        if sub is None:
            break
        cmd, rest = sub, rest[1:]
    if isinstance(cmd, click.Group) and rest and not rest[0].startswith("-"):
        pytest.fail(f"{page}: lorekit {' '.join(args)}: no command {rest[0]!r}")
    try:
        cmd.make_context("lorekit", rest)
    except click.exceptions.Exit:
        pass  # --version, --help
    except click.BadParameter as exc:
        if "does not exist" not in str(exc):  # files the sample makes first, or the reader has
            pytest.fail(f"{page}: lorekit {' '.join(args)}: {exc}")
    except click.UsageError as exc:
        pytest.fail(f"{page}: lorekit {' '.join(args)}: {exc}")


CONFIGS = [(page, body) for page, body in blocks("yaml") if re.search(r"^roles:", body, re.M)]


@pytest.mark.parametrize(("page", "body"), CONFIGS, ids=[p for p, _ in CONFIGS])
def test_run_config_samples_load(page: str, body: str) -> None:
    assert CONFIGS
    parse_config(safe_load(body), source=page)


def _runs_with_roles() -> list[tuple[str, str, list[str]]]:
    """``lorekit run ENV --agent A ... --role R=M`` samples: (page, agent, roles)."""
    out = []
    for page, args in COMMANDS:
        if args[:1] != ["run"] or "--role" not in args:
            continue
        flags = dict(itertools.pairwise(args))
        agent = flags.get("--agent") or flags.get("-a")
        roles = [args[i + 1].partition("=")[0] for i, a in enumerate(args[:-1]) if a == "--role"]
        if agent:
            out.append((page, agent, roles))
    return out


ROLE_SAMPLES = _runs_with_roles()


def test_there_are_role_samples_to_check() -> None:
    assert any(agent == "agentkit-crafter" for _, agent, _ in ROLE_SAMPLES)


@pytest.mark.parametrize(
    ("page", "agent", "roles"), ROLE_SAMPLES, ids=[a for _, a, _ in ROLE_SAMPLES]
)
def test_role_samples_name_roles_the_agent_has(page: str, agent: str, roles: list[str]) -> None:
    from lorekit.agents import declared_roles, make_agent

    has = declared_roles(make_agent(agent))
    assert has is not None
    assert set(roles) <= set(has), f"{page}: --role {sorted(set(roles) - set(has))} for {agent}"
