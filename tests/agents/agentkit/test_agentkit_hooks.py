"""The AgentKit specs' hooks on hand-made answers: what is learned, kept or refused."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from lorekit.agents.agentkit import hooks
from lorekit.graph import AfterQueryError


def ctx(**db: Any) -> Any:
    return SimpleNamespace(db=dict(db))


def test_learn_keeps_only_general_observed_discoveries() -> None:
    c = ctx(knowledge={"old": "x"}, unknowns={"a": "?", "b": "?", "c": "?"})
    five = dict.fromkeys(hooks.FINDING_CHECKS, "yes")
    answer = {
        "a": {**five, "discovery": "2 wood"},
        "b": {**five, "discovery": "maybe 3", "solid": "no"},
        "c": {**five, "discovered": "no", "discovery": "NA"},
        "junk": "not an object",
    }
    assert hooks.learn(c, answer) == {"a": "2 wood"}
    assert c.db["knowledge"] == {"old": "x", "a": "2 wood"}
    assert c.db["unknowns"] == {"b": "?", "c": "?"}
    with pytest.raises(AfterQueryError, match="one JSON object"):
        hooks.learn(c, ["a"])


def test_unknowns_merge_filter_and_stay_bounded() -> None:
    c = ctx(unknowns={f"q{i}": "?" for i in range(hooks.MAX_UNKNOWNS)})
    five = dict.fromkeys(hooks.QUESTION_CHECKS, "yes")
    new = {
        "fresh": {"info": "how far arrows fly", **five},
        "known": {"info": "x", **five, "novel": "no"},
        "useless": {"info": "y", **five, "relevant": "no"},
    }
    kept = hooks.remember_unknowns(c, new)
    assert "fresh" in kept and "known" not in kept and "useless" not in kept
    assert len(kept) == hooks.MAX_UNKNOWNS and "q0" not in kept  # the oldest went


def test_gate_and_skill() -> None:
    with pytest.raises(AfterQueryError, match="missing: 'unexpected'"):
        hooks.gate_decision(ctx(), {"replan": "No", "subgoal_done": "Yes, wood 1"})
    seven = dict.fromkeys(hooks.GATE_FLAGS, "no")
    assert hooks.gate_decision(ctx(), {**seven, "subgoal_done": "Yes, wood 1"}) == "replan"
    assert hooks.gate_decision(ctx(), {**seven, "mistake": "yes"}) == "replan"
    assert hooks.gate_decision(ctx(), seven) == "keep"
    c = ctx()
    assert hooks.choose_skill(c, {"Mine": ["dig", "tool", "face and do"], "x": 1}) == {
        "Mine": ["dig", "tool", "face and do"]
    }
    assert c.db["current_skill"] == "Mine"
    with pytest.raises(AfterQueryError, match="one entry"):
        hooks.choose_skill(c, {})


def test_crafter_action_names_and_repeats() -> None:
    c = ctx(actions="noop, move_west, do", max_repeats=4)
    clear = {"obstacles": "no", "hazards": "no"}
    assert hooks.choose_action(c, {"action": "Move West", "repeats": "3", **clear}) == {
        "action": "move_west",
        "repeats": 3,
        "hazard": False,
    }
    assert hooks.choose_action(c, {"action": "do", "repeats": 5, **clear})["repeats"] == 3
    for bad, why in (
        ({"action": "jump"}, "not an allowed action"),
        ({"action": "do", "repeats": 2}, "'obstacles', 'hazards'"),
        ({"action": "do", "repeats": True, **clear}, "at least 1"),
        ({"action": "do", "repeats": "two", **clear}, "at least 1"),
        ({"action": "do", "repeats": 0, **clear}, "at least 1"),
    ):
        with pytest.raises(AfterQueryError, match=why):
            hooks.choose_action(c, bad)


def test_web_actions_are_checked_against_the_page() -> None:
    page = ctx(clickables="Back to Search|B0ABCDEFGH|Buy Now", can_search="no")
    assert hooks.choose_web_action(page, {"action": "click", "target": "buy now"}) == (
        "click[Buy Now]"
    )
    assert hooks.choose_web_action(page, {"action": "Click", "target": "[b0abcdefgh]"}) == (
        "click[B0ABCDEFGH]"
    )
    with pytest.raises(AfterQueryError, match="no search box"):
        hooks.choose_web_action(page, {"action": "search", "target": "red shirt"})
    with pytest.raises(AfterQueryError, match="not a button on this page"):
        hooks.choose_web_action(page, {"action": "click", "target": "Add to cart"})
    with pytest.raises(AfterQueryError, match="'search' or 'click'"):
        hooks.choose_web_action(page, {"action": "scroll", "target": "down"})
    search = ctx(clickables="", can_search="yes")
    assert hooks.choose_web_action(search, {"action": "search", "target": " red   shirt "}) == (
        "search[red shirt]"
    )
