"""``lorekit team run``: options checked up front, a run recorded, resumed, shown."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _cli import run_cli
from _team_fakes import FakeTeam, fake_parts

import lorekit.agents.teams.commands.team as cli_teams
from lorekit.eval.store import RunStore

WOOD = "collect-50-wood/seed-0"
STONE = "collect-20-stone/seed-0"


@pytest.fixture
def team(monkeypatch: pytest.MonkeyPatch) -> FakeTeam:
    fake = FakeTeam()
    monkeypatch.setattr(cli_teams, "_parts", lambda: fake_parts(fake))
    return fake


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "run.yaml"
    path.write_text("roles:\n  default: {provider: scripted, model: echo}\n", encoding="utf-8")
    return path


def _args(tmp_path: Path, config: Path, *extra: str) -> list[str]:
    """A tree of 2 leaves on the virtual clock, unless ``extra`` names another org."""
    shape = [] if "--org" in extra else ["--org", "tree", "--leaves", "2"]
    return [
        "team", "run", "crafter-party", *shape, "--mode", "async", "--clock", "virtual",
        "--config", str(config), "--store", str(tmp_path / "runs.sqlite3"), "--run-id", "t1",
        *extra,
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--org", "ring"], "--org: unknown organization 'ring'; choose one of solo, chain"),
        (["--org", "team.yaml"], "--org: no organization file at team.yaml"),
        (["--leaves", "0"], "--leaves: a tree needs at least 1 leaf, got 0"),
        (["--org", "chain", "--leaves", "2"], "--leaves: only a tree has leaves"),
        (["--org", "graph", "--leaves", "2"], "for --org graph use --size"),
        (["--org", "graph", "--size", "1"], "--size: a graph needs at least 2 agents, got 1"),
        (["--org", "solo", "--size", "2"], "--size: sets the size of a chain or graph"),
        (["--mode", "parallel"], "Invalid value for '--mode'"),
        (["--clock", "sundial"], "Invalid value for '--clock'"),
        (["--task", "collect-50-wod/seed-0"], "did you mean 'collect-50-wood/seed-0'"),
        (["--task", "nothing"], "--task: unknown crafter-party task 'nothing'"),
        (["--role", "planner=m"], "unknown role 'planner' for a team"),
        (["--cutoff", "0"], "--cutoff: expected a positive number of seconds"),
        (["--split", "train"], "--split: unknown split 'train'"),
    ],
)
def test_bad_options_are_one_line_errors(
    tmp_path: Path,
    config: Path,
    team: FakeTeam,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    needle: str,
) -> None:
    args = _args(tmp_path, config, *extra)
    if "--task" not in extra and "--split" not in extra:
        args += ["--task", WOOD]
    code, _, err = run_cli(args, capsys)
    assert code == 2, err
    assert needle in err and len(err.strip().splitlines()) == 1, err
    assert team.played == []
    assert not (tmp_path / "runs.sqlite3").exists()


def test_other_envs_and_missing_models_are_refused(
    tmp_path: Path, team: FakeTeam, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(["team", "run", "crafter", "--task", WOOD], capsys)
    assert code == 2 and "teams play 'crafter-party'" in err
    code, _, err = run_cli(["team", "run", "crafter-party", "--task", WOOD], capsys)
    assert code == 2 and "a team needs models" in err and "--simulate" in err
    assert team.played == []


def test_run_records_the_team_and_resumes(
    tmp_path: Path, config: Path, team: FakeTeam, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(_args(tmp_path, config, "--task", WOOD, "--task", STONE), capsys)
    assert code == 0, err
    assert team.played == [WOOD, STONE]
    assert team.kwargs[0] == {"mode": "async", "cutoff_s": 300.0, "max_time_s": 1800.0}
    assert "team episodes" in out and "lorekit show t1" in out

    with RunStore.open_readonly(tmp_path / "runs.sqlite3") as db:
        run = db.get_run("t1")
        assert run is not None and run.agent == "team:tree-2/async/virtual"
        assert run.config["team"]["org"] == "tree" and run.config["env_kwargs"] == {"players": 3}
        assert run.summary is not None and run.summary["team"]["tc_mean"] == 48.0
        assert run.summary["team"]["tc_nan"] == 1
        wood, stone = db.episodes("t1")
        assert (wood.task_id, wood.success, stone.success) == (WOOD, True, False)
        team_notes = wood.info["notes"]["team"]
        assert [a["name"] for a in team_notes["org"]["members"]] == ["leader", "w1", "w2"]
        assert team_notes["mode"] == "async" and team_notes["clock"] == "virtual"
        assert len(team_notes["events"]) == 10 and len(team_notes["messages"]) == 4
        assert stone.info["notes"]["team"]["metrics"]["tc"] is None  # no TC: NaN
        assert stone.info["stop_reason"] == "cutoff"
        # each agent's model calls, by role, with tokens and latency
        calls = db.llm_calls("t1", wood.episode_key)
        assert [c["role"] for c in calls] == ["leader", "worker"]
        # finished skills are the episode's steps
        steps = db.steps("t1", wood.episode_key)
        assert [s.action for s in steps] == ["p2 collect(wood, 10)"]
        assert steps[0].observation == "no tree within reach" and steps[0].info["ticks"] == 118

    # resuming plays only what is missing
    code, _, err = run_cli(
        _args(
            tmp_path, config, "--task", WOOD, "--task", STONE, "--task", "collect-20-wood/seed-1"
        ),
        capsys,
    )
    assert code == 0, err
    assert team.played == [WOOD, STONE, "collect-20-wood/seed-1"]
    assert "2 episodes already done, 1 played now" in err


def test_resume_with_other_team_settings_is_refused(
    tmp_path: Path, config: Path, team: FakeTeam, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(_args(tmp_path, config, "--task", WOOD), capsys)[0] == 0
    code, _, err = run_cli(_args(tmp_path, config, "--task", WOOD, "--mode", "round"), capsys)
    assert code == 2 and "--run-id" in err and "mode 'async' -> 'round'" in err
    code, _, err = run_cli(_args(tmp_path, config, "--task", WOOD, "--cutoff", "60"), capsys)
    assert code == 2 and "cutoff_s 300.0 -> 60.0" in err
    assert team.played == [WOOD]


def test_a_failing_team_is_an_error_episode_and_retried(
    tmp_path: Path,
    config: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    broken = FakeTeam(fail_on="stone")
    monkeypatch.setattr(cli_teams, "_parts", lambda: fake_parts(broken))
    code, _, err = run_cli(_args(tmp_path, config, "--task", WOOD, "--task", STONE), capsys)
    assert code == 1 and "1 of 2 team episodes ended in an error" in err
    assert "the team broke on" in err and "--retry-errors" in err
    with RunStore.open_readonly(tmp_path / "runs.sqlite3") as db:
        stone = next(e for e in db.episodes("t1") if e.task_id == STONE)
        assert stone.status == "error"
        # what was known before the error (the organization) is kept
        assert stone.info["notes"]["team"]["org"]["org"] == "tree"
    broken.fail_on = None
    code, _, err = run_cli(
        _args(tmp_path, config, "--task", WOOD, "--task", STONE, "--retry-errors"), capsys
    )
    assert code == 0, err
    assert broken.played == [WOOD, STONE, STONE]


def test_show_prints_the_team_timeline(
    tmp_path: Path, config: Path, team: FakeTeam, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(_args(tmp_path, config, "--task", WOOD), capsys)[0] == 0
    store = str(tmp_path / "runs.sqlite3")
    code, out, err = run_cli(["show", "t1", "--store", store], capsys)  # one episode: no index
    assert code == 0, err
    assert "org=tree leaves=2" in out and "mode=async" in out and "TC=48.0 s" in out
    said = out.index("I see a cow")
    told = out.index("-> w1: collect 10 wood")
    reported = out.index("reports to leader: REPORT failed: collect 10 wood")
    assert said < told < reported  # messages in clock order, between the other events
    assert out.count("-> w1: collect 10 wood") == 1  # the pool's copy is not repeated
    assert "refused go north from w1: only leader may command w2" in out
    assert "REFUSED" not in out  # the pool's copy of the refusal is not repeated


def test_show_without_episode_needs_one_when_there_are_several(
    tmp_path: Path, config: Path, team: FakeTeam, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(_args(tmp_path, config, "--task", WOOD, "--task", STONE), capsys)[0] == 0
    code, _, err = run_cli(["show", "t1", "--store", str(tmp_path / "runs.sqlite3")], capsys)
    assert code == 2 and "has 2 episodes; name one" in err and WOOD in err


def test_export_keeps_the_team_notes(
    tmp_path: Path, config: Path, team: FakeTeam, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(_args(tmp_path, config, "--task", WOOD), capsys)[0] == 0
    code, out, _ = run_cli(
        ["runs", "export", "t1", "--store", str(tmp_path / "runs.sqlite3")], capsys
    )
    assert code == 0
    episode = json.loads(out.splitlines()[1])
    assert episode["info"]["notes"]["team"]["events"][1]["kind"] == "plan"


def test_an_organization_file_builds_a_custom_team(
    tmp_path: Path, config: Path, team: FakeTeam, capsys: pytest.CaptureFixture[str]
) -> None:
    org = tmp_path / "pair.yaml"
    org.write_text(
        "org: tree\nagents:\n  - {name: boss, player: p1}\n  - {name: digger, player: p2}\n"
        "commands: {boss: [digger]}\n",
        encoding="utf-8",
    )
    code, _, err = run_cli(_args(tmp_path, config, "--org", str(org), "--task", WOOD), capsys)
    assert code == 0, err
    with RunStore.open_readonly(tmp_path / "runs.sqlite3") as db:
        run = db.get_run("t1")
        assert run is not None and run.agent == "team:tree-custom-2/async/virtual"
        assert run.config["team"]["custom"]["commands"] == {"boss": ["digger"]}
        notes = db.episodes("t1")[0].info["notes"]["team"]
        assert [m["name"] for m in notes["org"]["members"]] == ["boss", "digger"]
    bad = tmp_path / "bad.yaml"
    bad.write_text("org: ring\n", encoding="utf-8")
    code, _, err = run_cli(_args(tmp_path, config, "--org", str(bad), "--task", WOOD), capsys)
    assert code == 2 and "must map org: to one of solo, chain, graph, tree" in err
    code, _, err = run_cli(
        _args(tmp_path, config, "--org", str(org), "--leaves", "3", "--task", WOOD), capsys
    )
    assert code == 2 and "an organization file lists its agents itself" in err


def test_a_solo_team_plays_on_a_two_player_world(
    tmp_path: Path, config: Path, team: FakeTeam, capsys: pytest.CaptureFixture[str]
) -> None:
    args = _args(tmp_path, config, "--org", "solo", "--mode", "round", "--task", WOOD)
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    assert team.kwargs[0]["mode"] == "round"
    with RunStore.open_readonly(tmp_path / "runs.sqlite3") as db:
        run = db.get_run("t1")
        assert run is not None and run.agent == "team:solo/round/virtual"
        assert run.config["env_kwargs"] == {"players": 2}  # the party's minimum


def test_simulated_team_plays_for_real_and_is_shown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No fakes: the real org, hourglass agents, world, clock and simulated models."""
    args = [
        "team", "run", "crafter-party", "--org", "tree", "--leaves", "3", "--mode", "async",
        "--task", "collect-20-wood/seed-0", "--simulate", "--env-opt", "peaceful=true",
        "--store", str(tmp_path / "runs.sqlite3"), "--run-id", "t1",
    ]  # fmt: skip
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    with RunStore(tmp_path / "runs.sqlite3") as db:
        (ep,) = db.episodes("t1")
        assert ep.success
        team_notes = ep.info["notes"]["team"]
        kinds = {e["kind"] for e in team_notes["events"]}
        assert {"plan", "message", "report", "skill"} <= kinds
        roles = {c["role"] for c in db.llm_calls("t1")}
        assert roles == {"leader", "worker"}
    code, out, err = run_cli(["show", "t1", "--store", str(tmp_path / "runs.sqlite3")], capsys)
    assert code == 0, err
    timeline_text = out[out.index("timeline (") :]
    assert "leader" in timeline_text and "-> worker1" in timeline_text
    assert " p1 " not in timeline_text  # pool copies are told once, by agent name


