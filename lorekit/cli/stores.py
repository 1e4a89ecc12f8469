"""Where runs are recorded: the default store, how to name another, opening one to read.

Shared by the commands that write runs (through :mod:`lorekit.cli.prepare`)
and the ones that only read them (``runs``, ``show``, ``report``, ...).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from lorekit.cli.errors import UserError

DEFAULT_STORE = "runs/lorekit.sqlite3"


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
    if config_path:
        return str(cfg.store), f"--store or store: in {config_path}"
    return DEFAULT_STORE, "--store"
