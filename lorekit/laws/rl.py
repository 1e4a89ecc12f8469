"""PPO on 27-action Crafter with a chosen reward: train, resume, evaluate, record.

One call of :func:`train` trains one reward variant for ``steps`` env steps
on each of several seeds, evaluates every trained policy on fresh worlds and
records the result three ways: a folder per seed (checkpoint, state, CSV log,
JSON summary), a JSON summary over the seeds, and a run in the run store
(env ``crafter``, agent ``ppo:<reward>``, one episode per evaluation episode).

Why the choices: the symbolic observation (one-hot, flat) trains much faster
than pixels on a CPU; torch gets one thread on a CPU because PPO's small
updates are slower with more (the threads fight the envs for the cores);
checkpoints are taken after an update and renamed into place, so a run killed
at any moment resumes from its last checkpoint and still stops at the same
total. Torch and stable-baselines3 come from the ``rl`` extra; importing this
module without them raises :class:`~lorekit.extras.MissingExtraError`.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from lorekit.extras import MissingExtraError, requires_extra
from lorekit.ids import new_run_id
from lorekit.laws.rl_config import (
    NET_ARCH,
    PPO_DEFAULTS,
    SB3_PIN,
    TORCH_PIN,
    TrainConfig,
    TrainError,
)
from lorekit.laws.rl_env import RewardBuilder, make_env, reward_builder

try:
    with requires_extra("PPO training (lorekit laws train)", "rl"):
        import torch
        from stable_baselines3 import PPO
        from stable_baselines3.common.callbacks import BaseCallback
        from stable_baselines3.common.logger import Logger
        from stable_baselines3.common.vec_env import (
            DummyVecEnv,
            SubprocVecEnv,
            VecEnv,
            VecMonitor,
        )
except MissingExtraError as exc:
    raise MissingExtraError(
        f"{exc} (without a GPU, first install torch=={TORCH_PIN}'s CPU build: docs/laws_rl.md)",
        module=exc.name,
        install=exc.install,
    ) from exc

from lorekit.laws.rl_callbacks import (
    AppendCsv,
    Checkpoint,
    CrafterStats,
    truncate_csv,
    write_json_atomic,
)
from lorekit.laws.rl_eval import aggregate, evaluate, mean_parts, score_episodes
from lorekit.laws.rl_record import EpisodeRecorder, RunRecorder

__all__ = [
    "NET_ARCH",
    "PPO_DEFAULTS",
    "SB3_PIN",
    "TORCH_PIN",
    "TrainConfig",
    "TrainError",
    "evaluate_seed",
    "pick_device",
    "train",
    "train_seed",
    "world_seeds",
]


def pick_device(device: str = "auto") -> str:
    """``cuda`` when asked or present (``auto``), else ``cpu`` with torch on one thread."""
    chosen = ("cuda" if torch.cuda.is_available() else "cpu") if device == "auto" else device
    if chosen == "cpu":
        torch.set_num_threads(1)
    return chosen


def world_seeds(vec: VecEnv, seed: int, resumes: int = 0) -> list[int]:
    """Give the training envs of ``seed`` their worlds: env i plays seed ``seed * 1000 + i``.

    Call it after building or loading the model: sb3 seeds the envs with
    ``seed + i`` when it does, which would give neighbouring training seeds
    the same worlds. The ``resumes``-th resume shifts by ``resumes * n_envs``
    so a resumed run goes on to worlds it has not played.
    """
    base = seed * 1000 + resumes * vec.num_envs
    return [int(s) for s in vec.seed(base) if s is not None]


def build_vec_env(config: TrainConfig, seed: int, builder: RewardBuilder) -> VecEnv:
    """``n_envs`` monitored training envs (their worlds are set by :func:`world_seeds`)."""
    fns: list[Callable[[], Any]] = [
        functools.partial(
            make_env,
            config.reward,
            seed * 1000 + i,
            config.obs,
            options=config.reward_options,
            length=config.length,
            builder=builder,
        )
        for i in range(config.n_envs)
    ]
    vec: VecEnv = SubprocVecEnv(fns) if config.vec == "subproc" else DummyVecEnv(fns)
    return VecMonitor(vec)


def _state(run_dir: Path) -> dict[str, Any] | None:
    path = run_dir / "state.json"
    if not path.exists():
        return None
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def _check_resumable(run_dir: Path, config: TrainConfig, seed: int, resume: bool) -> dict[str, Any]:
    state = _state(run_dir)
    if state is None:
        return {"seed": seed, "config": config.to_json(), "steps_done": 0, "resumed_from": []}
    if not resume:
        raise TrainError(
            f"{run_dir} already holds a run ({state['steps_done']:,} steps done): "
            "pass --resume to continue it, or choose another --out"
        )
    _same_config(run_dir, state["config"], config)
    return state


def _same_config(where: Path, saved: Mapping[str, Any], config: TrainConfig) -> None:
    wanted = config.to_json()
    diff = sorted(k for k in set(saved) | set(wanted) if saved.get(k) != wanted.get(k))
    if diff:
        fields = ", ".join(f"{k}={saved.get(k)!r}" for k in diff)
        raise TrainError(
            f"{where} was started with {fields}; resume it with the same options "
            "or choose another --out"
        )


def train_seed(
    config: TrainConfig,
    seed: int,
    run_dir: Path,
    *,
    resume: bool = False,
    device: str = "auto",
    report: Callable[[str], None] | None = None,
    callbacks: Sequence[BaseCallback] = (),
    tensorboard: bool = False,
) -> int:
    """Train (or finish training) one seed; returns the steps done. See :func:`train`."""
    builder = reward_builder(config.reward)
    run_dir.mkdir(parents=True, exist_ok=True)
    state = _check_resumable(run_dir, config, seed, resume)
    checkpoint, final = run_dir / "checkpoint.zip", run_dir / "model.zip"
    if final.exists():
        return int(state["steps_done"])
    chosen = pick_device(device)
    vec = build_vec_env(config, seed, builder)
    try:
        if checkpoint.exists():
            model = PPO.load(checkpoint, env=vec, device=chosen)
            state["resumed_from"].append(int(model.num_timesteps))
            truncate_csv(run_dir / "progress.csv", int(model.num_timesteps))
            if report is not None:
                report(f"{run_dir}: resuming at {model.num_timesteps:,} steps")
        else:
            policy = "MlpPolicy" if config.obs == "symbolic" else "CnnPolicy"
            kwargs: dict[str, Any] = {"net_arch": list(NET_ARCH)}
            if config.obs == "image":
                from lorekit.laws.rl_policy import image_policy_kwargs

                kwargs = image_policy_kwargs()
            model = PPO(
                policy,
                vec,
                seed=seed,
                device=chosen,
                verbose=0,
                policy_kwargs=kwargs,
                **config.ppo_kwargs(),
            )
        world_seeds(vec, seed, len(state["resumed_from"]))
        model.set_logger(_logger(run_dir, tensorboard))

        def saved(steps: int) -> None:
            state["steps_done"] = steps
            write_json_atomic(run_dir / "state.json", state)

        write_json_atomic(run_dir / "state.json", state)
        label = f"{config.reward} seed {seed}"
        stats = CrafterStats(config.steps, label, report)
        hooks: list[BaseCallback] = [
            Checkpoint(checkpoint, config.checkpoint_every, saved),
            stats,
            *callbacks,
        ]
        t0 = time.monotonic()
        model.learn(
            total_timesteps=max(config.steps - model.num_timesteps, 0),
            callback=hooks,
            reset_num_timesteps=False,
        )
        state["train_wall_s"] = state.get("train_wall_s", 0.0) + time.monotonic() - t0
        # the reward's parts per training episode, over the last 100 episodes
        state["train_reward_parts"] = mean_parts(stats.parts)
        tmp = final.with_name("model.tmp.zip")
        model.save(tmp)
        os.replace(tmp, final)
        saved(int(model.num_timesteps))
        return int(model.num_timesteps)
    finally:
        vec.close()


def _logger(run_dir: Path, tensorboard: bool) -> Logger:
    formats: list[Any] = [AppendCsv(run_dir / "progress.csv")]
    if tensorboard:
        from stable_baselines3.common.logger import TensorBoardOutputFormat

        try:
            formats.append(TensorBoardOutputFormat(str(run_dir / "tensorboard")))
        except AssertionError:
            raise TrainError(
                "--tensorboard needs the tensorboard package: pip install tensorboard"
            ) from None
    return Logger(str(run_dir), formats)


def evaluate_seed(
    config: TrainConfig,
    seed: int,
    run_dir: Path,
    *,
    device: str = "auto",
    store: RunRecorder | None = None,
    run_id: str | None = None,
) -> dict[str, Any]:
    """Evaluate the trained policy of one seed; writes ``summary.json`` in ``run_dir``."""
    builder = reward_builder(config.reward)
    model = PPO.load(run_dir / "model.zip", device=pick_device(device))
    torch.manual_seed(seed)

    def predict(batch: Any) -> Any:
        actions, _ = model.predict(batch, deterministic=False)
        return actions

    def make(slot: int) -> Any:
        return make_env(
            config.reward,
            seed,
            config.obs,
            options=config.reward_options,
            length=config.length,
            builder=builder,
        )

    def writer(index: int, world: int) -> EpisodeRecorder | None:
        if store is None or run_id is None:
            return None
        key = f"seed{seed}/ep{index:03d}"
        return store.episode(
            run_id,
            key,
            index=seed * 10_000 + index,
            task_id=key,
            task_group=f"seed{seed}",
            seed=world,
        )

    episodes = evaluate(
        predict, make, seed=seed, episodes=config.eval_episodes, slots=config.n_envs, writer=writer
    )
    state = _state(run_dir) or {}
    summary = {
        "seed": seed,
        "reward": config.reward,
        "steps": state.get("steps_done"),
        "resumed_from": state.get("resumed_from", []),
        "train_wall_s": state.get("train_wall_s"),
        "train_reward_parts": state.get("train_reward_parts", {}),
        **score_episodes(episodes),
        "episode_summaries": episodes,
    }
    write_json_atomic(run_dir / "summary.json", summary)
    return summary


def train(
    config: TrainConfig,
    seeds: Sequence[int],
    out: Path,
    *,
    resume: bool = False,
    device: str = "auto",
    open_store: Callable[[], RunRecorder] | None = None,
    report: Callable[[str], None] | None = None,
    callbacks: Sequence[BaseCallback] = (),
    tensorboard: bool = False,
) -> dict[str, Any]:
    """Train and evaluate ``config.reward`` on each seed; returns the summary over seeds.

    Files go to ``out/<reward>/`` (``run.json``, ``summary.json`` and one
    ``seed-<k>/`` folder per seed); the evaluation episodes go to the run
    store that ``open_store()`` opens (skipped when None), e.g.
    ``functools.partial(RunStore, path)``: the caller picks the store, so this
    module stays below the harness. It is opened once the arguments are known
    to be good, and closed before returning. With ``resume`` a killed or
    interrupted call continues where it stopped: seeds already evaluated are
    kept, a seed in training restarts from its last checkpoint.
    """
    if not seeds:
        raise TrainError("give at least one seed")
    if tensorboard and importlib.util.find_spec("tensorboard") is None:
        raise TrainError("--tensorboard needs the tensorboard package: pip install tensorboard")
    # An unknown or unplugged reward, or options it rejects, fail before any file is written.
    make_env(
        config.reward, 0, config.obs, options=config.reward_options, length=config.length
    ).close()
    out_dir = out / config.reward
    run_file = out_dir / "run.json"
    if run_file.exists():
        if not resume:
            raise TrainError(
                f"{out_dir} already holds a run: pass --resume to continue it, "
                "or choose another --out"
            )
        run = json.loads(run_file.read_text())
        if list(run["seeds"]) != list(seeds):
            raise TrainError(f"{out_dir} was started with seeds {run['seeds']}; resume with those")
        _same_config(out_dir, run["config"], config)
    else:
        out_dir.mkdir(parents=True, exist_ok=True)
        run = {"run_id": new_run_id(), "seeds": list(seeds), "config": config.to_json()}
        write_json_atomic(run_file, run)
    store = open_store() if open_store is not None else None
    run_id: str = run["run_id"]
    try:
        if store is not None:
            store.create_run(
                run_id,
                env="crafter",
                agent=f"ppo:{config.reward}",
                config={**config.to_json(), "seeds": list(seeds)},
                meta={"out": str(out_dir), "episodes": len(seeds) * config.eval_episodes},
            )
            store.set_run_status(run_id, "running")
        summaries = []
        for seed in seeds:
            seed_dir = out_dir / f"seed-{seed}"
            done = seed_dir / "summary.json"
            _check_resumable(seed_dir, config, seed, resume)
            if done.exists():
                summaries.append(json.loads(done.read_text()))
                continue
            train_seed(
                config,
                seed,
                seed_dir,
                resume=True,
                device=device,
                report=report,
                callbacks=callbacks,
                tensorboard=tensorboard,
            )
            if report is not None:
                report(f"{config.reward} seed {seed}: evaluating {config.eval_episodes} episodes")
            summaries.append(
                evaluate_seed(config, seed, seed_dir, device=device, store=store, run_id=run_id)
            )
        result = {
            **aggregate(config.reward, summaries),
            "run_id": run_id,
            "out": str(out_dir),
            "store": None if store is None else str(store.path),
            "config": config.to_json(),
        }
        write_json_atomic(out_dir / "summary.json", result)
        if store is not None:
            store.set_run_status(
                run_id, "finished", {k: v for k, v in result.items() if k != "config"}
            )
        return result
    except BaseException:
        if store is not None:
            store.set_run_status(run_id, "interrupted")
        raise
    finally:
        if store is not None:
            store.close()
