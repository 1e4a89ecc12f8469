"""``lorekit laws rewards`` (the command on its own; the ``laws`` group attaches it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from click.testing import CliRunner

from lorekit.laws.commands.rewards import rewards_cmd
from lorekit.laws.records import LawRecord, write_records
from lorekit.laws.rewards import PredicateSet
from lorekit.llm.testing import OpenAICompatServer


def record(achievement: str, success: bool, inventory: dict[str, int], face: str) -> LawRecord:
    """A paper-format record whose state is the same before and after."""
    state: dict[str, Any] = {
        "attributes": {"health": 9, "food": 9, "drink": 9, "energy": 9},
        "tools": {k: v for k, v in inventory.items() if "_" in k},
        "materials": {k: v for k, v in inventory.items() if "_" not in k},
        "face": face,
        "nearby": [["grass"] * 3, ["grass", "player", face], ["grass"] * 3],
    }
    return LawRecord(achievement, achievement, success, state, state)


STONE = [
    record("collect_stone", True, {"wood_pickaxe": 1}, "stone"),
    record("collect_stone", True, {"wood_pickaxe": 2}, "stone"),
    record("collect_stone", False, {}, "stone"),
    record("collect_stone", False, {"wood_pickaxe": 1}, "grass"),
    record("collect_wood", True, {}, "tree"),  # another achievement: ignored
]
RIGHT = """Here it is:
```python
def valid(state, target):
    return target == "stone" and state.inventory.get("wood_pickaxe", 0) >= 1
```
"""


def test_from_laws_writes_a_checked_set(tmp_path: Path) -> None:
    records = tmp_path / "records.jsonl"
    write_records(STONE, records)
    out = tmp_path / "sets" / "oracle.json"
    result = CliRunner().invoke(
        rewards_cmd, ["oracle", "--from-laws", "--records", str(records), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    pset = PredicateSet.load(out)
    assert len(pset.entries) == 22 and pset.entries["collect_stone"].accuracy == 1.0
    assert "saved 22 predicates" in result.output and "100%" in result.output


def test_model_writes_predicates_through_an_openai_server(tmp_path: Path) -> None:
    records = tmp_path / "records.jsonl"
    write_records(STONE, records)
    out = tmp_path / "llm.json"
    with OpenAICompatServer([RIGHT]) as srv:
        result = CliRunner().invoke(
            rewards_cmd,
            ["oracle", "--only", "collect_stone", "--records", str(records), "--out", str(out),
             "--model", "test-model", "--base-url", srv.base_url, "--cache", "off",
             "--loop", "checked"],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
    entry = PredicateSet.load(out).entries["collect_stone"]
    assert entry.origin == "llm:test-model" and entry.accuracy == 1.0


def test_mistakes_are_one_line_errors(tmp_path: Path) -> None:
    out = str(tmp_path / "x.json")
    cases = [
        (["oracle", "--out", out], "needs a model"),
        (["oracle", "--only", "fly", "--out", out], "no law for fly"),
        ([str(tmp_path / "none.json"), "--out", out], "cannot read experience"),
        (["oracle", "--model", "m", "--out", out, "--loop", "checked"], "pass --records FILE"),
    ]
    for args, message in cases:
        result = CliRunner().invoke(rewards_cmd, args)
        assert result.exit_code == 2 and message in result.output, result.output