def test_env_opt_makes_a_peaceful_world_and_is_recorded(
    tmp_path: Path,
    config: Path,
    team: FakeTeam,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    worlds: list[bool] = []
    play = team.run_team

    async def spy(world: Any, *args: Any, **kw: Any) -> Any:
        worlds.append(world.party.peaceful)
        return await play(world, *args, **kw)

    monkeypatch.setattr(team, "run_team", spy)
    code, _, err = run_cli(
        _args(tmp_path, config, "--task", WOOD, "--env-opt", "peaceful=true"), capsys
    )
    assert code == 0, err
    assert worlds == [True]
    with RunStore.open_readonly(tmp_path / "runs.sqlite3") as db:
        run = db.get_run("t1")
        assert run is not None and run.config["env_kwargs"] == {"players": 3, "peaceful": True}
    # resuming with another world is refused; the default world is hostile
    code, _, err = run_cli(_args(tmp_path, config, "--task", WOOD), capsys)
    assert code == 2 and "env_kwargs" in err
    code, _, err = run_cli(_args(tmp_path, config, "--task", WOOD, "--run-id", "t2"), capsys)
    assert code == 0, err
    assert worlds == [True, False]


@pytest.mark.parametrize(
    ("opt", "needle"),
    [
        ("colour=red", "--env-opt: bad arguments for env 'crafter-party'"),
        ("players=5", "--env-opt players=...: the organization sets the players"),
        ("peaceful", "--env-opt: expected KEY=VALUE"),
        ("peaceful=maybe", "with --env-opt peaceful=maybe: peaceful must be true or false"),
    ],
)
def test_env_opt_mistakes_are_one_line(
    tmp_path: Path,
    config: Path,
    team: FakeTeam,
    capsys: pytest.CaptureFixture[str],
    opt: str,
    needle: str,
) -> None:
    code, _, err = run_cli(_args(tmp_path, config, "--task", WOOD, "--env-opt", opt), capsys)
    assert code == 2 and needle in err, err
    assert team.played == []


def _per_task(store: Path, run_id: str) -> dict[str, tuple[Any, ...]]:
    with RunStore(store) as db:
        out = {}
        for ep in db.episodes(run_id):
            team_notes = ep.info["notes"]["team"]
            metrics = team_notes["metrics"]
            out[ep.task_id] = (
                ep.success, metrics.get("tc"), metrics.get("mpt"), len(team_notes["messages"]),
            )  # fmt: skip
        return out


def test_each_episode_gets_fresh_models_whatever_the_order_and_jobs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The leader of a later episode does not inherit the first one's memory."""
    store = tmp_path / "runs.sqlite3"
    first, second = "collect-20-wood/seed-0", "collect-20-wood/seed-1"

    def run(run_id: str, *extra: str) -> dict[str, tuple[Any, ...]]:
        args = [
            "team", "run", "crafter-party", "--org", "tree", "--leaves", "2", "--mode", "async",
            *extra, "--simulate", "--store", str(store), "--run-id", run_id,
        ]  # fmt: skip
        code, _, err = run_cli(args, capsys)
        assert code == 0, err
        return _per_task(store, run_id)

    forward = run("fwd", "--task", first, "--task", second, "-j", "1")
    backward = run("bwd", "--task", second, "--task", first, "-j", "1")
    parallel = run("par", "--task", first, "--task", second, "-j", "2")
    alone = run("alone", "--task", second)
    assert forward == backward == parallel
    assert forward[second] == alone[second]
    assert all(row[3] > 0 for row in forward.values())  # every leader delegates


def test_a_chain_plays_as_a_relay_unless_told_otherwise(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "runs.sqlite3"
    for run_id, extra in (
        ("chain", []),
        ("tree", ["--org", "tree"]),
        ("free", ["--mode", "async"]),
    ):
        args = [
            "team", "run", "crafter-party", *(extra if "--org" in extra else ["--org", "chain"]),
            *(extra if "--mode" in extra else []), "--task", "collect-20-wood/seed-0",
            "--simulate", "--store", str(store), "--run-id", run_id,
        ]  # fmt: skip
        code, _, err = run_cli(args, capsys)
        assert code == 0, err
    with RunStore(store) as db:
        modes = {
            rid: db.episodes(rid)[0].info["notes"]["team"]["mode"]
            for rid in ("chain", "tree", "free")
        }
        chain = db.episodes("chain")[0].info["notes"]["team"]["events"]
    assert modes == {"chain": "relay", "tree": "async", "free": "async"}
    plans = [e for e in chain if e["kind"] == "plan"]
    assert plans[0]["agent"] == "agent1"
    told = min(e["time"] for e in chain if e["kind"] == "message" and e.get("to") == "agent2")
    assert min(e["time"] for e in plans if e["agent"] == "agent2") >= told
    turn = None  # one agent after another: between two plans only the first one acts
    for event in chain:
        if event["kind"] == "plan":
            turn = event["agent"]
        elif event["kind"] == "skill":
            assert event["agent"] == turn, event
    assert {e["agent"] for e in chain if e["kind"] == "skill"} >= {"agent1", "agent2"}


def test_the_root_delegates_unless_it_is_a_working_root(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "runs.sqlite3"
    for run_id, extra in (("off", []), ("on", ["--working-root"])):
        args = [
            "team", "run", "crafter-party", "--org", "tree", "--leaves", "2", *extra,
            "--task", "collect-20-wood/seed-1", "--simulate", "--store", str(store),
            "--run-id", run_id,
        ]  # fmt: skip
        code, _, err = run_cli(args, capsys)
        assert code == 0, err
    with RunStore(store) as db:
        work = {}
        for rid in ("off", "on"):
            events = db.episodes(rid)[0].info["notes"]["team"]["events"]
            work[rid] = [
                e["call"] for e in events
                if e["kind"] == "skill" and e["agent"] == "leader"
                and e["call"].split("(")[0] not in ("drink", "eat", "sleep", "fight")
            ]  # fmt: skip
        labels = {rid: db.get_run(rid).agent for rid in ("off", "on")}
    assert work["off"] == [] and work["on"]
    assert labels == {"off": "team:tree-2/async/virtual",
                      "on": "team:tree-2/async/virtual/working-root"}  # fmt: skip


def test_peaceful_and_hostile_runs_have_different_labels(
    tmp_path: Path, config: Path, team: FakeTeam, capsys: pytest.CaptureFixture[str]
) -> None:
    for rid, extra in (("calm", ["--env-opt", "peaceful=true"]), ("wild", [])):
        code, _, err = run_cli(
            _args(tmp_path, config, "--task", WOOD, *extra, "--run-id", rid), capsys
        )
        assert code == 0, err
    with RunStore.open_readonly(tmp_path / "runs.sqlite3") as db:
        labels = {rid: db.get_run(rid).agent for rid in ("calm", "wild")}  # type: ignore[union-attr]
    assert labels == {
        "calm": "team:tree-2/async/virtual/peaceful",
        "wild": "team:tree-2/async/virtual",
    }


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("org: tree\nagents:\n  - {name: boss, player: p9}\n  - {name: digger, player: p2}\n"
         "commands: {boss: [digger]}\n", "boss plays 'p9', but a team of 2 plays players p1..p2"),
        ("org: chain\nagents:\n  - {name: a}\n  - {name: b}\ncommands: {a: [b], b: [a]}\n",
         "a chain has no cycle: a -> b -> a"),
        ("org: tree\nagents:\n  - {name: the boss}\n  - {name: digger}\n"
         "commands: {the boss: [digger]}\n", "agent name 'the boss' cannot be addressed"),
    ],
)  # fmt: skip
def test_broken_organization_files_are_refused_before_anything_runs(
    tmp_path: Path, config: Path, capsys: pytest.CaptureFixture[str], text: str, needle: str,
) -> None:  # fmt: skip
    """The real organization builder checks the file (no fakes here)."""
    org = tmp_path / "org.yaml"
    org.write_text(text, encoding="utf-8")
    code, _, err = run_cli(_args(tmp_path, config, "--org", str(org), "--task", WOOD), capsys)
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "runs.sqlite3").exists()


