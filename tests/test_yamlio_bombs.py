"""YAML alias bombs: a few hundred bytes of nested aliases stand for hundreds of
millions of nodes. The one loader refuses a document whose aliases add more
than ``MAX_ALIAS_NODES`` nodes (naming the file), or one that contains itself;
ordinary files and modest anchors still load. No YAML file shipped in the
repository uses anchors, so the cap only ever meets hand-written configs."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml

from lorekit import yamlio
from lorekit.config import ConfigError, load_config

ROOT = Path(__file__).resolve().parents[1]


def bomb(levels: int) -> str:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def test_the_billion_laughs_is_refused_at_once() -> None:
    text = bomb(9)  # 9**9 nodes from about 400 bytes
    start = time.perf_counter()
    with pytest.raises(yamlio.AliasExpansionError) as err:
        yamlio.safe_load(text, source="bomb.yaml")
    assert time.perf_counter() - start < 2.0
    assert isinstance(err.value, yaml.YAMLError)  # every caller's handler catches it
    message = yamlio.describe_error(err.value, "bomb.yaml")
    assert message.startswith("bomb.yaml:") and "aliases expand" in message


def test_a_bomb_passed_as_config_is_a_config_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "run.yaml"
    path.write_text(bomb(7))  # 9**7 = 4.8 million nodes
    with pytest.raises(ConfigError, match=r"run\.yaml:\d+:\d+: .*aliases expand"):
        load_config(path)


def test_a_document_that_contains_itself_is_refused() -> None:
    with pytest.raises(yamlio.AliasExpansionError, match="contains it"):
        yamlio.safe_load("a: &a [1, *a]\n")


def test_the_cap_counts_only_what_aliases_add(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yamlio, "MAX_ALIAS_NODES", 50)
    plain = "\n".join(f"k{i}: [{i}, {i}, {i}]" for i in range(200))  # 1,000 nodes, no alias
    assert len(yamlio.safe_load(plain)) == 200
    aliased = "a: &a [1, 2, 3, 4, 5, 6, 7, 8, 9]\nb: [" + ", ".join(["*a"] * 6) + "]\n"
    with pytest.raises(yamlio.AliasExpansionError, match="by 60 nodes"):
        yamlio.safe_load(aliased)
    # at the real cap, modest anchors, merge keys and every YAML file of the repository load
    monkeypatch.undo()
    assert yamlio.safe_load(bomb(4))["a3"][0][0][0][0] == "lol"  # 9**4 = 6,561 nodes
    text = "base: &b {x: 1, y: 2}\nd:\n  <<: *b\n  x: 3\n"
    assert yamlio.safe_load(text) == {"base": {"x": 1, "y": 2}, "d": {"x": 3, "y": 2}}
    files = [p for p in ROOT.glob("**/*.y*ml") if ".venv" not in p.parts and ".git" not in p.parts]
    assert files
    for path in files:
        try:
            yamlio.safe_load(path.read_text(encoding="utf-8"), source=str(path))
        except yamlio.AliasExpansionError as err:  # pragma: no cover - the failure message
            pytest.fail(f"{path}: {err}")
        except yaml.YAMLError:
            continue  # a deliberately broken fixture
