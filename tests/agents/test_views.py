"""Agents' views: every registered view loads and ships its report script, ``lorekit show``
and the HTML report draw notes only through them, and a new view needs one line to join."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from lorekit.agents.views import (
    NotesView,
    load_view,
    load_views,
    register_view,
    report_script_text,
    view_goal,
    view_header,
)
from lorekit.eval.report_html import build_report, page_script
from lorekit.eval.report_html_data import episode_data
from lorekit.eval.show import render_episode
from lorekit.eval.store import RunStore
from lorekit.registry import REGISTRY, Registry

DATA = re.compile(r'<script type="application/json" id="report-data">(.*?)</script>', re.S)
#: What no report script may use: each would let model output become code or markup.
UNSAFE = ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "Function(")

TOY = """
from rich.markup import escape


class ToyView:
    name = "toy"
    report_script = "toyview:toy_view.js"

    def claims(self, notes):
        return isinstance(notes.get("toy"), dict)

    def goal(self, notes):
        return notes["toy"].get("goal")

    def header(self, notes):
        return f"toy header: {escape(str(notes['toy'].get('mood')))}"

    def show(self, notes, console):
        console.print(f"toy says {escape(str(notes['toy'].get('said')))}")


VIEW = ToyView()
"""
TOY_JS = (
    "LoreKitReport.registerView('toy', (notes, ui) => "
    "[ui.el('p', { id: 'toy-view' }, String(notes.toy.said))]);\n"
)


def test_every_registered_view_loads_and_ships_its_script() -> None:
    loaded = load_views()
    assert [v.name for v in loaded] == ["adapt", "automanual", "graph-pass", "teams"]
    entries = REGISTRY.entries("view")
    assert sorted(e.name for e in entries) == sorted(v.name for v in loaded)
    for spec, view in ((e.target_name, e.load()) for e in entries):
        assert isinstance(view, NotesView), spec
        script = report_script_text(view)
        assert f'registerView("{view.name}"' in script, spec  # registers under its own name
        for word in UNSAFE:
            assert word not in script, (spec, word)
        assert view.claims({}) is False, spec  # empty notes are nobody's
        assert view_goal(view, {}) is None and view_header(view, {}) is None
    generic = page_script().split(report_script_text(loaded[0]))[0]
    assert "registerView" in generic and not any(w in generic for w in UNSAFE)


def test_a_bad_entry_is_refused(registry: Registry) -> None:
    with pytest.raises(TypeError, match="is not a NotesView"):
        load_view("lorekit.agents.views:mark")
    registry.add_view("nothing", "lorekit.agents.views:nothing_here")
    with pytest.raises(AttributeError):
        load_views()


def test_each_view_claims_what_its_agent_leaves() -> None:
    by_name = {v.name: v for v in load_views()}
    cases: dict[str, list[dict[str, Any]]] = {
        "adapt": [{"tree": {"task": "t"}}, {"trials": [{"trial": 1}]}, {"method": "adapt"}],
        "automanual": [{"automanual": {}}, {"build": {}}, {"manual": "m.yaml"}],
        "graph-pass": [
            {"spring": {}},
            {"agentkit": {"steps": []}},
            {"x": {"steps": [{"nodes": [{"key": "a", "status": "ok"}]}]}},
        ],
        "teams": [{"team": {}}, {"x": {"events": [{"agent": "a", "kind": "plan", "tick": 0}]}}],
    }
    for name, claimed in cases.items():
        for notes in claimed:
            owners = [n for n, v in by_name.items() if v.claims(notes)]
            assert owners == [name], notes
    # a pass under "tree" is ADaPT's tree, not a graph pass; a list with a non-event is no timeline
    assert not by_name["graph-pass"].claims({"y": {"tree": {"nodes": [{"key": 1, "status": 2}]}}})
    assert not by_name["teams"].claims({"x": [{"agent": "a", "kind": "k", "time": 0}, {}]})


@pytest.fixture
def toy_view(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, registry: Registry) -> None:
    """A view from a package of its own, registered with one line at run time."""
    package = tmp_path / "toyview"
    package.mkdir()
    (package / "__init__.py").write_text(textwrap.dedent(TOY), encoding="utf-8")
    (package / "toy_view.js").write_text(TOY_JS, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    register_view("toyview:VIEW", "toy")


def _store(path: Path) -> RunStore:
    store = RunStore(path)
    rid = store.create_run("toy", env="textcraft", agent="toy", config={})
    for i, notes in enumerate(
        [{"toy": {"said": "hello", "goal": "pet the cat", "mood": "glad"}}, {"other": 1}]
    ):
        with store.episode(rid, f"e{i}", index=i, task_id=f"t{i}", task_group="g") as ep:
            ep.add_step("look", "a cat", 0.0, True, {"valid": True})
            ep.finish(success=True, reward=1.0, info={"notes": notes})
    return store


def test_a_new_view_is_shown_by_lorekit_show(toy_view: None, tmp_path: Path) -> None:
    with _store(tmp_path / "runs.db") as store:
        console = Console(record=True, width=200, color_system=None)
        render_episode(store, "toy", "e0", console)
        text = console.export_text()
        lines = text.splitlines()
        assert lines[0].startswith("e0  task=t0 (pet the cat)  group=g")
        assert lines[2] == "toy header: glad"  # under the status line
        assert lines[-1] == "toy says hello"  # after the steps and model calls
        assert text.index("no model calls recorded") < text.index("toy says hello")
        console = Console(record=True, width=200, color_system=None)
        render_episode(store, "toy", "e1", console)
        assert "toy" not in console.export_text().replace("task=t1", "")


def test_a_new_view_is_drawn_by_the_report(toy_view: None, tmp_path: Path) -> None:
    with _store(tmp_path / "runs.db") as store:
        claimed, other = (episode_data(store, e) for e in store.episodes("toy"))
        assert claimed["views"] == ["toy"] and other["views"] == []
        page = build_report(store, ["toy"])
    data = json.loads(DATA.search(page).group(1))  # type: ignore[union-attr]
    assert [e["views"] for e in data["episodes"]] == [["toy"], []]
    # one script: the generic browser, every view's renderer (the toy's last), then the start
    script = page.split("<script>")[-1].split("</script>")[0]
    assert script == page_script()
    assert script.index(report_script_text(load_views()[-2])) < script.index(TOY_JS)
    assert script.index(TOY_JS) < script.index("LoreKitReport.start();")


def test_show_prints_the_views_in_their_order(tmp_path: Path) -> None:
    notes = {
        "team": {"events": [{"time": 0, "tick": 0, "agent": "lead", "kind": "plan"}]},
        "agentkit": {"graph": "g", "steps": []},
        "spring": {"graph": "s", "steps": []},
        "build": {"build_id": "b1"},
        "automanual": {"task_type": "put", "turns": []},
        "trials": [{"trial": 1}],
        "tree": {"task": "make a stick", "depth": 1, "success": True},
        "method": "adapt",
    }
    with RunStore(tmp_path / "runs.db") as store:
        rid = store.create_run("r", env="textcraft", agent="mix", config={})
        with store.episode(rid, "e", index=0, task_id="stick", task_group="g") as ep:
            ep.finish(success=True, reward=1.0, info={"notes": notes})
        console = Console(record=True, width=200, color_system=None)
        render_episode(store, "r", "e", console)
    text = console.export_text()
    marks = ["method=adapt", "d1 make a stick", "trials", "AutoManual planner"]
    marks += ["AutoManual build", "SPRING", "AgentKit", "Team"]
    at = [text.index(m) for m in marks]
    assert at == sorted(at), text
    assert "stick (make a stick)" in text