def test_served_models_on_the_virtual_clock_are_refused(
    tmp_path: Path, team: FakeTeam, capsys: pytest.CaptureFixture[str]
) -> None:
    """Their latency would not be charged (a 1 s model would score like a free one)."""
    args = [
        "team", "run", "crafter-party", "--clock", "virtual", "--model", "gpt-4o-mini",
        "--base-url", "http://127.0.0.1:9/v1", "--task", WOOD,
        "--store", str(tmp_path / "runs.sqlite3"), "--run-id", "t1",
    ]  # fmt: skip
    code, _, err = run_cli(args, capsys)
    assert code == 2 and "--clock virtual: served models (default) take real time" in err, err
    assert team.played == [] and not (tmp_path / "runs.sqlite3").exists()


def test_the_summary_names_the_tasks_it_was_given(
    tmp_path: Path, config: Path, team: FakeTeam, capsys: pytest.CaptureFixture[str]
) -> None:
    """Not a bare ``tasks: --task`` line (issue 42, item 12): the ids the run was given."""
    tasks = ["--task", WOOD, "--task", STONE, "--task", WOOD]
    code, out, err = run_cli(_args(tmp_path, config, *tasks), capsys)
    assert code == 0, err
    assert f"tasks: --task {WOOD}, {STONE}\n" in out
    from lorekit.agents.teams.commands.options import task_provenance

    assert task_provenance(["a", "b", "c", "d", "e"]) == "--task a, b, c and 2 more"
