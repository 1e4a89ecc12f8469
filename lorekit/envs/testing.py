"""An env whose calls block, for testing and measuring the harness.

:class:`SleepyEnv` stands in for a browser or a slow simulator: each call
takes a set time, either waiting (``time.sleep``: the thread blocks, the GIL
is free, like I/O) or spinning (the GIL is held, like pure-Python CPU work).
Tasks listed in ``hang_tasks`` make a step block for ``hang_s``, a hung call.
Every observation's ``info`` says which process and thread served the call,
so tests can check where the env runs. It is not registered by default;
tests and benchmarks register it under the execution they want to exercise.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable
from typing import Any

from lorekit.envs.base import Observation, Step, Task, TextEnv


def _block(seconds: float, spin: bool) -> None:
    if not spin:
        time.sleep(seconds)
        return
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


class SleepyEnv(TextEnv):
    """``steps`` actions of ``wait`` win an episode; each call takes its time."""

    name = "sleepy"

    def __init__(
        self,
        *,
        step_s: float = 0.05,
        steps: int = 20,
        reset_s: float = 0.0,
        build_s: float = 0.0,
        hang_tasks: Iterable[str] = (),
        hang_s: float = 3600.0,
        spin: bool = False,
        n_tasks: int = 16,
    ) -> None:
        _block(build_s, spin)
        self.step_s, self.reset_s, self.hang_s, self.spin = step_s, reset_s, hang_s, spin
        self.steps = steps
        self.max_steps = steps
        self.hang_tasks = frozenset(hang_tasks)
        self.n_tasks = n_tasks
        self.built_on = threading.get_ident()
        self.resets = 0
        self._task: Task | None = None
        self._done = 0
        self.spans: list[tuple[float, float]] = []
        """(start, end) of each step's wait, on the monotonic clock: whether envs'
        calls overlapped is read from these, not from how long a run took."""

    def _where(self) -> dict[str, Any]:
        return {"pid": os.getpid(), "thread": threading.get_ident()}

    def reset(self, task: Task | str | None = None, seed: int | None = None) -> Observation:
        _block(self.reset_s, self.spin)
        catalogue = self.tasks()
        if isinstance(task, str):
            task = next((t for t in catalogue if t.id == task), None)
        self._task = task or catalogue[(seed or 0) % len(catalogue)]
        self._done = 0
        self.resets += 1
        return Observation(f"Say 'wait' {self.steps} times.", self._where())

    def step(self, action: str) -> Step:
        if self._task is None:
            return Step("Reset first.", 0.0, False, {"valid": False, **self._where()})
        hang = self._task.id in self.hang_tasks
        start = time.monotonic()
        _block(self.hang_s if hang else self.step_s, self.spin)
        self.spans.append((start, time.monotonic()))
        if action.strip() != "wait":
            return Step("Only 'wait' works here.", 0.0, False, {"valid": False, **self._where()})
        self._done += 1
        done = self._done >= self.steps
        info = {"valid": True, "success": done, **self._where()}
        return Step(f"waited {self._done}", 1.0 if done else 0.0, done, info)

    def tasks(self, split: str = "test") -> list[Task]:
        return [Task(f"sleepy-{i}", f"wait {self.steps} times", "all") for i in range(self.n_tasks)]

    def splits(self) -> tuple[str, ...]:
        return ("test",)

    def action_forms(self) -> list[str]:
        return ["wait"]

    def manual(self) -> str:
        return "Each 'wait' takes a while; enough of them win."

    def expert_action(self) -> str | None:
        return "wait"

    def candidate_actions(self) -> list[str]:
        return ["wait"]
