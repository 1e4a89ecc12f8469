"""The AutoManual authors' published runs: read, checked field by field, imported as a
build, and tested with as the authors' testing stage does (issue 40).

Runs in the authors' format written here are our own small examples; the real
published files are read from the project's shared data (never copied) and the
tests that need them skip where it is absent.
"""

from __future__ import annotations

import ast
import json
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from _cli import run_cli
from _published_data import needs_published, published

from lorekit.agents.automanual.agent import AutoManualAgent
from lorekit.agents.automanual.core import RuleType
from lorekit.agents.automanual.libraries import Libraries
from lorekit.agents.automanual.planner import helper_examples
from lorekit.agents.automanual.planner_parse import defined_functions
from lorekit.agents.automanual.published import (
    URL_ENV_VAR,
    PublishedError,
    data_home,
    fetch_published,
    manifest,
    read_published,
    run_files,
)
from lorekit.agents.automanual.published_import import import_build, in_memory
from lorekit.agents.automanual.retrieval import make_retriever
from lorekit.agents.automanual.rules import RuleSystem
from lorekit.agents.automanual.store import open_db
from lorekit.eval.store import RunStore

MANUAL = "# A manual\n\n## Finding things\n\nOpen closed drawers first.\n"
HELPER = "def look_in(agent, place):\n    return agent.go_to(place)\n"


def rule_manager(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "all_rules": {
            "rule_0": {
                "rule": "Closed drawers hide what is inside.",
                "type": "Special Phenomena/Mechanism",
                "example": "",
                "validation_record": "Given. | Seen again in epoch_2.",
            },
            "rule_1": {
                "rule": "Use look_in to search.",
                "type": "Success Process",
                "example": HELPER,
                "validation_record": "From epoch_1.",
            },
        },
        "cur_epoch": 3,
        "manual": MANUAL,
    }
    data.update(changes)
    return data


def skill_bank(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "put_mug": {
            "task_name": "put a mug in drawer.",
            "init_obs": "You are in a room with drawer_1.",
            "skill_code": "look_in(agent, 'drawer_1')",
            "success": 1,
        },
        "heat_egg": {
            "task_name": "heat an egg.",
            "init_obs": "You are in a kitchen.",
            "skill_code": "The egg was never found: search the fridge first.",
            "success": -1,
        },
    }
    data.update(changes)
    return data


