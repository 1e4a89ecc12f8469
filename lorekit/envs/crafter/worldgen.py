"""Fast world generation that reproduces crafter's worlds exactly.

Crafter builds a world cell by cell, calling OpenSimplex noise a dozen times
per cell from Python and drawing from the world's ``RandomState`` only when a
noise test passes. We evaluate every noise field for the whole map at once
(opensimplex's noise function in a jitted loop over the grid), then run
the cell-by-cell decisions in a small jitted loop that reads uniforms from a
pre-drawn buffer. Afterwards the ``RandomState`` is advanced by exactly the
number of uniforms crafter would have drawn, so the rest of the episode sees
the same random stream. For a given world seed the materials, tunnels and
creatures equal those of ``crafter.worldgen.generate_world`` (tested).

Everything here runs serially on the calling thread, and nothing touches a
process-wide setting. opensimplex's own array noise is a numba ``parallel``
loop: calling it starts numba's threading layer, which (with OpenMP) resets
the OpenMP thread count of the whole process, torch's included. We evaluate
the same noise function in a serial jitted loop instead (same values).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
import opensimplex
from opensimplex.internals import _noise3 as _simplex_noise3

from lorekit.cachedir import user_cache_dir

# Material codes used inside the jitted loop; mapped to the world's ids later.
WATER, GRASS, STONE, PATH, SAND, TREE, LAVA, COAL, IRON, DIAMOND = range(10)
CODE_NAMES = ("water", "grass", "stone", "path", "sand", "tree", "lava", "coal", "iron", "diamond")
COW, ZOMBIE, SKELETON = 1, 2, 3

try:
    import numba
except ImportError:  # pragma: no cover - exercised only without numba
    numba = None  # type: ignore[assignment]

HAVE_NUMBA = numba is not None
F = TypeVar("F", bound=Callable[..., Any])


def numba_cache_dir() -> str:
    """Where the compiled worldgen functions are cached: the user's own
    ``NUMBA_CACHE_DIR`` when set, else ``$XDG_CACHE_HOME/lorekit/numba`` (by
    default ``~/.cache/lorekit/numba``).

    numba's default is a ``__pycache__`` folder beside the source, i.e. inside
    the installed package: that modifies an install (a system or shared one, a
    container image) or, where it is read-only, costs a failed write first."""
    own = os.environ.get("NUMBA_CACHE_DIR", "")
    if own:
        return own
    return str(user_cache_dir("numba"))


def _jit(fn: F) -> F:
    """numba-compile ``fn``, cached on disk under :func:`numba_cache_dir`.

    numba decides where a function's cache lives when the function is decorated,
    from ``numba.config.CACHE_DIR``; it is set for our decorations only and put
    back, so no other numba user in the process sees a changed setting."""
    if numba is None:  # pragma: no cover
        return fn
    config: Any = numba.config
    saved = config.CACHE_DIR
    config.CACHE_DIR = saved or numba_cache_dir()
    try:
        compiled: Any = numba.njit(cache=True)(fn)
    finally:
        config.CACHE_DIR = saved
    return compiled  # type: ignore[no-any-return]


_warned = {"numba": False}


def _warn_once() -> None:
    if not HAVE_NUMBA and not _warned["numba"]:
        _warned["numba"] = True
        warnings.warn(
            "numba is not installed: Crafter world generation falls back to pure Python "
            "(same worlds, about as slow as crafter's own); install lorekit[crafter]",
            RuntimeWarning,
            stacklevel=3,
        )


@_jit
def _decide_materials(fields: Any, rand: Any) -> Any:
    """Crafter's per-cell material rules, in crafter's x-major order.

    ``fields`` stacks (start, water, mountain, cave, htunnel, vtunnel, coal,
    iron, lava, sand, tree) noise values; ``rand`` holds enough uniforms.
    Returns codes, tunnel mask and how many uniforms were consumed.
    """
    width, height = fields.shape[1], fields.shape[2]
    codes = np.zeros((width, height), np.uint8)
    tunnels = np.zeros((width, height), np.bool_)
    used = 0
    for x in range(width):
        for y in range(height):
            start = fields[0, x, y]
            water = fields[1, x, y]
            mountain = fields[2, x, y]
            code = GRASS
            if start > 0.5:
                code = GRASS
            elif mountain > 0.15:
                if fields[3, x, y] > 0.15 and mountain > 0.3:
                    code = PATH
                elif fields[4, x, y] > 0.4 or fields[5, x, y] > 0.4:  # tunnels
                    code = PATH
                    tunnels[x, y] = True
                else:
                    code = STONE
                    done = False
                    if fields[6, x, y] > 0:
                        used += 1
                        if rand[used - 1] > 0.85:
                            code = COAL
                            done = True
                    if not done and fields[7, x, y] > 0.4:
                        used += 1
                        if rand[used - 1] > 0.75:
                            code = IRON
                            done = True
                    if not done and mountain > 0.18:
                        used += 1
                        if rand[used - 1] > 0.994:
                            code = DIAMOND
                            done = True
                    if not done and mountain > 0.3 and fields[8, x, y] > 0.35:
                        code = LAVA
            elif 0.25 < water <= 0.35 and fields[9, x, y] > -0.2:
                code = SAND
            elif water > 0.3:
                code = WATER
            elif fields[10, x, y] > 0:
                used += 1
                if rand[used - 1] > 0.8:
                    code = TREE
            codes[x, y] = code
    return codes, tunnels, used


@_jit
def _decide_creatures(codes: Any, tunnels: Any, dist: Any, rand: Any) -> Any:
    """Crafter's initial cows, zombies and skeletons: rows of (kind, x, y)."""
    width, height = codes.shape
    found = np.zeros((width * height, 3), np.int64)
    count = 0
    used = 0
    for x in range(width):
        for y in range(height):
            code = codes[x, y]
            if code != GRASS and code != SAND and code != PATH:
                continue
            kind = 0
            placed = False
            if dist[x, y] > 3 and code == GRASS:
                used += 1
                if rand[used - 1] > 0.985:
                    kind = COW
                    placed = True
            if not placed and dist[x, y] > 10:
                used += 1
                if rand[used - 1] > 0.993:
                    kind = ZOMBIE
                    placed = True
            if not placed and code == PATH and tunnels[x, y]:
                used += 1
                if rand[used - 1] > 0.95:
                    kind = SKELETON
            if kind:
                found[count, 0] = kind
                found[count, 1] = x
                found[count, 2] = y
                count += 1
    return found[:count], used


