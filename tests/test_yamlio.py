"""The strict YAML loader: duplicate keys refused with both places; errors point
at where the problem starts; every loader of the project uses it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from lorekit import yamlio
from lorekit.config import ConfigError, load_config

ROOT = Path(__file__).resolve().parents[1]


def test_duplicate_keys_are_refused_with_both_lines(tmp_path: Path) -> None:
    path = tmp_path / "d.yaml"
    path.write_text("a: 1\nb:\n  c: 1\n  d: 2\n  c: 3\n")
    with path.open() as fh, pytest.raises(yamlio.DuplicateKeyError) as err:
        yamlio.safe_load(fh)
    message = yamlio.describe_error(err.value, str(path))
    assert message.startswith(f"{path}:5:3: duplicate key 'c'")
    assert "first defined at line 3" in message
    assert isinstance(err.value, yaml.YAMLError)  # callers' handlers catch it


def test_plain_yaml_and_merge_keys_still_load() -> None:
    text = "base: &b {x: 1, y: 2}\nd:\n  <<: *b\n  x: 3\nlist: [1, 2]\n"
    assert yamlio.safe_load(text) == {
        "base": {"x": 1, "y": 2},
        "d": {"x": 3, "y": 2},
        "list": [1, 2],
    }
    assert yamlio.safe_load("") is None


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('a:\n  b: "unclosed\n  c: 2\nd: 4\n\n\n', ":2:6:"),  # reported where the quote opens
        ("a: 1\nb: [1\nc: 2\n", ":3:2:"),
        ("a: 1\n b: 2\n", ":2:3:"),
    ],
)
def test_syntax_errors_point_at_the_problem_not_the_end(text: str, where: str) -> None:
    with pytest.raises(yaml.YAMLError) as err:
        yamlio.safe_load(text)
    message = yamlio.describe_error(err.value, "f.yaml")
    assert message.startswith("f.yaml" + where), message


def test_config_rejects_duplicate_keys(tmp_path: Path) -> None:
    path = tmp_path / "run.yaml"
    path.write_text("roles:\n  default: {provider: scripted, model: a}\n  default: {model: b}\n")
    with pytest.raises(ConfigError, match=r"run.yaml:3:\d+: .*duplicate key 'default'"):
        load_config(path)


def test_no_module_loads_yaml_without_the_strict_loader() -> None:
    offenders = []
    for path in (ROOT / "lorekit").rglob("*.py"):
        if path.name == "yamlio.py":
            continue
        if re.search(r"yaml\.(safe_load|load|full_load|unsafe_load)\(", path.read_text()):
            offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []


def test_shipped_yaml_files_have_no_duplicate_keys() -> None:
    files = [*(ROOT / "lorekit").rglob("*.yaml"), *(ROOT / "examples").rglob("*.yaml")]
    assert files
    for path in files:
        with path.open(encoding="utf-8") as fh:
            yamlio.safe_load(fh)  # raises on a duplicate
