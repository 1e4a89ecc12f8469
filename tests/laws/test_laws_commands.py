"""The laws' command group lives in the laws package, and the pieces of library
its commands call (reading records to learn from, naming an experience, cutting
one down, the training summary) work on their own."""

from __future__ import annotations

from pathlib import Path

import click
import pytest

import lorekit.envs.crafter
from lorekit.cli import cli
from lorekit.cli.errors import run_cli
from lorekit.laws.experience import Experience, ExperienceError, experience_named, oracle_experience
from lorekit.laws.extract_progress import progress_path
from lorekit.laws.record_format import (
    LawRecord,
    NoRecords,
    RecordError,
    read_nonempty_records,
    write_records,
)
from lorekit.laws.rl_eval import result_text
from lorekit.registry import REGISTRY

COMMANDS = {"collect", "learn", "score", "extract", "rewards", "scores", "train"}


def test_the_laws_group_is_the_laws_packages_own_with_all_seven_commands() -> None:
    entry = REGISTRY.get("command", "laws")
    assert entry.target_name.startswith("lorekit.laws.commands.")
    assert entry.origin.endswith(":laws")  # registered by the laws' plugin, as a plugin is
    group = entry.load()
    assert isinstance(group, click.Group)
    assert set(group.commands) == COMMANDS
    for name, command in group.commands.items():
        assert command.callback is not None, name
        assert command.callback.__module__.startswith("lorekit.laws.commands."), name


def test_the_env_package_no_longer_offers_the_laws_records() -> None:
    laws_only = {"Collection", "Explorer", "Record", "collect", "read_jsonl", "structured_state",
                 "write_jsonl"}  # fmt: skip
    assert not laws_only & set(lorekit.envs.crafter.__all__)
    assert not [n for n in laws_only if hasattr(lorekit.envs.crafter, n)]


def _record(success: bool) -> LawRecord:
    state = {
        "attributes": {"health": 9, "food": 9, "drink": 9, "energy": 9},
        "tools": {},
        "materials": {},
        "face": "tree",
        "nearby": [["grass"] * 3, ["grass", "player", "grass"], ["grass"] * 3],
    }
    after = {**state, "materials": {"wood": 1}} if success else state
    return LawRecord("collect_wood", "collect_wood", success, state, after)


def test_records_to_learn_from_refuse_an_empty_file_naming_it(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n", encoding="utf-8")
    with pytest.raises(NoRecords, match=r"empty\.jsonl: no records in the file") as caught:
        read_nonempty_records(empty)
    assert isinstance(caught.value, RecordError)  # callers that catch RecordError still do
    assert "lorekit laws collect -o FILE" in str(caught.value)
    full = tmp_path / "two.jsonl"
    write_records([_record(True), _record(False)], full)
    assert [r.success for r in read_nonempty_records(full)] == [True, False]
    with pytest.raises(RecordError, match="no such records file"):
        read_nonempty_records(tmp_path / "missing.jsonl")


def test_an_experience_is_named_by_oracle_or_by_its_file(tmp_path: Path) -> None:
    assert experience_named("oracle") == oracle_experience()
    saved = tmp_path / "e.json"
    oracle = oracle_experience()
    oracle.meta["note"] = "saved"
    oracle.save(saved)
    assert experience_named(str(saved)).meta == {"from": "CrafterRules", "note": "saved"}
    with pytest.raises(ExperienceError, match="no such experience file"):
        experience_named(str(tmp_path / "oracle.json"))


def test_only_keeps_the_named_laws_in_the_order_asked() -> None:
    oracle = oracle_experience()
    cut = oracle.only(["place_table", "collect_wood"])
    assert list(cut.laws) == ["place_table", "collect_wood"]
    assert cut.laws["place_table"] == oracle.laws["place_table"]
    assert cut.source == oracle.source and cut.meta == oracle.meta
    cut.meta["changed"] = True
    assert "changed" not in oracle.meta  # the cut does not share the original's meta
    assert isinstance(cut, Experience) and len(oracle.laws) == 22
    with pytest.raises(KeyError):
        oracle.only(["fly"])


def test_progress_sits_beside_the_output() -> None:
    assert progress_path("out/exp.json") == Path("out/exp.json.progress.json")


def _result(**over: object) -> dict[str, object]:
    result: dict[str, object] = {
        "reward": "laws",
        "score_mean": 4.681,
        "score_se": 0.25,
        "seeds": [0, 1],
        "success_rates": {"collect_wood": 90.0, "place_table": 40.0, "eat_cow": 0.0},
        "run_id": "r1",
        "store": "runs/s.sqlite3",
        "out": "runs/laws-rl/laws",
    }
    return {**result, **over}


def test_the_training_summary_says_score_best_achievements_and_where() -> None:
    lines = result_text(_result()).splitlines()
    assert lines == [
        "reward laws: crafter score 4.68% ± 0.25 over seeds [0, 1]",
        "top achievements: collect_wood 90%, place_table 40%",
        "run r1 in runs/s.sqlite3; files in runs/laws-rl/laws",
    ]
    one_seed = result_text(_result(score_se=None, success_rates={"eat_cow": 0.0}))
    assert one_seed.splitlines()[:2] == [
        "reward laws: crafter score 4.68% over seeds [0, 1]",
        "top achievements: none",
    ]
    many = {f"a{i}": float(i) for i in range(1, 10)}
    assert result_text(_result(success_rates=many)).splitlines()[1] == (
        "top achievements: a9 9%, a8 8%, a7 7%, a6 6%, a5 5%, a4 4%"
    )


@pytest.mark.parametrize(
    ("args", "role", "hint"),
    [
        (["extract", "{records}", "-o", "{out}", "--model", "scripted:simulate"], "extractor",
         "--simulate careful"),
        (["extract", "{records}", "-o", "{out}", "--model", "m", "--role",
          "extractor=scripted:simulate"], "extractor", "--simulate careful"),
        (["rewards", "oracle", "-o", "{out}", "--model", "scripted:simulate"], "rewarder",
         "--from-laws"),
    ],
)  # fmt: skip
def test_scripted_simulate_is_refused_in_one_line_where_the_laws_have_none(
    args: list[str],
    role: str,
    hint: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``lorekit run`` reads scripted:simulate as an agent's registered test models; the
    laws' model commands have none under that name, and must not answer with a
    scripted backend that says nothing (no laws, predicates that all fall back)."""
    records, out = tmp_path / "r.jsonl", tmp_path / "out.json"
    write_records([_record(True), _record(False)], records)
    argv = ["laws", *(a.format(records=records, out=out) for a in args), "--cache", "off"]
    with pytest.raises(SystemExit) as ended:
        run_cli(cli, argv)
    err = capsys.readouterr().err
    assert ended.value.code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and f"scripted:simulate for the {role} role" in lines[0]
    assert hint in lines[0]
    assert not out.exists()
