"""ADaPT's TextCraft bridge checks sub-tasks against the inventory in both modes."""

from __future__ import annotations

import pytest

from lorekit.agents.adapt.bridge import TextCraftBridge
from lorekit.envs import make
from lorekit.envs.textcraft.sources import DEFAULT_DATAPACK_DIR


@pytest.mark.skipif(not DEFAULT_DATAPACK_DIR.is_dir(), reason="compat mode needs the data pack")
def test_compat_pseudo_items_count_for_their_subtask() -> None:
    env = make("textcraft", source="datapack", compat=True, max_steps=None)
    env.reset(env.tasks("adapt-200")[0])
    bridge = TextCraftBridge()
    assert bridge.check_subtask(env, "get 2 oak logs") is False
    assert env.step("get 2 oak logs").observation == "Got 2 oak logs"
    assert bridge.check_subtask(env, "get 2 oak logs") is True  # the original's pseudo-item
    assert bridge.check_subtask(env, "get 3 oak logs") is False
    assert env.step("get 1 oak log").observation == "Got 1 oak log"
    assert bridge.check_subtask(env, "get 1 oak log") is True
    assert bridge.check_subtask(env, "get 3 oak logs") is True  # a log is one of the oak logs


def test_friendly_category_members_count_once() -> None:
    env = make("textcraft")
    env.reset(next(t for t in env.tasks("test") if t.data.get("item") == "wooden_pickaxe"))
    bridge = TextCraftBridge()
    env.step("get 2 oak log")
    assert bridge.check_subtask(env, "get 2 oak logs") is True
    assert bridge.check_subtask(env, "get 3 oak logs") is False
