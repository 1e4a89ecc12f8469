"""Each validation rule of an organization, one test per rule, each with the
smallest spec that breaks only that rule (and its valid neighbour).

A tree has one root, no agent with two commanders, and no command cycle.
These are separate rules: a cycle can hide behind a valid-looking root
(``r -> a``, ``b -> c -> b``), so the cycle check must catch it on its own.
"""

from __future__ import annotations

from typing import Any

import pytest

from lorekit.agents.teams.org import OrgError, build_org, org_from_spec


def _tree(names: list[str], commands: dict[str, list[str]]) -> dict[str, Any]:
    return {"org": "tree", "agents": [{"name": n} for n in names], "commands": commands}


def test_a_cycle_behind_a_single_root_is_rejected() -> None:
    spec = _tree(["r", "a", "b", "c"], {"r": ["a"], "b": ["c"], "c": ["b"]})
    with pytest.raises(OrgError, match="cannot have a command cycle"):
        org_from_spec(spec)
    # the same team without the back edge is a tree... of two roots, which is refused too
    with pytest.raises(OrgError, match=r"exactly one root.*found 2: r, b"):
        org_from_spec(_tree(["r", "a", "b", "c"], {"r": ["a"], "b": ["c"]}))
    # and joined under r it is a valid tree
    org = org_from_spec(_tree(["r", "a", "b", "c"], {"r": ["a", "b"], "b": ["c"]}))
    assert org.parent("c") == "b" and org.parent("b") == "r" and org.parent("r") is None


def test_a_tree_with_two_roots_is_rejected() -> None:
    with pytest.raises(OrgError, match=r"exactly one root.*found 2: r1, r2"):
        org_from_spec(_tree(["r1", "a", "r2", "b"], {"r1": ["a"], "r2": ["b"]}))
    with pytest.raises(OrgError, match=r"exactly one root.*found 2: a, b"):
        org_from_spec(_tree(["a", "b"], {}))


def test_a_tree_of_only_a_cycle_has_no_root() -> None:
    with pytest.raises(OrgError, match=r"found 0: none \(there is a cycle\)"):
        org_from_spec(_tree(["a", "b", "c"], {"a": ["b"], "b": ["c"], "c": ["a"]}))


def test_a_one_agent_tree_and_a_deep_tree_are_valid() -> None:
    assert org_from_spec(_tree(["only"], {})).names == ["only"]
    deep = org_from_spec(_tree(["a", "b", "c", "d"], {"a": ["b"], "b": ["c"], "c": ["d"]}))
    assert [deep.parent(n) for n in deep.names] == [None, "a", "b", "c"]
    assert deep.agent("c").role == "leader" and deep.agent("d").role == "worker"


def test_loops_and_shared_subordinates_are_fine_in_a_graph() -> None:
    org = org_from_spec(
        {
            "org": "graph",
            "agents": [{"name": "a"}, {"name": "b"}, {"name": "c"}],
            "commands": {"a": ["b", "c"], "b": ["c", "a"]},
        }
    )
    assert org.commanders("c") == ["a", "b"] and org.may_command("b", "a")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"org": "graph", "agents": [{"name": "a"}], "commands": {"a": ["a"]}}, "command itself"),
        (
            {"org": "graph", "agents": [{"name": "a"}], "commands": {"ghost": ["a"]}},
            "unknown agent 'ghost'",
        ),
        ({"org": "solo", "agents": [{"name": "a"}, {"name": "b"}]}, "exactly one agent, got 2"),
        ({"org": "graph", "agents": []}, "non-empty list"),
        ({"org": "graph", "agents": "a"}, "non-empty list"),
        ({"org": "graph", "agents": [{"name": "a"}], "commands": ["a"]}, "must map a commander"),
        ({"org": "graph", "agents": [{"name": "a"}], "commands": {"a": [1]}}, r"commands\[a\]"),
        ({"org": "graph", "agents": [{"player": "p1"}]}, r"agents\[0\] must be a mapping"),
        ({"org": "graph", "agents": [{"name": "a", "role": "boss"}]}, "leader or worker"),
        ({"org": "graph", "commands": {"a": ["b"]}}, "needs an agents list"),
        ({"org": "ring", "agents": [{"name": "a"}]}, "unknown organization 'ring'"),
        ({"org": "solo", "leaves": 1}, "exactly one agent"),
        ({"org": "chain", "size": 1}, "at least two agents, got size=1"),
        ("[1, 2]", "is a mapping"),
    ],
)
def test_each_rule_names_its_problem(spec: dict[str, Any] | str, message: str) -> None:
    with pytest.raises(OrgError, match=message):
        org_from_spec(spec)


def test_smallest_valid_standard_shapes() -> None:
    assert len(build_org("tree", leaves=1).agents) == 2
    assert len(build_org("chain", size=2).agents) == 2
    assert len(build_org("graph", size=2).agents) == 2
    assert build_org("solo", size=1).names == ["agent"]
    # a single commanded edge in a string is accepted as a one-item list
    org = org_from_spec({"org": "graph", "agents": [{"name": "a"}, {"name": "b"}],
                         "commands": {"a": "b"}})  # fmt: skip
    assert org.may_command("a", "b") and not org.may_command("b", "a")
