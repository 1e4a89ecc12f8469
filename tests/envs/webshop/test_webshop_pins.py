"""The webshop extra pins exact versions: search rankings (bm25s, tantivy) and fuzzy scores
(thefuzz) are relied upon, so an install must get the versions they were measured with."""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def _pins() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extra = project["optional-dependencies"]["webshop"]
    pins = {}
    for requirement in extra:
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)==(\d+(?:\.\d+)+)", requirement)
        assert match, f"webshop extra requirement {requirement!r} is not an exact pin"
        pins[match.group(1)] = match.group(2)
    return pins


def test_webshop_extra_pins_every_package_exactly() -> None:
    assert set(_pins()) == {"thefuzz", "bm25s", "PyStemmer", "tantivy"}


@pytest.mark.parametrize("package", ["thefuzz", "bm25s", "PyStemmer", "tantivy"])
def test_installed_version_is_the_pinned_one(package: str) -> None:
    try:
        installed = metadata.version(package)
    except metadata.PackageNotFoundError:
        pytest.skip(f"{package} is not installed (the webshop extra is optional)")
    assert installed == _pins()[package]
