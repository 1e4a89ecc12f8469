"""Where LoreKit keeps what it can always make again: the user's cache folder.

``$XDG_CACHE_HOME/lorekit`` (by default ``~/.cache/lorekit``), never a folder
of the installed package: a system-wide, shared or read-only install must not be
written to by a run. Everything kept here is derived from inputs that are also
part of its key, so deleting the folder only costs the time to make it again.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["disk_cache_disabled", "user_cache_dir"]

DISABLE_VAR = "LOREKIT_NO_DISK_CACHE"
"""Set to 1 to keep nothing on disk (each process then makes everything again)."""


def user_cache_dir(*parts: str) -> Path:
    """``$XDG_CACHE_HOME/lorekit/<parts>`` (not created here)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base, "lorekit", *parts)


def disk_cache_disabled() -> bool:
    return os.environ.get(DISABLE_VAR, "").strip() not in ("", "0")
