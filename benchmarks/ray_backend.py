"""The same run on the local backend and on Ray actors, side by side.

64 Crafter episodes (ReAct, 10 turns each) against a scripted model with a
fixed 200 ms latency, at the same concurrency, are played once by the local
backend and once by a local Ray cluster with 2 actors. Prints wall times, the
cluster's start-up cost (paid once per run) and the overhead per episode.

    python benchmarks/ray_backend.py [--episodes 64] [--turns 10] [--latency 0.2] [-j 8]

Needs the ``ray`` extra (``pip install -e '.[ray]'``) and crafter.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import tempfile
import time
from pathlib import Path

from lorekit.agents import make_agent
from lorekit.config import ModelSettings, RunConfig, build_roles
from lorekit.envs import EnvSpec, make
from lorekit.eval.ray_backend import ClusterLimits, RayBackend
from lorekit.eval.remote import HostRecipe
from lorekit.eval.runner import EvalResult, plan_episodes, run_eval
from lorekit.eval.store import RunStore


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=64)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("-j", "--concurrency", type=int, default=8)
    parser.add_argument("--actors", type=int, default=2)
    args = parser.parse_args()
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

    cfg = RunConfig(
        roles={
            "default": ModelSettings(
                provider="scripted", model="sim", latency_s=args.latency,
                answers=["Thought: keep exploring\nAction: move_left"],
            )
        },
        cache={"mode": "off"},
    )  # fmt: skip
    env = EnvSpec("crafter", {})
    agent = functools.partial(make_agent, "react", max_turns=args.turns)
    tasks = make("crafter").tasks("test")
    episodes = plan_episodes(tasks, repeats=args.episodes // len(tasks) + 1)[: args.episodes]
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "bench.sqlite3"
        with RunStore(store) as db:
            local = _run(db, "local", env, agent(), cfg, episodes, args.concurrency, None)
            t0 = time.perf_counter()
            recipe = HostRecipe(
                env, agent, functools.partial(build_roles, cfg, limiter_factory=ClusterLimits())
            )
            per_actor = -(-args.concurrency // args.actors)
            ray_backend = RayBackend(recipe, actors=args.actors, per_actor=per_actor)
            ray_backend.start()
            startup = time.perf_counter() - t0
            try:
                ray = _run(db, "ray", env, agent(), cfg, episodes, args.concurrency, ray_backend)
            finally:
                ray_backend.close()
            steps = [sum(e.steps for e in db.episodes(rid)) for rid in ("local", "ray")]

    n = args.episodes
    floor = args.turns * args.latency * n / args.concurrency
    print(f"{n} crafter episodes x {args.turns} ReAct turns, model latency "
          f"{args.latency * 1000:.0f} ms, concurrency {args.concurrency}")  # fmt: skip
    print(f"lower bound from model latency alone: {floor:.2f} s")
    print(f"{'backend':<22}{'wall s':>9}{'episodes/s':>12}{'steps':>8}{'vs local':>10}")
    for name, res, nsteps in (
        ("local", local, steps[0]),
        (f"ray ({args.actors} actors)", ray, steps[1]),
    ):
        print(f"{name:<22}{res.wall_s:>9.2f}{n / res.wall_s:>12.2f}{nsteps:>8}"
              f"{res.wall_s / local.wall_s:>9.2f}x")  # fmt: skip
    print(f"ray cluster start + actors: {startup:.2f} s (once per run)")
    print(f"overhead per episode on ray: {(ray.wall_s - local.wall_s) / n * 1000:+.1f} ms")


def _run(
    db: RunStore,
    run_id: str,
    env: EnvSpec,
    agent: object,
    cfg: RunConfig,
    episodes: list,  # type: ignore[type-arg]
    concurrency: int,
    backend: RayBackend | None,
) -> EvalResult:
    return asyncio.run(
        run_eval(
            db,
            env_factory=env,
            agent=agent,  # type: ignore[arg-type]
            roles=build_roles(cfg),
            episodes=episodes,
            run_id=run_id,
            concurrency=concurrency,
            backend=backend,
        )
    )


if __name__ == "__main__":
    main()
