"""Helpers shared by the SPRING tests (fixtures are in conftest.py)."""

from __future__ import annotations

from lorekit.envs.base import Task
from lorekit.envs.crafter import CrafterTextEnv


def task_of(env: CrafterTextEnv, task_id: str = "collect_wood/seed-0") -> Task:
    return next(t for t in env.tasks() if t.id == task_id)
