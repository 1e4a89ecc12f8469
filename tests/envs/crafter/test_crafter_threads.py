"""Building Crafter worlds leaves process-wide thread settings alone.

Each check runs in a fresh interpreter, so that nothing this test session did
before (numba's threading layer, OpenMP) hides or fakes a change. OpenMP is
checked through libgomp, the runtime numba's OpenMP layer and many torch
builds share; torch itself only when it is installed.
"""

from __future__ import annotations

import json
import subprocess
import sys

_PROBE = r"""
import ctypes, ctypes.util, json
try:
    gomp = ctypes.CDLL(ctypes.util.find_library("gomp") or "libgomp.so.1")
    gomp.omp_set_num_threads(1)
except OSError:
    gomp = None
try:
    import torch
    torch.set_num_threads(1)
except ImportError:
    torch = None
import numba
numba.set_num_threads(1)
after_numba_start = gomp.omp_get_max_threads() if gomp else None
if gomp:
    gomp.omp_set_num_threads(1)  # starting numba's layer may set it; we test what we do

from lorekit.envs import make
env = make("crafter")
for seed in range(3):
    env.reset(seed=seed)
    env.step("noop")
print(json.dumps({
    "omp": gomp.omp_get_max_threads() if gomp else None,
    "torch": torch.get_num_threads() if torch else None,
    "numba": numba.get_num_threads(),
}))
"""

_FRESH_PROBE = r"""
import ctypes, ctypes.util, json
try:
    gomp = ctypes.CDLL(ctypes.util.find_library("gomp") or "libgomp.so.1")
    gomp.omp_set_num_threads(1)
except OSError:
    gomp = None
from lorekit.envs import make
env = make("crafter")
env.reset(seed=0)
print(json.dumps({"omp": gomp.omp_get_max_threads() if gomp else None}))
"""


def _run(code: str) -> dict[str, int | None]:
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def test_world_generation_keeps_numba_torch_and_openmp_thread_counts() -> None:
    seen = _run(_PROBE)
    assert seen["numba"] == 1
    assert seen["omp"] in (None, 1)
    assert seen["torch"] in (None, 1)


def test_world_generation_does_not_start_numbas_parallel_layer() -> None:
    # Starting numba's OpenMP layer resets the process's OpenMP thread count
    # (torch's too, where torch shares the runtime); generation must not do it.
    assert _run(_FRESH_PROBE)["omp"] in (None, 1)
