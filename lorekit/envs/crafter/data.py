"""Loads ``data.yaml`` (names, texts, task settings) once per process."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lorekit import yamlio

DATA_FILE = Path(__file__).with_name("data.yaml")


@functools.cache
def data() -> Mapping[str, Any]:
    """The parsed ``data.yaml``."""
    with DATA_FILE.open(encoding="utf-8") as fh:
        loaded: dict[str, Any] = yamlio.safe_load(fh)
    return loaded


def text(key: str) -> str:
    """One observation template from the ``text`` section."""
    return str(data()["text"][key])