def write_run(folder: Path, rules: Any = None, skills: Any = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in (("rule_manager.json", rules), ("skill_bank.json", skills)):
        if data is not None:
            text = data if isinstance(data, str) else json.dumps(data)
            (folder / name).write_text(text, encoding="utf-8")
    return folder


def test_a_run_in_the_authors_format_is_read_field_by_field(tmp_path: Path) -> None:
    run = read_published(*run_files(write_run(tmp_path, rule_manager(), skill_bank())))
    assert [r.rule_id for r in run.rules] == ["rule_0", "rule_1"]
    assert run.rules[0].type is RuleType.SPECIAL_MECHANISM
    assert run.rules[0].logs == ["Given.", "Seen again in epoch_2."]
    assert run.manual == MANUAL and run.env is None  # not one of the published runs
    assert [s.task_type for s in run.skills] == ["put_mug"] and run.skills[0].success == 1
    assert [r.task_type for r in run.reflections] == ["heat_egg"]
    assert run.describe().startswith("a run in AutoManual's format")


@pytest.mark.parametrize(
    ("rules", "skills", "message"),
    [
        ("{not json", skill_bank(), "rule_manager.json: not JSON (line 1"),
        (["a", "list"], skill_bank(), "rule_manager.json: the file: expected a JSON object"),
        ({"manual": MANUAL}, skill_bank(), "rule_manager.json: all_rules: expected a JSON object"),
        (
            rule_manager(all_rules={"first": {"rule": "x", "type": "Success Process"}}),
            skill_bank(),
            "rule_manager.json: all_rules.first: expected an id like rule_0",
        ),
        (
            rule_manager(all_rules={"rule_0": {"rule": "x", "type": "Magic"}}),
            skill_bank(),
            "rule_manager.json: all_rules.rule_0.type: unknown rule type 'Magic'",
        ),
        (
            rule_manager(all_rules={"rule_0": {"rule": 3, "type": "Success Process"}}),
            skill_bank(),
            "rule_manager.json: all_rules.rule_0.rule: expected text, got 3",
        ),
        (rule_manager(manual=""), skill_bank(), "rule_manager.json: manual: expected the"),
        (rule_manager(cur_epoch="3"), skill_bank(), "rule_manager.json: cur_epoch: expected a"),
        (rule_manager(), [1], "skill_bank.json: the file: expected a JSON object, got a list"),
        (
            rule_manager(),
            skill_bank(put_mug={"task_name": "t", "skill_code": "x", "success": 2}),
            "skill_bank.json: put_mug.success: expected 1 (direct success), 0",
        ),
        (
            rule_manager(),
            skill_bank(put_mug={"task_name": "t", "success": 1}),
            "skill_bank.json: put_mug.skill_code: expected text, got nothing (missing)",
        ),
        (rule_manager(), None, "skill_bank.json: no such file"),
    ],
)
def test_a_malformed_file_is_refused_in_one_line_naming_file_and_field(
    tmp_path: Path, rules: Any, skills: Any, message: str
) -> None:
    folder = write_run(tmp_path, rules, skills)
    with pytest.raises(PublishedError) as caught:
        read_published(*run_files(folder))
    text = str(caught.value)
    assert "\n" not in text and message in text and text.startswith(str(tmp_path))
    # the testing stage refuses it the same way (it was once taken as a raw-text manual)
    with pytest.raises(ValueError, match="json"):
        AutoManualAgent(str(folder / "rule_manager.json"))


def test_the_testing_stage_reads_a_rule_manager_as_a_run_not_as_text(tmp_path: Path) -> None:
    folder = write_run(tmp_path, rule_manager(), skill_bank())
    for given in (folder / "rule_manager.json", folder):  # the file, or its folder
        agent = AutoManualAgent(str(given))
        assert agent.manual_text == MANUAL and '"all_rules"' not in agent.manual_text
        assert agent.source.startswith("a run in AutoManual's format")
        assert agent.libraries is not None and sorted(agent.libraries.skills()) == ["put_mug"]
        assert sorted(agent.libraries.reflections()) == ["heat_egg"]
        # every rule example's functions are defined first, whatever the rule's type
        assert [list(defined_functions(h)) for h in agent.helpers] == [["look_in"]]


def test_a_run_without_a_manual_is_tested_with_its_rules(tmp_path: Path) -> None:
    data = rule_manager()
    del data["manual"]
    agent = AutoManualAgent(str(write_run(tmp_path, data, skill_bank()) / "rule_manager.json"))
    assert "Closed drawers hide what is inside." in agent.manual_text
    assert "it has no manual" in agent.source


def test_an_imported_run_is_a_build_the_commands_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = write_run(tmp_path / "run", rule_manager(), skill_bank())
    store = tmp_path / "s.sqlite3"
    args = ["automanual", "import-published", "--env", "alfworld", "--from", str(folder)]
    code, _out, err = run_cli([*args, "--store", str(store)], capsys)
    assert code == 2 and "not the authors' published alfworld run" in err
    assert "--unverified" in err and err.count("\n") == 1
    code, out, err = run_cli([*args, "--store", str(store), "--unverified"], capsys)
    assert code == 0, err
    assert "imported: a run in AutoManual's format" in out and "as build published-alfworld" in out
    assert "--agent-opt manual=published-alfworld" in out
    code, out, err = run_cli([*args, "--store", str(store), "--unverified"], capsys)
    assert code == 0 and "already imported" in out  # the same files again: nothing changes
    with RunStore(store) as runs:
        info = runs.get_run("published-alfworld")
        assert info is not None and info.agent == "automanual-build:published"
        assert info.status == "finished" and runs.episodes("published-alfworld") == []
        held = info.config["automanual"]["published"]
    assert (
        held["sha256"]["rule_manager.json"]
        == read_published(*run_files(folder)).digests["rule_manager.json"]
    )
    code, out, err = run_cli(
        ["automanual", "rules", "published-alfworld", "--store", str(store)], capsys
    )
    assert code == 0 and "2 rules at version 2" in out and "Use look_in to search." in out
    code, out, _ = run_cli(["manual", "export", "published-alfworld", "-o", "-", "--store",
                            str(store)], capsys)  # fmt: skip
    assert code == 0 and out.strip() == MANUAL.strip()
    agent = AutoManualAgent("published-alfworld", store=str(store))
    assert agent.manual_text == MANUAL and "a run in AutoManual's format" in agent.source
    # another run under the same id is refused, not mixed in
    other = write_run(tmp_path / "other", rule_manager(manual="# Else\n"), skill_bank())
    again = ["automanual", "import-published", "--env", "alfworld", "--from", str(other)]
    code, _, err = run_cli([*again, "--store", str(store), "--unverified"], capsys)
    assert code == 2 and "with other contents; choose another --run-id" in err


@needs_published
@pytest.mark.parametrize(
    ("env", "rules", "skills", "chars"), [("alfworld", 10, 6, 6_719), ("miniwob", 13, 9, 14_050)]
)
def test_the_published_runs_are_recognised_by_their_digests(
    env: str, rules: int, skills: int, chars: int
) -> None:
    run = read_published(*run_files(published(env)))
    assert run.env == env and len(run.rules) == rules and len(run.skills) == skills
    assert run.manual is not None and len(run.manual) == chars and not run.reflections
    spec = manifest()
    assert run.digests == spec["runs"][env]["files"]
    assert f"minghchen/automanual@{spec['commit'][:7]}, gpt-4-1106-preview" in run.describe()


def _authors_pick(code: str) -> list[str]:
    """The functions the authors' code defines from a piece of code, as their testing
    stage chooses them (restated here as a rule, to check ours against): none if the
    code does not parse; else every function definition anywhere in it, except one
    whose body is a single ``pass`` or expression."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    return [
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef)
        and not (len(node.body) == 1 and isinstance(node.body[0], ast.Pass | ast.Expr))
    ]


@needs_published
@pytest.mark.parametrize("env", ["alfworld", "miniwob"])
def test_the_published_functions_are_the_ones_the_authors_code_defines(env: str) -> None:
    """ALFWorld's rule examples are fenced, so they define nothing (its find_object comes
    from the profile's helpers); MiniWoB++'s define turn_to_next_page, click_cell,
    forward_email (a Success Process rule's) and clear_input_field."""
    run = read_published(*run_files(published(env)))
    pieces = [*helper_examples(run.rules), *(s.text for s in run.skills)]
    assert [list(defined_functions(p)) for p in pieces] == [_authors_pick(p) for p in pieces]
    names = {n for p in helper_examples(run.rules) for n in defined_functions(p)}
    want = set() if env == "alfworld" else {
        "turn_to_next_page", "click_cell", "forward_email", "clear_input_field",
    }  # fmt: skip
    assert names == want


@needs_published
def test_type_retrieval_picks_the_same_skills_as_bm25_where_every_type_has_one() -> None:
    """On the published libraries: every ALFWorld type and every MiniWoB++ type with
    feedback has its own skill, so the authors' rule (the type's own) and BM25 agree;
    for a type without one, the exact-type rule shows none."""
    for env, types in (
        ("alfworld", ["pick_and_place_simple", "look_at_obj_in_light", "pick_two_obj_and_place"]),
        ("miniwob", ["search-engine", "guess-number", "email-inbox-nl-turk"]),
    ):
        run = read_published(*run_files(published(env)))
        db = in_memory(run)
        picked = {}
        for spec in ("bm25", "type"):
            lib = Libraries(db, "published", retriever=make_retriever(spec), readonly=True)
            picked[spec] = [[r.task_type for r in lib.retrieve_all(t, "a task")] for t in types]
            picked[spec + "-unknown"] = [
                r.task_type for r in lib.retrieve_all("click-pie", "click the pie")
            ]
        assert picked["bm25"] == picked["type"] == [[t] for t in types]
        assert picked["type-unknown"] == []


@needs_published
def test_import_refuses_the_other_envs_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["automanual", "import-published", "--env", "miniwob"]
    code, _, err = run_cli([*args, "--from", str(published("alfworld")),
                            "--store", str(tmp_path / "s.sqlite3")], capsys)  # fmt: skip
    assert code == 2 and "these are the authors' published alfworld files, not miniwob's" in err


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A local web server over a folder, named as the repository's address; LoreKit's
    data folder in tmp."""
    root = tmp_path / "www"
    root.mkdir()
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv(URL_ENV_VAR, f"http://127.0.0.1:{server.server_address[1]}")
    monkeypatch.setenv("LOREKIT_DATA", str(tmp_path / "data"))
    try:
        yield root
    finally:
        server.shutdown()
        server.server_close()


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


def test_a_fetched_file_that_is_not_the_published_one_is_not_kept(served: Path) -> None:
    folder = served / manifest()["runs"]["alfworld"]["folder"]
    write_run(folder, rule_manager(), skill_bank())
    with pytest.raises(PublishedError, match=r"rule_manager.json: sha256 \w+ is not the recorded"):
        fetch_published("alfworld")
    assert not data_home("alfworld").exists()


@needs_published
def test_the_published_files_are_fetched_checked_and_imported(served: Path, tmp_path: Path) -> None:
    folder = served / manifest()["runs"]["miniwob"]["folder"]
    folder.mkdir(parents=True)
    for name in ("rule_manager.json", "skill_bank.json"):
        (folder / name).write_bytes((published("miniwob") / name).read_bytes())
    home = fetch_published("miniwob")
    assert home == data_home("miniwob") and (home / "skill_bank.json").is_file()
    run = read_published(*run_files(home))
    done = import_build(tmp_path / "s.sqlite3", "pub", run, env="miniwob")
    assert (done.rules, done.skills, done.manual) == (13, 9, True)
    db = open_db(tmp_path / "s.sqlite3")
    try:
        assert [r.rule_id for r in RuleSystem(db, "pub").rules()][-1] == "rule_12"
    finally:
        db.close()
