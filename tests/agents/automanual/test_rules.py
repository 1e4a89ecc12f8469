"""The rule system: guards, stable ids, logs, history, restore/diff, persistence, resume."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from lorekit.agents.automanual.core import Rule, RuleType
from lorekit.agents.automanual.rules import RuleError, RuleEvent, RuleSystem
from lorekit.agents.automanual.store import AutoManualStoreError, open_db
from lorekit.agents.automanual.toolcalls import ToolCall, parse_tool_calls

SP = "Success Process"


@pytest.fixture
def rs() -> RuleSystem:
    system = RuleSystem(open_db(None), "build-1")
    system.begin(None, succeeded=None, actor="seed")
    return system


def ids(system: RuleSystem) -> list[str]:
    return [r.rule_id for r in system.rules()]


# -- the five functions ------------------------------------------------------------


def test_write_update_delete(rs: RuleSystem) -> None:
    assert rs.write_rule("At the start, only receptacles are visible.", "Special Mechanism") == (
        "wrote rule_0 (Special Mechanism)"
    )
    rs.begin("heat/1", succeeded=True, actor="builder")
    assert rs.write_rule("When heating, go to the microwave.", SP, "agent.go_to('m')", "seen") == (
        "wrote rule_1 (Success Process)"
    )
    assert rs.update_rule("rule_0", example="obs = agent.look()") == "updated rule_0 (example)"
    assert rs.delete_rule("rule_0") == "deleted rule_0"
    (rule,) = rs.rules()
    assert rule == Rule(
        "rule_1",
        RuleType.SUCCESS_PROCESS,
        "When heating, go to the microwave.",
        "agent.go_to('m')",
        ["[ep=heat/1] seen"],
    )
    assert rs.version == 4
    assert [(e.op, e.rule_id, e.episode_id, e.actor) for e in rs.history()] == [
        ("write", "rule_0", None, "seed"),
        ("write", "rule_1", "heat/1", "builder"),
        ("update", "rule_0", "heat/1", "builder"),
        ("delete", "rule_0", "heat/1", "builder"),
    ]


def test_rules_are_ordered_by_id_number(rs: RuleSystem) -> None:
    for i in range(12):
        rs.write_rule(f"rule {i}", "Special Phenomenon")
    assert ids(rs) == [f"rule_{i}" for i in range(12)]


def test_rule_type_is_forgiving_and_a_bad_type_names_the_choices(rs: RuleSystem) -> None:
    rs.write_rule("x", "special phenomena")
    assert rs.rules()[0].type is RuleType.SPECIAL_PHENOMENON
    with pytest.raises(RuleError, match=r"unknown rule type 'Tip'.*'Corrected Error'"):
        rs.write_rule("x", "Tip")
    with pytest.raises(RuleError, match="unknown rule type"):
        rs.update_rule("rule_0", type="Tip")


def test_empty_rule_text_is_refused(rs: RuleSystem) -> None:
    with pytest.raises(RuleError, match="needs the rule text"):
        rs.write_rule("   ", "Special Phenomenon")
    assert rs.version == 0


def test_update_with_empty_values_keeps_fields_and_a_no_op_is_refused(rs: RuleSystem) -> None:
    rs.write_rule("content", "Corrected Error", "example")
    with pytest.raises(RuleError, match="changes nothing"):
        rs.update_rule("rule_0", rule="", type="", example=None)
    with pytest.raises(RuleError, match="changes nothing"):
        rs.update_rule("rule_0", rule="content", type="Corrected Error")
    assert rs.version == 1
    rs.update_rule("rule_0", type="Unsolved Error")
    rule = rs.rules()[0]
    assert (rule.type, rule.content, rule.example) == (
        RuleType.UNSOLVED_ERROR,
        "content",
        "example",
    )


def test_unknown_and_deleted_ids_name_the_existing_ones(rs: RuleSystem) -> None:
    for text in "abc":
        rs.write_rule(text, "Special Phenomenon")
    rs.delete_rule("rule_1")
    with pytest.raises(RuleError, match=r"'rule_1' was deleted; existing rules: rule_0, rule_2"):
        rs.update_rule("rule_1", rule="again")
    with pytest.raises(RuleError, match=r"delete_rule: 'rule_7' does not exist; existing rules"):
        rs.delete_rule("rule_7")
    with pytest.raises(RuleError, match="'banana' does not exist"):
        rs.delete_rule("banana")
    assert rs.version == 4


def test_rule_ids_are_forgiving(rs: RuleSystem) -> None:
    for text in "abcd":
        rs.write_rule(text, "Special Phenomenon")
    rs.delete_rule("2")
    rs.delete_rule(" Rule_1 ")
    rs.apply(ToolCall("delete_rule", {"rule_id": 3}, 1, "delete_rule(3)"))
    assert ids(rs) == ["rule_0"]


def test_ids_are_never_reused_after_delete_or_restore(rs: RuleSystem) -> None:
    rs.write_rule("a", "Special Phenomenon")
    rs.write_rule("b", "Special Phenomenon")
    rs.delete_rule("rule_1")
    assert rs.write_rule("c", "Special Phenomenon") == "wrote rule_2 (Special Phenomenon)"
    rs.restore(1)  # back to just rule_0
    assert ids(rs) == ["rule_0"]
    assert rs.write_rule("d", "Special Phenomenon").startswith("wrote rule_3 ")


# -- guards ------------------------------------------------------------------------


@pytest.mark.parametrize("rtype", [SP, "Useful Helper Method"])
def test_no_success_rule_from_a_failed_episode(rs: RuleSystem, rtype: str) -> None:
    rs.write_rule("seed", "Special Phenomenon")
    rs.begin("cool/3", succeeded=False, actor="builder")
    with pytest.raises(RuleError, match=rf"cannot write a '{rtype}' rule from episode 'cool/3'"):
        rs.write_rule("how to cool", rtype)
    with pytest.raises(RuleError, match=rf"cannot update a '{rtype}' rule"):
        rs.update_rule("rule_0", type=rtype)
    assert rs.version == 1
    # what a failure may teach is still accepted
    rs.write_rule("fridge must be opened first", "Unsolved Error")
    rs.write_rule("open the fridge", "Corrected Error")
    # and the same types are fine from a success, or from no episode (seed, user)
    rs.begin("cool/4", succeeded=True, actor="builder")
    rs.write_rule("how to cool", rtype)
    rs.begin(None, succeeded=None, actor="user")
    rs.write_rule("how to cool, per the user", rtype)


def test_a_failed_episode_may_refine_an_existing_success_rule(rs: RuleSystem) -> None:
    rs.write_rule("heat: go to the microwave, heat", SP)
    rs.begin("heat/2", succeeded=False, actor="builder")
    rs.update_rule("rule_0", rule="heat: go to the microwave first, then heat", type=SP)
    assert rs.rules()[0].content.endswith("first, then heat")


def test_sizes_are_bounded(rs: RuleSystem) -> None:
    small = RuleSystem(open_db(None), "b", max_content=10, max_example=20, max_record=5)
    with pytest.raises(RuleError, match="rule has 11 characters, more than the 10 allowed"):
        small.write_rule("x" * 11, "Special Phenomenon")
    with pytest.raises(RuleError, match="example has 21 characters"):
        small.write_rule("ok", "Special Phenomenon", "y" * 21)
    with pytest.raises(RuleError, match="validation_record has 6 characters"):
        small.write_rule("ok", "Special Phenomenon", "", "z" * 6)
    small.write_rule("x" * 10, "Special Phenomenon", "y" * 20, "z" * 5)
    with pytest.raises(RuleError, match="example has 21"):
        small.update_rule("rule_0", example="y" * 21)
    assert small.version == 1
    with pytest.raises(RuleError, match="rule has 3001 characters"):
        rs.write_rule("x" * 3001, "Special Phenomenon")


# -- validation logs ----------------------------------------------------------------


def test_logs_are_tagged_and_trimmed() -> None:
    rs = RuleSystem(open_db(None), "b", keep_logs=3)
    rs.begin(None, succeeded=None, actor="seed")
    rs.write_rule("a", "Special Mechanism", validation_record="Provided by the user.")
    rs.write_rule("b", "Special Mechanism")
    assert [r.logs for r in rs.rules()] == [["[seed] Provided by the user."], ["[seed] written"]]
    for i in range(4):
        rs.begin(f"ep/{i}", succeeded=True, actor="builder")
        rs.update_rule("rule_0", validation_record=f"checked {i}")
    rs.update_rule("rule_0", rule="a, refined")  # no record given: logs unchanged
    assert rs.rules()[0].logs == [
        "[ep=ep/1] checked 1",
        "[ep=ep/2] checked 2",
        "[ep=ep/3] checked 3",
    ]
    assert rs.logged_episodes() == ["ep/1", "ep/2", "ep/3"]
    with pytest.raises(ValueError, match="keep_logs"):
        RuleSystem(open_db(None), "b", keep_logs=0)


# -- get_trajectory, stop_generating, apply ------------------------------------------


def test_get_trajectory_uses_the_injected_lookup() -> None:
    trajectories = {"heat/1": "turn 1: go_to microwave_1 ..."}
    rs = RuleSystem(open_db(None), "b", trajectory=trajectories.get)
    rs.begin("heat/1", succeeded=True, actor="builder")
    rs.write_rule("r", "Special Mechanism", validation_record="from here")
    assert rs.get_trajectory("heat/1") == "turn 1: go_to microwave_1 ..."
    assert rs.get_trajectory("[ep=heat/1]") == trajectories["heat/1"]
    assert rs.get_trajectory("ep=heat/1") == trajectories["heat/1"]
    with pytest.raises(
        RuleError, match=r"no episode 'epoch_1'.*after 'ep='.*ids in the logs: heat/1"
    ):
        rs.get_trajectory("epoch_1")
    without = RuleSystem(open_db(None), "b")
    with pytest.raises(RuleError, match="not available"):
        without.get_trajectory("heat/1")


def test_stop_generating_sets_a_flag_that_begin_clears(rs: RuleSystem) -> None:
    assert not rs.stopped
    assert rs.stop_generating() == "stopped"
    assert rs.stopped
    rs.begin("e", succeeded=True, actor="builder")
    assert not rs.stopped


def test_begin_checks_the_actor(rs: RuleSystem) -> None:
    with pytest.raises(ValueError, match="unknown actor 'planner'"):
        rs.begin("e", succeeded=True, actor="planner")


def test_parse_then_apply(rs: RuleSystem) -> None:
    answer = (
        "```python\n"
        "rule_system.write_rule('Opening a fridge shows its contents.', 'Special Phenomenon')\n"
        "rule_system.update_rule('rule_0', example='''obs = agent.open('fridge_1')''')\n"
        "rule_system.stop_generating()\n"
        "```"
    )
    results = [rs.apply(c) for c in parse_tool_calls(answer, RuleSystem.TOOLS)]
    assert results == ["wrote rule_0 (Special Phenomenon)", "updated rule_0 (example)", "stopped"]
    assert rs.stopped


def test_apply_refuses_unknown_names_and_non_string_arguments(rs: RuleSystem) -> None:
    with pytest.raises(RuleError, match="unknown function '_reload'"):
        rs.apply(ToolCall("_reload", {}, 1, "_reload()"))
    with pytest.raises(RuleError, match="argument 'rule' must be a string, not list"):
        rs.apply(ToolCall("write_rule", {"rule": ["a"], "type": SP}, 1, ""))
    with pytest.raises(RuleError, match="'rule_id' must be a string, not bool"):
        rs.apply(ToolCall("delete_rule", {"rule_id": True}, 1, ""))
    assert rs.version == 0


def test_tools_cover_the_five_functions() -> None:
    tools = RuleSystem.TOOLS
    assert list(tools) == [
        "write_rule",
        "update_rule",
        "delete_rule",
        "get_trajectory",
        "stop_generating",
    ]
    assert tools["write_rule"].required == ("rule", "type")
    assert tools["update_rule"].params[0] == "rule_id"


# -- history, rules_at, diff, restore ---------------------------------------------------


def _three_versions(rs: RuleSystem) -> None:
    rs.write_rule("a", "Special Phenomenon")  # v1
    rs.write_rule("b", "Corrected Error", "ex b")  # v2
    rs.begin("e/1", succeeded=True, actor="builder")
    rs.update_rule("rule_1", rule="b2", validation_record="fixed")  # v3
    rs.delete_rule("rule_0")  # v4
    rs.write_rule("c", SP)  # v5


def test_rules_at_and_diff(rs: RuleSystem) -> None:
    _three_versions(rs)
    assert [r.content for r in rs.rules_at(0)] == []
    assert [r.content for r in rs.rules_at(2)] == ["a", "b"]
    assert [r.content for r in rs.rules_at(5)] == ["b2", "c"]
    d = rs.diff(2, 5)
    assert [r.rule_id for r in d.added] == ["rule_2"]
    assert [r.rule_id for r in d.removed] == ["rule_0"]
    (change,) = d.changed
    assert change.rule_id == "rule_1"
    assert change.fields["content"] == ("b", "b2")
    assert change.fields["logs"] == (["[seed] written"], ["[seed] written", "[ep=e/1] fixed"])
    assert "example" not in change.fields
    text = d.render()
    assert text.splitlines()[0] == "rules v2 -> v5: 1 added, 1 removed, 1 changed"
    assert "+ rule_2 (Success Process): c" in text
    assert "- rule_0 (Special Phenomenon): a" in text
    assert "content before: b" in text and "content after:  b2" in text
    assert "+ [ep=e/1] fixed" in text
    assert rs.diff(5, 5).empty
    back = rs.diff(5, 2)
    assert [r.rule_id for r in back.removed] == ["rule_2"]
    with pytest.raises(RuleError, match="versions go from 0 to 5"):
        rs.rules_at(6)


def test_restore_appends_events_and_keeps_history(rs: RuleSystem) -> None:
    _three_versions(rs)
    rs.begin(None, succeeded=None, actor="user")
    assert rs.restore(2) == 3  # rule_0 back, rule_1 reverted, rule_2 removed
    assert rs.rules() == rs.rules_at(2)
    assert rs.version == 8
    assert [e.op for e in rs.history()[-3:]] == ["restore"] * 3
    assert rs.rules_at(5) == rs.rules_at(5)  # earlier versions still readable
    assert [r.content for r in rs.rules_at(5)] == ["b2", "c"]
    assert rs.restore(rs.version) == 0
    rs.restore(5)
    assert rs.rules() == rs.rules_at(5)


def test_history_is_a_copy(rs: RuleSystem) -> None:
    rs.write_rule("a", "Special Phenomenon")
    event = rs.history()[0]
    assert event.after is not None
    event.after.content = "tampered"
    rs.rules()[0].logs.append("tampered")
    assert rs.rules()[0].content == "a" and rs.rules()[0].logs == ["[seed] written"]


def test_render_for_the_planner_and_the_builder(rs: RuleSystem) -> None:
    assert rs.render() == "(no rules yet)"
    rs.write_rule("Only receptacles are visible at first.", "Special Mechanism")
    rs.write_rule("Heat: find, take, heat.", SP, "obj = find('mug')\nagent.heat(obj)", "from user")
    rs.write_rule("Text example.", "Special Phenomenon", "a fence ``` inside, not code")
    text = rs.render()
    assert (
        text.split("\n\n")[0]
        == "rule_0 (Special Mechanism): Only receptacles are visible at first."
    )
    assert (
        "rule_1 (Success Process): Heat: find, take, heat.\n```python\nobj = find('mug')\n" in text
    )
    assert "````\na fence ``` inside, not code\n````" in text
    assert "[seed]" not in text
    with_logs = rs.render(logs=True)
    assert "Validation logs:\n- [seed] from user" in with_logs


# -- persistence, concurrency, resume --------------------------------------------------


def test_a_second_system_on_the_same_file_sees_the_same_rules(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    a = RuleSystem(open_db(path), "b")
    b = RuleSystem(open_db(path), "b")
    other_build = RuleSystem(open_db(path), "other")
    a.write_rule("from a", "Special Phenomenon")
    assert [r.content for r in b.rules()] == ["from a"]
    b.write_rule("from b", "Special Phenomenon")  # b was not stale: it catches up first
    a.update_rule("rule_1", rule="from b, edited by a")
    assert ids(a) == ids(b) == ["rule_0", "rule_1"]
    assert b.rules() == a.rules() and b.version == a.version == 3
    assert other_build.rules() == [] and other_build.version == 0
    reopened = RuleSystem(open_db(path), "b")
    assert reopened.history() == a.history()


def test_a_refused_call_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    rs = RuleSystem(open_db(path), "b")
    rs.write_rule("a", "Special Phenomenon")
    with pytest.raises(RuleError):
        rs.update_rule("rule_9", rule="x")
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT count(*) FROM automanual_rule_events").fetchone()[0] == 1


# A scripted build: each episode's builder applies calls that depend on the rules so far,
# so a wrong id or state after resume would change what later episodes write.
EPISODES = [
    ("put/0", True),
    ("heat/0", False),
    ("heat/1", True),
    ("cool/0", False),
    ("cool/1", True),
]


def _run_episode(rs: RuleSystem, episode_id: str, ok: bool) -> None:
    rs.begin(episode_id, succeeded=ok, actor="builder")
    n = len(rs.rules())
    kind = SP if ok else "Unsolved Error"
    rs.write_rule(f"{episode_id}: lesson {n}", kind, validation_record="seen")
    if n >= 2:
        first = rs.rules()[0].rule_id
        rs.update_rule(first, validation_record=f"still true in {episode_id}")
    if n >= 3:
        rs.delete_rule(rs.rules()[1].rule_id)
    rs.begin(episode_id, succeeded=None, actor="consolidator")
    if len(rs.rules()) > 3:
        rs.delete_rule(rs.rules()[-2].rule_id)


def _seed(rs: RuleSystem) -> None:
    rs.begin(None, succeeded=None, actor="seed")
    rs.write_rule("Receptacles must be visited to see inside.", "Special Mechanism")


def test_resume_after_truncate_reproduces_the_uninterrupted_history(tmp_path: Path) -> None:
    whole = RuleSystem(open_db(tmp_path / "whole.sqlite"), "b")
    _seed(whole)
    for ep, ok in EPISODES:
        _run_episode(whole, ep, ok)

    path = tmp_path / "killed.sqlite"
    killed = RuleSystem(open_db(path), "b")
    _seed(killed)
    for ep, ok in EPISODES[:3]:
        _run_episode(killed, ep, ok)
    # the 4th episode wrote rules but was killed before the run store committed it
    _run_episode(killed, *EPISODES[3])
    killed.begin(EPISODES[3][0], succeeded=False, actor="builder")
    killed.write_rule("half-finished thought", "Unsolved Error")

    uncommitted = sum(1 for e in killed.history() if e.episode_id == EPISODES[3][0])
    assert uncommitted >= 3

    resumed = RuleSystem(open_db(path), "b")  # a new process opens the file
    assert resumed.truncate_to([ep for ep, _ in EPISODES[:3]]) == uncommitted
    assert resumed.rules() == whole.rules_at(resumed.version)
    for ep, ok in EPISODES[3:]:
        _run_episode(resumed, ep, ok)

    mine, theirs = resumed.history(), whole.history()
    assert len(mine) == len(theirs)
    assert all(a.same_change(b) for a, b in zip(mine, theirs, strict=True))
    assert resumed.rules() == whole.rules()
    # the killed system's stale memory catches up with the truncated file on its next read
    assert killed.history() == resumed.history()


def test_truncate_refuses_a_non_tail(rs: RuleSystem) -> None:
    for ep in ("e0", "e1", "e2"):
        rs.begin(ep, succeeded=True, actor="builder")
        rs.write_rule(ep, "Special Phenomenon")
    with pytest.raises(AutoManualStoreError, match="only a tail"):
        rs.truncate_to({"e0", "e2"})
    assert rs.version == 3
    assert rs.truncate_to({"e0", "e1", "e2"}) == 0


def test_events_round_trip_to_dict(rs: RuleSystem) -> None:
    rs.write_rule("a", "Special Phenomenon")
    event = rs.history()[0]
    d = event.to_dict()
    assert d["after"]["type"] == "Special Phenomenon" and d["before"] is None
    assert isinstance(event, RuleEvent) and event.same_change(event)


def test_apply_all_is_all_or_nothing(rs: RuleSystem) -> None:
    rs.write_rule("kept", "Special Phenomenon")
    rs.begin("e/1", succeeded=False, actor="builder")
    answer = (
        "```python\n"
        "rule_system.update_rule('rule_0', validation_record='checked')\n"
        "rule_system.write_rule('fridge needs opening', 'Unsolved Error')\n"
        "rule_system.stop_generating()\n"
        "rule_system.write_rule('how to cool', 'Success Process')\n"
        "```"
    )
    calls = parse_tool_calls(answer, RuleSystem.TOOLS)
    with pytest.raises(RuleError, match=r"call 4 of 4 \(line 4, write_rule\): cannot write"):
        rs.apply_all(calls)
    assert rs.version == 1 and ids(rs) == ["rule_0"] and rs.rules()[0].logs == ["[seed] written"]
    assert not rs.stopped
    results = rs.apply_all(calls[:3])
    assert results == ["updated rule_0 (logs)", "wrote rule_1 (Unsolved Error)", "stopped"]
    assert rs.version == 3 and rs.stopped


def test_random_changes_keep_replay_restore_and_a_second_reader_consistent(
    tmp_path: Path,
) -> None:
    rng = random.Random(14)
    path = tmp_path / "runs.sqlite"
    rs = RuleSystem(open_db(path), "b", keep_logs=2)
    issued: list[str] = []
    types = [t.value for t in RuleType]
    for step in range(300):
        rs.begin(f"ep/{step // 5}", succeeded=rng.random() < 0.7, actor="builder")
        live = ids(rs)
        op = rng.random()
        try:
            if op < 0.45 or not live:
                rs.write_rule(f"rule from step {step}", rng.choice(types), validation_record="r")
                issued.append(ids(rs)[-1])
            elif op < 0.75:
                rs.update_rule(rng.choice(live), rule=f"edited at {step}", validation_record="u")
            elif op < 0.9:
                rs.delete_rule(rng.choice(live))
            else:
                rs.restore(rng.randrange(rs.version + 1))
        except RuleError as exc:
            assert "failed" in str(exc)  # the only refusal these calls can meet
    assert len(set(issued)) == len(issued)  # never reused
    assert rs.rules() == rs.rules_at(rs.version)
    assert all(len(r.logs) <= 2 for r in rs.rules())
    other = RuleSystem(open_db(path), "b")
    assert other.history() == rs.history()
    for v in rng.sample(range(rs.version + 1), 10):
        d = rs.diff(v, rs.version)
        rebuilt = {r.rule_id: r for r in rs.rules_at(v) if r not in d.removed}
        rebuilt.update({r.rule_id: r for r in d.added})
        assert sorted(rebuilt) == sorted(r.rule_id for r in rs.rules())
        other.restore(v)
        assert rs.rules() == rs.rules_at(v)  # rs catches up with other's restore


def test_logs_keep_three_by_default_as_published() -> None:
    rs = RuleSystem(open_db(None), "b")
    rs.begin("e0", succeeded=True, actor="builder")
    rs.write_rule("When x: y.", "Special Phenomenon", "", "seen in e0")
    rid = rs.rules()[0].rule_id
    for i in range(1, 5):
        rs.begin(f"e{i}", succeeded=True, actor="builder")
        rs.update_rule(rid, validation_record=f"seen in e{i}")
    logs = rs.rules()[0].logs
    assert len(logs) == 3 and "e4" in logs[-1] and not any("e1" in log for log in logs)
