"""Where runs are recorded: the default store, how to name another, opening one to read.

Shared by the commands that write runs (through :mod:`lorekit.cli.prepare`)
and the ones that only read them (``runs``, ``show``, ``report``, ...).

The store is, first to last: ``--store``, ``$LOREKIT_STORE``, ``store:`` in the
run config (``--config``), ``store:`` in the user's config file
(``$XDG_CONFIG_HOME/lorekit/config.yaml``, else ``~/.config/lorekit/config.yaml``),
and ``runs/lorekit.sqlite3`` under the current folder. The last one keeps what
README and the docs have always said; ``lorekit run`` prints the store's
absolute path so a run is never lost to a folder the user did not notice, and
the user config gives one store for every folder.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lorekit.cli.errors import UserError

DEFAULT_STORE = "runs/lorekit.sqlite3"
MAX_USER_CONFIG_BYTES = 64 * 1024


def user_config_path() -> Path:
    """``$XDG_CONFIG_HOME/lorekit/config.yaml``, else ``~/.config/lorekit/config.yaml``."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "lorekit" / "config.yaml"


def user_store() -> str | None:
    """``store:`` of the user's config file, or None (no file, or no ``store:``).

    A file that cannot be read or holds anything but ``store:`` is one line naming it."""
    import yaml

    from lorekit import yamlio

    path = user_config_path()
    if not path.is_file():
        return None
    try:
        if path.stat().st_size > MAX_USER_CONFIG_BYTES:
            raise UserError(f"{path}: too large for the user config (a few settings)")
        data = yamlio.safe_load(path.read_text(encoding="utf-8"), source=str(path))
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read the user config: {exc}") from None
    except yaml.YAMLError as exc:
        raise UserError(yamlio.describe_error(exc, str(path))) from None
    if data is None:
        return None
    if not isinstance(data, dict):
        raise UserError(f"{path}: expected settings such as 'store: PATH' at the top level")
    unknown = sorted(str(k) for k in data if k != "store")
    if unknown:
        raise UserError(f"{path}: unknown setting {', '.join(unknown)} (known: store)")
    store = data.get("store")
    if store is None:
        return None
    if not isinstance(store, str) or not store.strip() or "\x00" in store:
        raise UserError(f"{path}: store: expected a file path, got {store!r}")
    return str(Path(store).expanduser())


def default_store() -> str:
    """The store of commands given no ``--store``: ``$LOREKIT_STORE``, the user
    config's ``store:``, else :data:`DEFAULT_STORE` (under the current folder)."""
    return os.environ.get("LOREKIT_STORE") or user_store() or DEFAULT_STORE


def open_store(path: str) -> Any:
    """Open an existing store read-only: inspecting a run never writes to it."""
    from lorekit.eval.store import RunStore, StoreError

    if Path(path).is_dir():
        raise UserError(f"--store: {path} is a folder, not a run store (pass the .sqlite3 file)")
    if not Path(path).is_file():
        raise UserError(f"--store: no run store at {path} (run something first, or pass --store)")
    try:
        return RunStore.open_readonly(path)
    except StoreError as exc:
        raise UserError(f"--store: {exc}") from None


def pick_store(flag: str | None, cfg: Any, config_path: str | None) -> tuple[str, str]:
    """The run store path, and how the user would choose another (for messages)."""
    env = os.environ.get("LOREKIT_STORE")
    if flag:
        return flag, "--store"
    if env:
        return env, "--store or $LOREKIT_STORE"
    if config_path and "store" in getattr(cfg, "model_fields_set", {"store"}):
        return str(cfg.store), f"--store or store: in {config_path}"
    user = user_store()
    if user:
        return user, f"--store or store: in {user_config_path()}"
    if config_path:
        return str(cfg.store), f"--store or store: in {config_path}"
    return DEFAULT_STORE, "--store"


@contextlib.contextmanager
def hold_output(path: str | Path, flag: str) -> Iterator[None]:
    """Be the one process writing the output ``path`` (``laws extract -o``, whose
    progress file a rerun continues) while the block runs; a second process on the
    same output is refused with who holds it (:mod:`lorekit.eval.store_lock`)."""
    from lorekit.eval.store_lock import acquire, release

    lock = Path(f"{path}.lock")
    try:
        lock.parent.mkdir(parents=True, exist_ok=True)
        acquire(lock, f"{flag} {path}", "let it finish or stop it, then run it again")
    except OSError as exc:
        raise UserError(f"{flag}: cannot write beside {path}: {exc.strerror or exc}") from None
    try:
        yield
    finally:
        release(lock)
