"""Every runnable experiment, end to end against a real OpenAI-compatible server.

``--simulate`` hands scripted models to the agents in-process; a reproduction
against a served model takes another path (the HTTP client and its event
loops, the build's stages, the served model's name, the price table), which
crashed where ``--simulate`` passed. Here every answer travels over HTTP from
LoreKit's fake server (``tests/cli/_served.py``), which answers as the methods'
scripted models and calls itself another model than the one requested. Each
experiment file is trimmed to one task per row (and its own quick settings:
``simulate:``'s shorter games and builds), and played agent by agent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from _cli import run_cli
from _served import PRICE, SERVED_AS, ServedModels, agent_roles, write_config

from lorekit.agents import needs_model
from lorekit.eval.reproduce import Experiment, load_all
from lorekit.eval.store import RunStore

SLOW = {"adapt-table1-alfworld", "adapt-table4-alfworld-models"} | {
    f"automanual-table{n}-{name}"
    for n, name in (
        (1, "alfworld"),
        (3, "ablation"),
        (6, "rule-system"),
        (2, "miniwob"),
        (5, "miniwob-feedback"),
        (7, "miniwob-example"),
    )
}
"""ALFWorld plays each episode in a child process, MiniWoB++ in Chromium, and AutoManual
builds first: these take half a minute or more each."""
SERVED_TYPES = 1
"""Task types each build plays here: its first. Every type's episodes take the same
served path (the same roles, requests and stages); ``--simulate``'s test plays the quick
plan's types (all of ALFWorld's six, MiniWoB++'s first two)."""
TEAM_CLOCK = {"max_time_s": 4, "cutoff_s": 4}
"""A team row against served models plays on the wall clock (the virtual one cannot
charge a server's time): here for 4 seconds (the paper's ran for up to an hour). The
served answers come at once, so the leader's first call is answered well within it."""
TEAM_ROWS = 2
"""Team rows played per experiment (the first and the last): every row is one `team
run` on the same served path, and each takes its whole time limit."""
RUNNABLE = [
    pytest.param(e, id=e.id, marks=[pytest.mark.slow] if e.id in SLOW else [])
    for e in load_all()
    if e.runnable
]


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LOREKIT_STORE", raising=False)
    return tmp_path


def trimmed(exp: Experiment, folder: Path) -> tuple[Path, dict[str, Any]]:
    """A copy of the experiment file with its quick settings (``simulate:``) applied for
    real: shorter games, one build game per task type, of each build's first type only
    (:data:`SERVED_TYPES`). Returns it and its env options."""
    data = yaml.safe_load(exp.path.read_text(encoding="utf-8"))
    quick = data.pop("simulate", None) or {}
    data["env_options"] = {**(data.get("env_options") or {}), **(quick.get("env_options") or {})}
    for build in data.get("builds") or []:
        build["per_type"] = quick.get("per_type", 1)
        build["types"] = SERVED_TYPES
    for row in data.get("rows") or []:
        if row.get("agent") == "team":
            row["options"] = {**(row.get("options") or {}), **TEAM_CLOCK}
    path = folder / f"{exp.id}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path, data["env_options"]


def playable(exp: Experiment, here: Path) -> list[Any]:
    """The rows the fake server can answer: every runnable row whose agent has scripted
    models on the env (the server answers as those), the laws the experience row reads
    written first (the oracle's), of a team experiment's rows the first and the last
    (:data:`TEAM_ROWS`), and of rows with one setup the first (:func:`_setup`); empty
    when none is left."""
    from lorekit.agents.simulated import supported

    rows, left = [], []
    for row in exp.runnable_rows:
        if needs_model(row.agent) and not supported(exp.env, row.agent):
            left.append(row.id)
            continue
        if row.needs_file is not None and row.needs_file.missing():
            if Path(row.needs_file.path).name != "laws.json":
                left.append(row.id)
                continue
            from lorekit.laws import oracle_experience

            oracle_experience().save(here / row.needs_file.path)
        rows.append(row)
    teams = [r for r in rows if r.agent == "team"]
    if len(teams) > TEAM_ROWS:
        kept = {teams[0].id, teams[-1].id}
        rows = [r for r in rows if r.agent != "team" or r.id in kept]
    return list({_setup(r): r for r in reversed(rows)}.values())[::-1]


def _setup(row: Any) -> str:
    """What a row plays on the served path: its agent, its build, its options and env
    options. Rows that differ only in the paper's model (AutoManual's -gpt35 and -gpt4
    rows: the same build, the same agent) send the same requests to the server, so one of
    them is played."""
    return json.dumps(
        [row.agent, row.build, row.options, row.env_options], sort_keys=True, default=str
    )


@pytest.mark.parametrize("exp", RUNNABLE)
def test_every_experiment_plays_end_to_end_against_a_served_model(
    exp: Experiment, here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, env_options = trimmed(exp, here)
    store = here / "s.sqlite3"
    rows = playable(exp, here)
    if not rows:  # nothing the fake server can answer as: the simulation refuses up front
        code, _out, err = run_cli(["reproduce", "run", str(path), "-n", "1", "--simulate"], capsys)
        assert code == 2 and err.count("\n") == 1, err
        assert "no scripted models" in err and exp.env in err, err
        assert not (here / "runs").exists()
        return
    by_agent: dict[str, list[Any]] = {}
    for row in rows:
        by_agent.setdefault(row.agent, []).append(row)
    roles = {r for row in rows for r in agent_roles(row.agent, row.options)}
    with ServedModels() as srv:
        url = srv.base_url
        config = write_config(here / "run.yaml", url, roles, store)
        for agent, rows in by_agent.items():
            if needs_model(agent):
                srv.serve(exp.env, env_options, agent)
            picked = ",".join(r.id for r in rows)
            args = ["reproduce", "run", str(path), "--rows", picked, "-n", "1"]
            args += ["--config", str(config), "--run-id", "srv", "--no-progress"]
            code, out, err = run_cli(args, capsys)
            assert code == 0, err[-3000:]
            assert "Event loop is closed" not in err
            saved = json.loads((here / "reproduce" / f"{exp.id}-srv.json").read_text())
            assert set(saved["runs"]) == {r.id for r in rows}
            if needs_model(agent):  # the table names the model that answered, and where
                assert saved["answered_by"] == "model", saved["models"]
                assert f"(served as {SERVED_AS}) at {url}" in saved["models"]
                assert f"served as {SERVED_AS}" in " ".join(out.split())
    with RunStore(store) as db:
        for row in rows:
            rid = f"srv.{row.id}"
            episodes = db.episodes(rid)
            assert len(episodes) == 1 and episodes[0].status != "error", (rid, episodes)
            calls = [c for c in db.llm_calls(rid) if c["error"] is None]
            if not needs_model(row.agent):
                assert not calls
                continue
            assert calls and all(
                c["meta"].get("endpoint") == url
                and c["meta"].get("served_model") == SERVED_AS
                and c["model"].startswith("req-")
                for c in calls
            ), rid
            run = db.get_run(rid)
            assert run is not None and run.summary is not None
            tokens = sum(c["prompt_tokens"] * PRICE["prompt"] for c in calls)
            tokens += sum(c["completion_tokens"] * PRICE["completion"] for c in calls)
            assert run.summary["cost_usd"] == pytest.approx(tokens / 1e6), rid  # not $0
            assert {m["served"] for m in run.summary["models"]} == {SERVED_AS}
