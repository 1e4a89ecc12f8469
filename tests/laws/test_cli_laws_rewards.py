"""``lorekit laws rewards`` (the command on its own; lawsym's group attaches it)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from test_rewarder import RIGHT
from test_rewards import STONE

from lorekit.cli_laws_rewards import rewards_cmd
from lorekit.laws.records import write_records
from lorekit.laws.rewards import PredicateSet
from lorekit.llm.testing import OpenAICompatServer


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
             "--model", "test-model", "--base-url", srv.base_url, "--cache", "off"],
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
        (["oracle", "--model", "m", "--out", out], "pass --records FILE"),
    ]
    for args, message in cases:
        result = CliRunner().invoke(rewards_cmd, args)
        assert result.exit_code == 2 and message in result.output, result.output
