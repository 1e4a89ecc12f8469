from __future__ import annotations

import pytest

from lorekit.agents.teams.org import OrgError, build_org, load_org, org_from_spec


@pytest.mark.parametrize("leaves", [1, 2, 3, 7])
def test_tree_has_one_leader_and_any_number_of_leaves(leaves: int) -> None:
    org = build_org("tree", leaves=leaves)
    assert [a.role for a in org.agents] == ["leader"] + ["worker"] * leaves
    assert [a.player for a in org.agents] == [f"p{i + 1}" for i in range(leaves + 1)]
    assert org.subordinates("leader") == [f"worker{i + 1}" for i in range(leaves)]
    for w in org.subordinates("leader"):
        assert org.parent(w) == "leader"
        assert org.subordinates(w) == []


def test_tree_refuses_a_command_from_a_non_parent_with_a_reason() -> None:
    org = build_org("tree", leaves=2)
    assert org.refusal("leader", "worker1") is None
    why = org.refusal("worker2", "worker1")
    assert why is not None and "worker2" in why and "only leader" in why
    assert org.refusal("worker1", "leader") is not None


def test_tree_rejects_two_commanders_for_one_agent() -> None:
    spec = {
        "org": "tree",
        "agents": [{"name": "a"}, {"name": "b"}, {"name": "c"}],
        "commands": {"a": ["b", "c"], "b": ["c"]},
    }
    with pytest.raises(OrgError, match="at most one commander; c has"):
        org_from_spec(spec)


def test_tree_rejects_a_cycle() -> None:
    # one root (r) and one commander each, so only the cycle check can refuse it
    spec = {
        "org": "tree",
        "agents": [{"name": "r"}, {"name": "a"}, {"name": "b"}, {"name": "c"}],
        "commands": {"r": ["a"], "b": ["c"], "c": ["b"]},
    }
    with pytest.raises(OrgError, match="cannot have a command cycle"):
        org_from_spec(spec)


def test_graph_allows_a_delegation_loop() -> None:
    org = build_org("graph", size=3)
    assert org.may_command("agent1", "agent2")
    assert org.may_command("agent2", "agent1")
    assert all(a.role == "leader" for a in org.agents)
    # the same loop is not a valid tree
    with pytest.raises(OrgError):
        org_from_spec(
            {
                "org": "tree",
                "agents": [{"name": "agent1"}, {"name": "agent2"}],
                "commands": {"agent1": ["agent2"], "agent2": ["agent1"]},
            }
        )


def test_chain_relays_only_to_the_next_agent() -> None:
    org = build_org("chain", size=4)
    assert org.subordinates("agent1") == ["agent2"]
    assert org.subordinates("agent3") == ["agent4"]
    assert org.subordinates("agent4") == []
    assert org.refusal("agent1", "agent3") is not None
    assert org.refusal("agent2", "agent1") is not None
    assert org.agent("agent4").role == "worker"


def test_solo_is_one_agent() -> None:
    org = build_org("solo")
    assert org.names == ["agent"] and org.edges == frozenset()
    with pytest.raises(OrgError, match="exactly one agent"):
        build_org("solo", size=2)


def test_spec_from_yaml_text_and_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert len(org_from_spec("org: tree\nleaves: 5\n").agents) == 6
    assert org_from_spec("chain").kind == "chain"
    path = tmp_path / "team.yaml"
    path.write_text(
        "org: tree\nagents:\n  - {name: boss, player: p2}\n  - {name: digger, player: p1}\n"
        "commands: {boss: [digger]}\n"
    )
    org = load_org(path)
    assert org.agent("boss").role == "leader" and org.agent("boss").player == "p2"
    assert org.agent("digger").role == "worker"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"org": "star"}, "unknown organization 'star'"),
        (
            {
                "org": "tree",
                "agents": [{"name": "boss", "player": "p7"}, {"name": "digger"}],
                "commands": {"boss": ["digger"]},
            },
            "boss plays 'p7', but a team of 2 plays players p1..p2",
        ),
        (
            {
                "org": "tree",
                "agents": [{"name": "big boss"}, {"name": "digger"}],
                "commands": {"big boss": ["digger"]},
            },
            "agent name 'big boss' cannot be addressed",
        ),
        (
            {
                "org": "chain",
                "agents": [{"name": "a"}, {"name": "b"}, {"name": "c"}],
                "commands": {"a": ["b"], "b": ["c"], "c": ["a"]},
            },
            "a chain has no cycle: a -> b -> c -> a",
        ),
        (
            {
                "org": "chain",
                "agents": [{"name": "a"}, {"name": "b"}, {"name": "c"}],
                "commands": {"a": ["b", "c"]},
            },
            "in a chain each agent commands one and obeys one; a",
        ),
        ({"org": "tree", "leaves": 0}, "at least one leaf"),
        ({"org": "tree", "leaves": "3"}, "whole number"),
        ({"org": "tree", "size": 3}, "set by leaves"),
        ({"org": "chain", "leaves": 2}, "tree organizations only"),
        ({"org": "graph", "size": 1}, "at least two agents"),
        ({"org": "tree", "leafs": 2}, "unknown key"),
        ({"leaves": 2}, "needs org"),
        (
            {"org": "graph", "agents": [{"name": "a"}], "commands": {"a": ["ghost"]}},
            "unknown agent 'ghost'",
        ),
        ({"org": "graph", "agents": [{"name": "a"}, {"name": "a"}]}, "unique"),
        (
            {
                "org": "graph",
                "agents": [{"name": "a", "player": "p1"}, {"name": "b", "player": "p1"}],
            },
            "own player",
        ),
    ],
)
def test_bad_specs_say_what_is_wrong(spec: dict[str, object], message: str) -> None:
    with pytest.raises(OrgError, match=message):
        org_from_spec(spec)


def test_missing_file_is_a_clear_error(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(OrgError, match="does not exist"):
        load_org(tmp_path / "nope.yaml")
