"""Shared fixtures: one warm worker pool for the whole sandbox test run."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from lorekit.sandbox import Limits, WorkerPool

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


@pytest.fixture(scope="session")
def pool() -> Iterator[WorkerPool]:
    with WorkerPool(size=2, isolation=ISOLATION) as shared:
        yield shared


@pytest.fixture
def env() -> Env:
    return Env()


@pytest.fixture
def fast() -> Limits:
    return FAST
