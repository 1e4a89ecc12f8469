"""A reproduction row's setup: what changes the experiment's, and what a stored run of the
row was played with (so that a resume never mixes two setups in one run)."""

from __future__ import annotations

import inspect

from lorekit.eval.reproduce_setup import SETUP_KEY, Setup, differences, from_experiment

NOW = Setup("exp", "react", "react", "test", {"max_steps": 40, "compat": True}, {"d_max": 4})


def _default(key: str) -> object:
    return {"max_steps": 40, "seed": 0}.get(key, inspect.Parameter.empty)


def test_the_command_lines_changes_to_the_experiments_setup() -> None:
    theirs = {"compat": True, "max_steps": None}
    assert from_experiment("test", theirs, None, {}, _default) == []
    assert from_experiment("test", theirs, "test", {"compat": True}, _default) == []
    assert from_experiment("test", theirs, "dev", {"max_steps": 5, "seed": 0}, _default) == [
        "split dev, the experiment's test",
        "env option max_steps=5, the experiment's null",
    ]  # seed=0 is the env's default: no change
    assert from_experiment("test", {}, None, {"seed": 3, "x": 1}, _default) == [
        "env option seed=3, the experiment sets none",
        "env option x=1, the experiment sets none",
    ]


def test_a_stored_setup_is_compared_field_by_field() -> None:
    assert differences({SETUP_KEY: NOW.to_dict()}, NOW) == []
    was = Setup("exp", "react", "react", "dev", {"max_steps": 5}, {"d_max": 3}, simulate=True)
    assert differences({SETUP_KEY: was.to_dict()}, NOW) == [
        "split was dev, now test",
        "simulate was true, now false",
        "env option compat was unset, now true",
        "env option max_steps was 5, now 40",
        "option d_max was 3, now 4",
    ]


def test_a_run_stored_before_setups_were_recorded_is_checked_on_what_it_holds() -> None:
    assert differences({}, NOW) == []  # nothing to go by
    assert differences({"split": None, "env_kwargs": {"length": 20}}, NOW) == []
    old = {"split": "dev", "env_kwargs": {"max_steps": 5, "after_goal": "stop"}}
    assert differences(old, NOW) == [
        "split was dev, now test",
        "env option max_steps was 5, now 40",
    ]
    same = {"split": "test", "env_kwargs": {"max_steps": 40, "compat": True, "seed": 0}}
    assert differences(same, NOW) == []
