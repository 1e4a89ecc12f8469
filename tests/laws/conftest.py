"""Records collected once per test session, for every xdist worker (seed 0, default
quotas: about 15 s idle, a minute on a busy machine)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _shared import shared_value

from lorekit.envs.crafter import worldgen
from lorekit.laws.records import LawCollection, collect_records


def _collect(_folder: Path) -> LawCollection:
    worldgen.warm_up()
    return collect_records(seed=0)


@pytest.fixture(scope="session")
def default_records(tmp_path_factory: pytest.TempPathFactory) -> LawCollection:
    return shared_value(tmp_path_factory, "laws-default-records", _collect)
