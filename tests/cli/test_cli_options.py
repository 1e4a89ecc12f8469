"""Each option set parses into its one typed object, with the old flags and defaults."""

from __future__ import annotations

from typing import Any

import click
import pytest
from click.testing import CliRunner

from lorekit.cli.options import (
    BackendChoice,
    HarnessOptions,
    ModelChoice,
    TaskChoice,
    backend_options,
    harness_options,
    model_options,
    task_options,
)


def parse(decorator: Any, name: str, args: list[str]) -> Any:
    """What a command decorated with ``decorator`` receives as ``name`` for ``args``."""
    seen: dict[str, Any] = {}

    @click.command()
    @decorator
    def command(**kwargs: Any) -> None:
        seen.update(kwargs)

    result = CliRunner().invoke(command, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert list(seen) == [name]  # one object, none of the individual flags
    return seen[name]


def test_model_options_give_one_model_choice() -> None:
    got = parse(
        model_options,
        "models",
        ["-c", "run.yaml", "-m", "m1", "--base-url", "http://h/v1", "--role", "a=b",
         "--role", "c=d", "--request-timeout", "5"],
    )  # fmt: skip
    assert got == ModelChoice("run.yaml", "m1", "http://h/v1", ("a=b", "c=d"), 5.0)
    assert got.given
    empty = parse(model_options, "models", [])
    assert empty == ModelChoice() and not empty.given
    assert parse(model_options, "models", ["--role", "x=y"]).given
    with pytest.raises(AttributeError):
        empty.model = "m"  # type: ignore[misc]


def test_harness_options_give_one_object_with_the_command_defaults() -> None:
    assert parse(harness_options(), "harness", []) == HarnessOptions(8, None, 0, 600.0)
    got = parse(
        harness_options(concurrency=2, timeout_s=3_600.0),
        "harness",
        ["-j", "3", "--run-id", "r", "--seed", "7", "--timeout", "9.5", "--cache", "replay",
         "--retry-errors", "--no-progress", "--store", "s.sqlite3"],
    )  # fmt: skip
    assert got == HarnessOptions(3, "r", 7, 9.5, "replay", True, False, "s.sqlite3")
    assert parse(harness_options(concurrency=2), "harness", ["--progress"]).progress is True


def test_harness_without_concurrency_plays_one_at_a_time() -> None:
    one = harness_options(concurrency=None, timeout_s=1_800.0, range_checked_timeout=False)
    assert parse(one, "harness", ["--timeout", "0"]) == HarnessOptions(1, None, 0, 0.0)

    @click.command()
    @one
    def command(harness: HarnessOptions) -> None: ...

    assert CliRunner().invoke(command, ["-j", "2"]).exit_code == 2  # no such option


def test_range_checked_timeout_refuses_zero() -> None:
    @click.command()
    @harness_options()
    def command(harness: HarnessOptions) -> None: ...

    result = CliRunner().invoke(command, ["--timeout", "0"])
    assert result.exit_code == 2 and "--timeout" in result.output


def test_task_options_give_one_task_choice() -> None:
    got = parse(
        task_options(),
        "tasks",
        ["-n", "2", "--env-opt", "a=1", "--env-opt", "b=2", "--tasks", "all"],
    )
    assert got == TaskChoice("test", 2, ("a=1", "b=2"), "all")
    build = task_options(split="dev", episodes=False)
    assert parse(build, "tasks", []) == TaskChoice("dev", None, (), None)

    @click.command()
    @build
    def command(tasks: TaskChoice) -> None: ...

    assert CliRunner().invoke(command, ["-n", "1"]).exit_code == 2  # no --episodes here


def test_backend_options_give_one_backend_choice() -> None:
    assert parse(backend_options, "backend", []) == BackendChoice("local", None, None)
    got = parse(backend_options, "backend", ["--backend", "ray", "--address", "auto",
                                             "--actors", "4"])  # fmt: skip
    assert got == BackendChoice("ray", "auto", 4)


def test_org_options_give_one_org_choice() -> None:
    from lorekit.agents.teams.commands.team import OrgChoice, org_options

    assert parse(org_options, "org_choice", []) == OrgChoice()
    got = parse(
        org_options,
        "org_choice",
        ["--org", "chain", "--size", "4", "--mode", "round", "--clock", "virtual",
         "--max-time", "60", "--cutoff", "30", "--seconds-per-tick", "0.5"],
    )  # fmt: skip
    assert got == OrgChoice("chain", None, 4, "round", "virtual", 60.0, 30.0, 0.5)
