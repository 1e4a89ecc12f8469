"""Records collected once per test session (seed 0, default quotas: ~15 s)."""

from __future__ import annotations

import pytest

from lorekit.envs.crafter import worldgen
from lorekit.laws.records import LawCollection, collect_records


@pytest.fixture(scope="session")
def default_records() -> LawCollection:
    worldgen.warm_up()
    return collect_records(seed=0)
