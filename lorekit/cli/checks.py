"""Checks the CLI makes before it starts any work.

A run that is going to fail for a reason known up front (a role the agent
never asks for, a remote model without an API key, a store or cache path that
cannot be written) should fail in the first second with one line that says
what to change, not after the first episodes, and not with a traceback.
Each check raises :class:`~lorekit.cli.errors.UserError` (exit code 2).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterable
from pathlib import Path

import click

from lorekit.cli.errors import UserError
from lorekit.cli.options import ModelChoice
from lorekit.config import RunConfig, roles_factory, unknown_roles
from lorekit.llm.roles import Roles


def role_names(items: Iterable[str]) -> list[str]:
    """The role names of ``--role ROLE=MODEL`` items, in order."""
    return [item.partition("=")[0] for item in items]


def check_roles(
    config: RunConfig,
    allowed: Iterable[str] | None,
    *,
    owner: str,
    from_flags: Iterable[str] = (),
    config_path: str | None = None,
) -> None:
    """Every role given with ``--role`` must be one that ``owner`` asks for;
    a config file's other roles get a warning on stderr (one file may serve
    several agents: README's ``run.yaml`` sets a planner that ReAct never asks for),
    and are removed from ``config``.

    ``from_flags`` are the role names given with ``--role``, so the message can
    point at the flag or at the config file.
    """
    flagged = set(from_flags)
    for name, problem in unknown_roles(config, allowed, owner).items():
        if name in flagged or config_path is None:
            raise UserError(f"--role: {problem}")
        click.echo(f"lorekit: warning: {config_path}: roles.{name}: {problem}; ignored", err=True)
        del config.roles[name]  # ignored for real: no client, no key check for it


def check_models(
    config: RunConfig,
    allowed: Iterable[str] | None,
    *,
    owner: str,
    models: ModelChoice,
    cache: bool = True,
) -> None:
    """The checks every command that calls models makes before it starts: the
    roles ``owner`` asks for (:func:`check_roles`), their API keys and, unless
    ``cache`` is False (a command that checks more in between), the model cache."""
    check_roles(
        config,
        allowed,
        owner=owner,
        from_flags=role_names(models.roles),
        config_path=models.config_path,
    )
    check_api_keys(config, config_path=models.config_path)
    if cache:
        check_cache(config, config_path=models.config_path)


def check_api_keys(
    config: RunConfig, *, config_path: str | None = None, allow_simulate: bool = False
) -> None:
    """Remote OpenAI-compatible models need a key; servers on this machine do not.

    A role set to ``scripted:simulate`` is refused here too, before anything plays,
    unless the command plays the method's scripted models itself (``allow_simulate``:
    ``lorekit run``): no other command has an agent and an env to look them up by."""
    from lorekit.llm.openai_compat import DEFAULT_BASE_URL, is_local_url

    for role, s in config.roles.items():
        if s.provider == "scripted" and s.model == "simulate" and not allow_simulate:
            raise UserError(
                f"role {role!r}: scripted:simulate stands for a method's scripted test models, "
                "which `lorekit run` plays (and `reproduce run --simulate`); this command "
                "takes scripted:echo or scripted:FILE"
            )
        if s.provider != "openai":
            continue
        url = s.base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        if is_local_url(url):
            continue
        if os.environ.get(s.api_key_env) or os.environ.get("OPENAI_API_KEY"):
            continue
        field = f"roles.{role}.api_key_env in {config_path}" if config_path else "api_key_env"
        raise UserError(
            f"role {role!r} (model {s.model!r} at {url}) needs an API key: set the "
            f"{s.api_key_env} environment variable (or point {field} at the variable "
            "that holds it); servers on localhost need no key"
        )


def writable_file_problem(path: str | Path) -> str | None:
    """Why ``path`` cannot be created or written as an SQLite file, or None.

    Creates missing parent directories (a new run store in a new folder is
    normal). SQLite also writes journal files next to the database, so the
    directory must be writable too.
    """
    p = Path(path)
    if p.is_dir():
        return "it is a directory"
    blocker = next((a for a in p.parents if a.exists()), None)
    if blocker is not None and not blocker.is_dir():
        return f"{blocker} is a file, not a folder"
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return f"cannot create the folder {p.parent}: {exc.strerror or exc}"
    if not os.access(p.parent, os.W_OK | os.X_OK):
        return f"the folder {p.parent} is not writable"
    if p.exists():
        return None if os.access(p, os.R_OK | os.W_OK) else "permission denied"
    try:
        fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return None
    except OSError as exc:
        return exc.strerror or str(exc)
    os.close(fd)
    p.unlink()
    return None


def check_writable(path: str | Path, *, what: str, setting: str) -> None:
    """One line naming the path, the problem and the setting that chooses it."""
    problem = writable_file_problem(path)
    if problem is not None:
        raise UserError(f"cannot write the {what} {path}: {problem} (set another with {setting})")


def _cache_setting(config_path: str | None) -> str:
    return f"cache.path in {config_path}" if config_path else "cache.path in a --config file"


def check_cache(config: RunConfig, *, config_path: str | None = None) -> None:
    """The model cache must be writable, and a replay needs a recorded cache."""
    mode = config.cache.mode
    if mode == "off":
        return
    path = config.cache.path
    setting = _cache_setting(config_path)
    if mode == "replay" and not Path(path).is_file():
        raise UserError(
            f"cache mode replay needs a recorded cache, and there is none at {path} "
            f"(record one with --cache read-write, or set {setting})"
        )
    check_writable(path, what="model cache", setting=f"{setting}, or --cache off")


def build_models(config: RunConfig, *, config_path: str | None = None) -> Roles:
    """:func:`~lorekit.config.build_roles`, with a cache file that is not a
    usable SQLite database reported as one line naming it."""
    return model_factory(config, config_path=config_path)()


def model_factory(config: RunConfig, *, config_path: str | None = None) -> Callable[[], Roles]:
    """:func:`~lorekit.config.roles_factory` (fresh models on each call, one
    cache and one set of limiters), with the cache checked as in :func:`build_models`."""
    try:
        return roles_factory(config)
    except sqlite3.DatabaseError as exc:
        raise UserError(
            f"cannot use {config.cache.path} as the model cache: {exc} (set another with "
            f"{_cache_setting(config_path)}, or --cache off)"
        ) from None
