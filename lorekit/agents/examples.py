"""Few-shot examples and environment rules, kept as data per environment.

``lorekit/agents/prompts/examples/<env>.yaml`` holds, for one environment:
``rules`` (shown to every model acting or planning there), ``executor``
(worked trajectories: a task, the state it starts from, and the turns that
solve it) and ``planner`` (worked plans per planning style, each with the
style's own ``rules``). Agents show the first ``shots`` examples of a list,
so the count is an agent option, not an edit to a prompt.

An environment without a file simply gets no examples and no extra rules.
A file that does not match the schema fails on load with the file, the
field and what was expected.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from lorekit import yamlio

EXAMPLES_DIR = ("prompts", "examples")
_ENV_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
DEFAULT_SHOTS = 2
"""Examples per prompt unless an agent is told otherwise (the paper shows two worked plans)."""


class ExamplesError(ValueError):
    """An examples file that does not follow the schema; the message names the field."""


@dataclass(frozen=True, slots=True)
class DemoTurn:
    """One turn of a worked trajectory; a verdict (``completed``) has no observation."""

    thought: str
    action: str
    observation: str | None = None


@dataclass(frozen=True, slots=True)
class Demo:
    """A worked executor trajectory."""

    setting: str
    task: str
    state: str
    turns: tuple[DemoTurn, ...]


@dataclass(frozen=True, slots=True)
class PlanDemo:
    """A worked plan: the planner's whole answer for one task."""

    setting: str
    task: str
    state: str
    plan: str


@dataclass(frozen=True, slots=True)
class EnvExamples:
    """Everything one environment's file provides (empty for an env without one)."""

    rules: str = ""
    executor: tuple[Demo, ...] = ()
    planner_rules: Mapping[str, str] = field(default_factory=dict)
    planner: Mapping[str, tuple[PlanDemo, ...]] = field(default_factory=dict)


def check_shots(shots: int) -> int:
    if not isinstance(shots, int) or isinstance(shots, bool) or shots < 0:
        raise ValueError(f"shots must be a whole number >= 0, got {shots!r}")
    return shots


@cache
def examples_for(env_name: str) -> EnvExamples:
    """The examples for the env registered as ``env_name`` (empty if it has none)."""
    if not _ENV_NAME.fullmatch(env_name):
        return EnvExamples()  # not a registry-style name: never a path outside the folder
    folder = resources.files("lorekit.agents").joinpath(*EXAMPLES_DIR)
    source = folder.joinpath(f"{env_name}.yaml")
    if not source.is_file():
        return EnvExamples()
    text = source.read_text(encoding="utf-8")
    return parse_examples(yamlio.safe_load(text, source=f"{env_name}.yaml"), f"{env_name}.yaml")


def parse_examples(data: Any, where: str) -> EnvExamples:
    """Check and convert one file's content; errors name ``where`` and the field."""
    top = _mapping(data, where, "the file")
    _only(top, {"rules", "executor", "planner"}, where, "the file")
    rules = _text(top["rules"], where, "rules") if "rules" in top else ""
    demos = tuple(
        _demo(item, where, f"executor[{i}]")
        for i, item in enumerate(_list(top.get("executor", []), where, "executor"))
    )
    planner_rules: dict[str, str] = {}
    plans: dict[str, tuple[PlanDemo, ...]] = {}
    for style, entry in _mapping(top.get("planner", {}), where, "planner").items():
        path = f"planner.{style}"
        body = _mapping(entry, where, path)
        _only(body, {"rules", "examples"}, where, path)
        if "rules" in body:
            planner_rules[str(style)] = _text(body["rules"], where, f"{path}.rules").strip()
        plans[str(style)] = tuple(
            _plan_demo(item, where, f"{path}.examples[{i}]")
            for i, item in enumerate(_list(body.get("examples", []), where, f"{path}.examples"))
        )
    return EnvExamples(rules.strip(), demos, planner_rules, plans)


def _demo(item: Any, where: str, path: str) -> Demo:
    body = _mapping(item, where, path)
    _only(body, {"setting", "task", "state", "turns"}, where, path)
    turns = []
    for i, raw in enumerate(_list(body.get("turns"), where, f"{path}.turns")):
        turn_path = f"{path}.turns[{i}]"
        turn = _mapping(raw, where, turn_path)
        _only(turn, {"thought", "action", "observation"}, where, turn_path)
        observation = turn.get("observation")
        turns.append(
            DemoTurn(
                _text(turn.get("thought"), where, f"{turn_path}.thought"),
                _text(turn.get("action"), where, f"{turn_path}.action"),
                None if observation is None else _text(observation, where, f"{turn_path}.obs"),
            )
        )
    if not turns:
        raise ExamplesError(f"{where}: {path}.turns must list at least one turn")
    return Demo(
        _text(body.get("setting"), where, f"{path}.setting").strip(),
        _text(body.get("task"), where, f"{path}.task").strip(),
        _text(body.get("state"), where, f"{path}.state").strip(),
        tuple(turns),
    )


def _plan_demo(item: Any, where: str, path: str) -> PlanDemo:
    body = _mapping(item, where, path)
    _only(body, {"setting", "task", "state", "plan"}, where, path)
    setting, task, state, plan = (
        _text(body.get(k), where, f"{path}.{k}").strip()
        for k in ("setting", "task", "state", "plan")
    )
    return PlanDemo(setting, task, state, plan)


def _mapping(value: Any, where: str, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ExamplesError(f"{where}: {path} must be a mapping, got {type(value).__name__}")
    return value


def _list(value: Any, where: str, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise ExamplesError(f"{where}: {path} must be a list, got {type(value).__name__}")
    return value


def _text(value: Any, where: str, path: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ExamplesError(f"{where}: {path} must be a non-empty string, got {value!r}")
    return value


def _only(body: Mapping[str, Any], allowed: set[str], where: str, path: str) -> None:
    extra = sorted(set(body) - allowed)
    if extra:
        raise ExamplesError(
            f"{where}: {path} has unknown field(s) {', '.join(extra)}; "
            f"expected: {', '.join(sorted(allowed))}"
        )
