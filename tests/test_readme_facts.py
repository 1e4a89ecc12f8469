"""Figures README.md states about the shipped parts match the parts themselves."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def test_the_agentkit_crafter_node_count() -> None:
    from lorekit.agents import make_agent

    said = re.search(r"`--agent agentkit-crafter` \((\d+) nodes", README)
    assert said is not None
    agent = make_agent("agentkit-crafter")
    assert int(said.group(1)) == len(agent.spec.nodes)  # type: ignore[attr-defined]


def test_the_generated_alfworld_split_sizes() -> None:
    pytest.importorskip("alfworld", reason="needs the alfworld extra")
    from lorekit.envs import make

    said = re.search(r"fixed\s+`dev`\s+\((\d+)\)\s+and\s+`test`\s+\((\d+)\)\s+splits", README)
    assert said is not None
    env = make("alfworld")
    try:
        assert (len(env.tasks("dev")), len(env.tasks("test"))) == tuple(map(int, said.groups()))
    finally:
        env.close()
