"""Shared fixtures: warm worker pools for the whole sandbox test run.

``pool`` is the pool ordinary runs use: under the OS layer where the machine
has it (CI insists), else, outside CI, behind the in-process guard alone (as
asked, by name). ``os_pool`` and ``guard_pool`` are the two layers on their
own terms, for attacks that must be contained with and without the OS layer.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator

import pytest

from lorekit.sandbox import Limits, NoOSSandbox, UnsafeSandboxWarning, WorkerPool, check_os_layer

#: Tight limits keep containment tests fast; generous enough for real code.
FAST = Limits(wall_s=1.0, cpu_s=2.0, memory_mb=128, max_output_chars=2_000, grace_s=0.4)


class Env:
    """A tiny stand-in for an environment's code API."""

    def __init__(self) -> None:
        self.position = 0
        self.inventory: list[str] = []

    def move(self, steps: int) -> str:
        self.position += steps
        return f"you are at {self.position}"

    def take(self, item: str, count: int = 1) -> list[str]:
        self.inventory.extend([item] * count)
        return list(self.inventory)

    def look(self) -> dict[str, object]:
        return {"position": self.position, "inventory": list(self.inventory)}

    def explode(self) -> None:
        raise ValueError("the bridge collapsed")

    def secret(self) -> str:
        return "parent-only"


#: The suite runs under the OS layer wherever the machine allows it (auto), so
#: the corpus shows both layers together; CI insists on every layer.
ISOLATION = "required" if os.environ.get("CI") else "auto"


def os_layer_here() -> bool:
    """Whether workers start under the OS layer on this machine."""
    try:
        check_os_layer(False)
    except NoOSSandbox:
        return False
    return True


def guard_only(size: int = 2) -> WorkerPool:
    """A pool behind the in-process guard alone (asked for by name; no warning shown)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnsafeSandboxWarning)
        return WorkerPool(size=size, isolation="off", unsafe_no_os_sandbox=True)


@pytest.fixture(scope="session")
def pool() -> Iterator[WorkerPool]:
    if ISOLATION == "auto" and not os_layer_here():
        with guard_only() as fallback:
            yield fallback
        return
    with WorkerPool(size=2, isolation=ISOLATION) as shared:
        yield shared


@pytest.fixture(scope="session")
def os_pool() -> Iterator[WorkerPool]:
    if not os.environ.get("CI") and not os_layer_here():
        pytest.skip("bubblewrap/seccomp isolation unavailable here (CI installs it)")
    with WorkerPool(size=2, isolation="required") as confined:
        yield confined


@pytest.fixture(scope="session")
def guard_pool() -> Iterator[WorkerPool]:
    with guard_only() as alone:
        yield alone


@pytest.fixture
def env() -> Env:
    return Env()


@pytest.fixture
def fast() -> Limits:
    return FAST
