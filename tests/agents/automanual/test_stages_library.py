"""AutoManual's stages as library calls, and how the core reaches them: the
formulating stage (:func:`formulate_build`), the plugin's tables in the run
store (removed with their build), and its build maker for ``lorekit reproduce``."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from lorekit.agents.automanual.formulate import formulate_build, world_text
from lorekit.agents.automanual.formulator import FormulatorError
from lorekit.agents.automanual.manuals import latest_manual, manual_versions
from lorekit.agents.automanual.rules import RuleSystem
from lorekit.agents.automanual.store import open_db
from lorekit.agents.automanual.testing import formulator_model
from lorekit.eval.reproduce import build_makers
from lorekit.eval.store import RunStore
from lorekit.llm import ScriptedLLM
from lorekit.llm.roles import Roles
from lorekit.registry import REGISTRY, StoreTables


def _build_with_rules(path: Path, build: str, rules: int) -> None:
    with RunStore(path) as store:
        store.create_run(build, env="alfworld", agent="automanual-build:automanual", config={})
    db = open_db(path)
    try:
        system = RuleSystem(db, build)
        system.begin(None, succeeded=None, actor="seed")
        for i in range(rules):
            system.write_rule(
                f"pick_heat_then_place_in_recep: heat the object, step {i}.", "Success Process"
            )
        skill = "(?, 1, NULL, 'skill', 'heat', 'g', 'c', '{}', 0)"
        db.execute(f"INSERT INTO automanual_library VALUES {skill}", (build,))
    finally:
        db.close()


def _roles(calls: list[int]) -> Roles:
    answer = formulator_model()

    def counted(messages: tuple[object, ...]) -> str:
        calls.append(1)
        return answer(messages)  # type: ignore[arg-type]

    return Roles({"formulator": ScriptedLLM(fn=counted, model="scripted-formulator")})


def test_formulating_saves_a_manual_and_records_the_calls_on_the_build(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    _build_with_rules(path, "b", rules=2)
    calls: list[int] = []
    done = asyncio.run(formulate_build(path, "b", _roles(calls)))
    assert done is not None and (done.version, done.rules) == (1, 2)
    assert "rule_0" in done.manual.markdown and "rule_1" in done.manual.markdown
    db = open_db(path)
    try:
        assert latest_manual(db, "b") == done.manual
    finally:
        db.close()
    with RunStore(path) as store:  # run-level calls of the build, as `runs show` counts them
        assert len(store.llm_calls("b")) == len(calls) >= 1


def test_keep_existing_asks_no_model_once_a_manual_is_saved(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    _build_with_rules(path, "b", rules=1)
    asyncio.run(formulate_build(path, "b", _roles([])))
    calls: list[int] = []
    assert asyncio.run(formulate_build(path, "b", _roles(calls), keep_existing=True)) is None
    assert calls == []
    again = asyncio.run(formulate_build(path, "b", _roles(calls)))  # a new version otherwise
    assert again is not None and again.version == 2 and calls


def test_a_build_without_rules_builds_no_models(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    _build_with_rules(path, "b", rules=0)

    def never() -> Roles:
        raise AssertionError("models were built for a build with nothing to formulate")

    assert asyncio.run(formulate_build(path, "b", never)) is None


def test_an_unusable_manual_is_a_formulator_error(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    _build_with_rules(path, "b", rules=1)
    roles = Roles({"formulator": ScriptedLLM(["no manual here"] * 10, model="bad")})
    with pytest.raises(FormulatorError):
        asyncio.run(formulate_build(path, "b", roles))
    db = open_db(path)
    try:
        assert manual_versions(db, "b") == []
    finally:
        db.close()


def test_the_world_text_names_the_env_profile() -> None:
    assert world_text("alfworld").startswith("ALFWorld") and "agent." in world_text("alfworld")
    assert world_text("no-such-env") == ""


def test_removing_a_build_removes_its_rules_libraries_and_manuals(tmp_path: Path) -> None:
    """The store finds AutoManual's rows through the plugin's ``tables`` registration."""
    assert REGISTRY.load("tables", "automanual_") == StoreTables("automanual_", "build_id")
    path = tmp_path / "runs.sqlite3"
    for build in ("gone", "kept"):
        _build_with_rules(path, build, rules=1)
        asyncio.run(formulate_build(path, build, _roles([])))
    with RunStore(path) as store:
        removed = store.delete_run("gone")
    assert removed["automanual_rule_events"] == 1 and removed["automanual_library"] == 1
    assert removed["automanual_manuals"] == 1
    with sqlite3.connect(path) as conn:
        for table in ("automanual_rule_events", "automanual_library", "automanual_manuals"):
            rows = conn.execute(f"SELECT DISTINCT build_id FROM {table}").fetchall()
            assert rows == [("kept",)], table
        assert conn.execute("SELECT count(*) FROM automanual_schema").fetchone()[0] == 1
    conn.close()


def test_reproduce_reaches_the_build_through_the_agent_registration() -> None:
    makers = build_makers()
    assert makers["automanual"].name == makers["planner-lib"].name == "automanual"
    from lorekit.agents.automanual.commands.reproduce import reproduce_build

    assert makers["automanual"].meta["build"] == (
        f"{reproduce_build.__module__}:{reproduce_build.__qualname__}"
    )