@_jit
def _noise3_grid(x: Any, y: Any, z: Any, perm: Any, perm_grad_index3: Any) -> Any:
    """``OpenSimplex.noise3array`` as a serial loop, indexed [z, y, x] like it."""
    out = np.empty((z.size, y.size, x.size), dtype=np.double)
    for k in range(z.size):
        for j in range(y.size):
            for i in range(x.size):
                out[k, j, i] = _simplex_noise3(x[i], y[j], z[k], perm, perm_grad_index3)
    return out


@dataclass(frozen=True)
class GeneratedWorld:
    """Materials by name index (``CODE_NAMES``), tunnels and creatures."""

    codes: np.ndarray
    tunnels: np.ndarray
    creatures: np.ndarray  # rows of (kind, x, y): COW, ZOMBIE or SKELETON


def _fields(simplex: opensimplex.OpenSimplex, width: int, height: int, center: Any) -> np.ndarray:
    """Every noise field crafter asks for, with crafter's exact arithmetic."""
    xs = np.arange(width)
    ys = np.arange(height)

    def noise(xv: np.ndarray, yv: np.ndarray, z: float) -> np.ndarray:
        # the grid is [z, y, x]; we index [x, y] like crafter.
        grid = _noise3_grid(
            np.ascontiguousarray(xv, np.float64),
            np.ascontiguousarray(yv, np.float64),
            np.array([z], np.float64),
            simplex._perm,
            simplex._perm_grad_index3,
        )
        return np.asarray(grid[0].T)

    def plain(size: float, z: float) -> np.ndarray:
        return noise(xs / size, ys / size, z)

    dx = (xs - center[0])[:, None] ** 2
    dy = (ys - center[1])[None, :] ** 2
    start = 4 - np.sqrt(dx + dy)
    start = start + 2 * plain(3, 8)
    start = 1 / (1 + np.exp(-start))
    water = (1 * plain(15, 3) + 0.15 * plain(5, 3)) + 0.1
    water = water - 2 * start
    mountain = (1 * plain(15, 0) + 0.3 * plain(5, 0)) / (1 + 0.3)
    mountain = mountain - (4 * start + 0.3 * water)
    return np.stack(
        [
            start,
            water,
            mountain,
            plain(7, 6),
            noise((2 * xs) / 3, (ys / 5) / 3, 7),
            noise((xs / 5) / 3, (2 * ys) / 3, 7),
            plain(8, 1),
            plain(6, 2),
            plain(5, 6),
            plain(9, 4),
            plain(7, 5),
        ]
    )


def _draw(random: np.random.RandomState, upper: int, run: Callable[[np.ndarray], Any]) -> Any:
    """Run ``run`` on ``upper`` pre-drawn uniforms, then advance ``random`` by
    exactly the number it used (the last item of its result)."""
    state = random.get_state()
    result = run(random.random_sample(upper))
    random.set_state(state)
    used = int(result[-1])
    if used:
        random.random_sample(used)
    return result


def generate(random: np.random.RandomState, area: tuple[int, int], center: Any) -> GeneratedWorld:
    """Generate a world from ``random`` (the world's RandomState), like crafter."""
    _warn_once()
    width, height = int(area[0]), int(area[1])
    simplex = opensimplex.OpenSimplex(seed=random.randint(0, 2**31 - 1))
    fields = _fields(simplex, width, height, center)
    codes, tunnels, _ = _draw(
        random, 3 * width * height, lambda rand: _decide_materials(fields, rand)
    )
    xs = np.arange(width)[:, None]
    ys = np.arange(height)[None, :]
    dist = np.sqrt((xs - center[0]) ** 2 + (ys - center[1]) ** 2)
    creatures, _ = _draw(
        random, 3 * width * height, lambda rand: _decide_creatures(codes, tunnels, dist, rand)
    )
    return GeneratedWorld(codes, tunnels, creatures)


def warm_up() -> None:
    """Compile (or load from numba's cache) everything generation needs."""
    generate(np.random.RandomState(0), (16, 16), (8, 8))


def spawn_ok(codes: np.ndarray, center: Any) -> bool:
    """Whether the spawn cell is grass, as crafter's start area guarantees."""
    return bool(codes[int(center[0]), int(center[1])] == GRASS)


__all__ = ["CODE_NAMES", "COW", "HAVE_NUMBA", "SKELETON", "ZOMBIE", "GeneratedWorld", "generate"]
