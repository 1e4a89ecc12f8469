"""A run store that stresses the report's layout: long task-group names, long run ids,
two runs on different splits and with different models, and a first run that made no
model calls (so a chart that leaves it out must not shift the others' colours)."""

from __future__ import annotations

import random
from pathlib import Path

from lorekit.eval.store import RunStore
from lorekit.llm.base import Completion, Message, RequestParams, Usage
from lorekit.llm.calls import CallRecord

GROUPS = [
    "put-two-objects-in-one-receptacle-hard",
    "look-at-object-under-the-desk-lamp",
    "heat-then-place-in-the-refrigerator",
    "clean-and-place-on-the-countertop",
    "depth-1",
    "pick-two-objects-and-place-them-in-a-drawer",
    "cool-and-place-anywhere-in-the-kitchen",
]
#: (run id, split, model); the first run makes no model calls
RUNS = [
    ("oracle-baseline-on-the-development-split-of-generated-games", "dev", None),
    ("react-with-the-large-local-model-and-a-long-descriptive-run-id", "test", "big-model-70b"),
    ("adapt-depth-three-with-the-small-model-long-name", "test", "small-model-8b"),
]


def _call(model: str, latency: float) -> CallRecord:
    return CallRecord(
        role="executor",
        model=model,
        messages=(Message("user", "Goal: craft"),),
        params=RequestParams(),
        started_at=0.0,
        latency_s=latency,
        completion=Completion("Action: wait", Usage(10, 2, True), model=model, latency_s=latency),
    )


def layout_store(path: Path) -> list[str]:
    """Write the runs to the store at ``path``; returns their ids in page order."""
    rng = random.Random(3)
    with RunStore(path) as store:
        for r, (run_id, split, model) in enumerate(RUNS):
            config = {"split": split, "env_kwargs": {}}
            store.create_run(run_id, env="alfworld", agent=run_id.split("-")[0], config=config)
            for i, group in enumerate(GROUPS * 2):
                key = f"{group}/{i}"
                with store.episode(run_id, key, index=i, task_id=key, task_group=group) as ep:
                    ep.add_step("You are in the middle of a room.", "look")
                    if model:
                        for _ in range(3):
                            ep.add_llm_call(_call(model, rng.lognormvariate(-2 - r, 0.5)))
                    ep.finish(success=(i + r) % 3 != 0, reward=1.0)
    return [run_id for run_id, _, _ in RUNS]


Quad = list[tuple[float, float]]


def quads_overlap(a: Quad, b: Quad, gap: float = 0.5) -> bool:
    """Whether two convex quadrilaterals overlap by more than ``gap`` px (separating axes)."""
    for quad in (a, b):
        for i in range(4):
            (x1, y1), (x2, y2) = quad[i], quad[(i + 1) % 4]
            nx, ny = y1 - y2, x2 - x1
            norm = (nx * nx + ny * ny) ** 0.5 or 1.0
            nx, ny = nx / norm, ny / norm
            pa = [x * nx + y * ny for x, y in a]
            pb = [x * nx + y * ny for x, y in b]
            if max(pa) - gap <= min(pb) or max(pb) - gap <= min(pa):
                return False
    return True


def overlapping(quads: list[Quad]) -> list[tuple[int, int]]:
    return [
        (i, j)
        for i in range(len(quads))
        for j in range(i + 1, len(quads))
        if quads_overlap(quads[i], quads[j])
    ]
