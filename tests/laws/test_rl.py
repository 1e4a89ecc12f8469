"""PPO training: tiny runs, checkpoints, resume after SIGKILL, the command line.

Needs the ``rl`` extra (torch, stable-baselines3), which the ``test`` extra
deliberately leaves out to keep CI light: without it this whole file is
skipped. The envs and evaluation are tested without torch in ``test_rl_env.py``.
"""

from __future__ import annotations

import csv
import functools
import json
import os
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

pytest.importorskip("torch")
pytest.importorskip("stable_baselines3")

from stable_baselines3.common.callbacks import BaseCallback

from lorekit.envs.crafter import worldgen
from lorekit.eval.store import RunStore
from lorekit.laws import rl
from lorekit.laws.rl import TrainConfig, TrainError, train
from lorekit.laws.rl_callbacks import AppendCsv, truncate_csv

ROOT = Path(__file__).resolve().parents[2]
TINY_PPO = {"n_steps": 64, "batch_size": 64, "n_epochs": 1}


@pytest.fixture(scope="module", autouse=True)
def _warm() -> None:
    worldgen.warm_up()


def tiny(**changes: Any) -> TrainConfig:
    base: dict[str, Any] = {
        "reward": "crafter",
        "steps": 256,
        "n_envs": 2,
        "checkpoint_every": 128,
        "eval_episodes": 2,
        "length": 60,
        "ppo": TINY_PPO,
    }
    return TrainConfig(**{**base, **changes})


def _csv_steps(path: Path) -> list[int]:
    with path.open(newline="") as f:
        return [int(row["time/total_timesteps"]) for row in csv.DictReader(f)]


def test_installed_stack_is_the_pinned_one() -> None:
    import stable_baselines3
    import torch

    rl_extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]["rl"]
    assert f"torch=={rl.TORCH_PIN}" in rl_extra
    assert f"stable-baselines3=={rl.SB3_PIN}" in rl_extra
    assert torch.__version__.split("+")[0] == rl.TORCH_PIN
    assert stable_baselines3.__version__ == rl.SB3_PIN


def test_cpu_device_runs_torch_on_one_thread() -> None:
    import torch

    assert rl.pick_device("cpu") == "cpu"
    assert torch.get_num_threads() == 1


def test_training_seeds_play_their_own_worlds() -> None:
    import numpy as np
    from stable_baselines3 import PPO

    from lorekit.laws.rl_env import make_env, reward_builder

    config = tiny()
    first_obs = {}
    for seed in (0, 1):
        vec = rl.build_vec_env(config, seed, reward_builder("crafter"))
        PPO("MlpPolicy", vec, seed=seed, **TINY_PPO)  # sb3 seeds the envs with seed + i
        assert rl.world_seeds(vec, seed) == [seed * 1000, seed * 1000 + 1]
        first_obs[seed] = vec.reset()
        for i in range(2):
            alone, _ = make_env("crafter", seed * 1000 + i, length=60).reset()
            assert np.array_equal(first_obs[seed][i], alone)
        assert rl.world_seeds(vec, seed, resumes=1) == [seed * 1000 + 2, seed * 1000 + 3]
        vec.close()
    assert not np.array_equal(first_obs[0][1], first_obs[1][0])  # sb3 alone would repeat it


def test_a_tiny_run_trains_evaluates_and_records(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite3"
    result = train(
        tiny(reward="health"),
        [0, 1],
        tmp_path / "out",
        open_store=functools.partial(RunStore, store),
    )
    folder = tmp_path / "out" / "health"
    assert result["seeds"] == [0, 1] and len(result["scores"]) == 2
    assert result["score_se"] is not None and 0 <= result["score_mean"] <= 100
    assert json.loads((folder / "summary.json").read_text())["run_id"] == result["run_id"]
    for seed in (0, 1):
        seed_dir = folder / f"seed-{seed}"
        assert json.loads((seed_dir / "state.json").read_text())["steps_done"] == 256
        assert (seed_dir / "model.zip").exists()
        assert _csv_steps(seed_dir / "progress.csv") == [128, 256]
        summary = json.loads((seed_dir / "summary.json").read_text())
        assert summary["episodes"] == 2 and len(summary["episode_summaries"]) == 2
    with RunStore.open_readonly(store) as db:
        (run,) = db.list_runs()
        assert (run.env, run.agent, run.status) == ("crafter", "ppo:health", "finished")
        episodes = db.episodes(run.run_id)
        assert len(episodes) == 4
        assert all(1 <= e.steps <= 60 for e in episodes)


def test_reward_parts_are_logged_in_csv_summary_and_store(tmp_path: Path) -> None:
    # bonus, penalty and health per episode show why a law reward steers PPO
    store = tmp_path / "runs.sqlite3"
    result = train(
        tiny(reward="oracle", steps=256, length=40),
        [0],
        tmp_path / "out",
        open_store=functools.partial(RunStore, store),
    )
    seed_dir = tmp_path / "out" / "oracle" / "seed-0"
    with (seed_dir / "progress.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert all(k in rows[-1] for k in ("reward/laws", "reward/penalty", "reward/health"))
    assert float(rows[-1]["reward/penalty"]) < 0  # a fresh policy makes blind choices
    summary = json.loads((seed_dir / "summary.json").read_text())
    parts = summary["episode_summaries"][0]["reward_parts"]
    assert set(parts) >= {"laws", "penalty", "health"} and parts["penalty"] <= 0
    assert summary["train_reward_parts"]["penalty"] < 0
    assert set(summary["reward_parts_mean"]) == set(parts)
    assert set(result["reward_parts_mean"]) == set(parts)
    assert result["train_reward_parts_mean"]["penalty"] < 0
    with RunStore.open_readonly(store) as db:
        (run,) = db.list_runs()
        infos = [e.info for e in db.episodes(run.run_id)]
        assert all(info is not None and "reward_parts" in info for info in infos)
        assert run.summary is not None and run.summary["train_reward_parts_mean"]["penalty"] < 0


def test_a_finished_run_needs_resume_and_the_same_options(tmp_path: Path) -> None:
    train(tiny(), [0], tmp_path)
    with pytest.raises(TrainError, match="pass --resume"):
        train(tiny(), [0], tmp_path)
    again = train(tiny(), [0], tmp_path, resume=True)  # nothing left to do: same result
    assert again["scores"] == json.loads((tmp_path / "crafter/summary.json").read_text())["scores"]
    with pytest.raises(TrainError, match="seeds"):
        train(tiny(), [0, 1], tmp_path, resume=True)
    with pytest.raises(TrainError, match="steps=256"):  # even with every seed done
        train(tiny(steps=512), [0], tmp_path, resume=True)
    (tmp_path / "crafter" / "run.json").unlink()  # the seed's own state still says it
    with pytest.raises(TrainError, match=r"seed-0 was started with .*steps=256"):
        train(tiny(steps=512), [0], tmp_path, resume=True)


def test_image_observations_train_a_cnn(tmp_path: Path) -> None:
    result = train(tiny(obs="image", steps=128, eval_episodes=1, length=30), [0], tmp_path)
    assert result["config"]["obs"] == "image"
    from stable_baselines3 import PPO

    model = PPO.load(tmp_path / "crafter" / "seed-0" / "model.zip")
    assert type(model.policy).__name__ == "ActorCriticCnnPolicy"
    assert model.num_timesteps == 128
    # crafter's 64x64 frames go through the small CNN, not SB3's Atari encoder
    assert type(model.policy.features_extractor).__name__ == "SmallCNN"
    assert model.policy.features_extractor.features_dim == 256


def test_resume_after_training_only_evaluates_again(tmp_path: Path) -> None:
    first = train(tiny(), [0], tmp_path)
    seed_dir = tmp_path / "crafter" / "seed-0"
    (seed_dir / "summary.json").unlink()  # as if killed during the evaluation
    model_time = (seed_dir / "model.zip").stat().st_mtime_ns
    again = train(tiny(), [0], tmp_path, resume=True)
    assert (seed_dir / "model.zip").stat().st_mtime_ns == model_time  # not retrained
    assert again["scores"] == first["scores"]  # the same policy on the same worlds, same seed
    assert _csv_steps(seed_dir / "progress.csv") == [128, 256]


def test_tensorboard_without_its_package_is_refused_up_front(tmp_path: Path) -> None:
    import importlib.util

    if importlib.util.find_spec("tensorboard") is not None:
        result = train(tiny(steps=128), [0], tmp_path, tensorboard=True)
        assert any((tmp_path / "crafter" / "seed-0" / "tensorboard").iterdir())
        assert result["seeds"] == [0]
        return
    with pytest.raises(TrainError, match="pip install tensorboard"):
        train(tiny(), [0], tmp_path, tensorboard=True)
    assert not (tmp_path / "crafter").exists()


def test_csv_rows_are_appended_and_cut_back_to_a_checkpoint(tmp_path: Path) -> None:
    path = tmp_path / "p.csv"
    for steps in (100, 200, 300):
        AppendCsv(path).write({"time/total_timesteps": steps, "time/fps": 1.5}, {})
    assert _csv_steps(path) == [100, 200, 300]
    assert truncate_csv(path, 200) == 1
    assert _csv_steps(path) == [100, 200]
    assert truncate_csv(path, 200) == 0


_CHILD = """
import sys, time
from pathlib import Path
from stable_baselines3.common.callbacks import BaseCallback
from lorekit.laws.rl import TrainConfig, train

class Slow(BaseCallback):
    def _on_rollout_start(self):
        time.sleep(0.25)
    def _on_step(self):
        return True

config = TrainConfig(**{**eval(sys.argv[1]), "ppo": eval(sys.argv[2])})
train(config, [0], Path(sys.argv[3]), callbacks=[Slow()])
"""


@pytest.mark.slow
def test_training_resumes_after_sigkill_and_stops_at_the_same_total(tmp_path: Path) -> None:
    fields = {"reward": "crafter", "steps": 2048, "n_envs": 2, "checkpoint_every": 256}
    fields |= {"eval_episodes": 2, "length": 60}
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, repr(fields), repr(TINY_PPO), str(tmp_path)], env=env
    )
    state = tmp_path / "crafter" / "seed-0" / "state.json"
    deadline = time.monotonic() + 120
    try:
        while not (state.exists() and json.loads(state.read_text())["steps_done"] >= 256):
            assert child.poll() is None, "the training ended before it could be killed"
            assert time.monotonic() < deadline, "no checkpoint within two minutes"
            time.sleep(0.02)
        child.send_signal(signal.SIGKILL)
    finally:
        child.kill()
        child.wait()
    killed_at = json.loads(state.read_text())["steps_done"]
    assert 256 <= killed_at < 2048
    assert not (state.parent / "model.zip").exists()

    config = TrainConfig(**fields, ppo=TINY_PPO)
    store = tmp_path / "runs.sqlite3"
    result = train(
        config, [0], tmp_path, resume=True, open_store=functools.partial(RunStore, store)
    )
    final = json.loads(state.read_text())
    assert final["steps_done"] == 2048
    assert final["resumed_from"] == [killed_at]
    steps = _csv_steps(state.parent / "progress.csv")
    assert steps == sorted(set(steps)) and steps[-1] == 2048  # no row twice, none lost at the end
    assert steps == list(range(128, 2049, 128))
    assert result["seeds"] == [0]
    with RunStore.open_readonly(store) as db:
        assert len(db.episodes(result["run_id"])) == 2


class _Stop(BaseCallback):
    def _on_step(self) -> bool:
        raise KeyboardInterrupt


def test_an_interrupted_run_is_marked_and_resumes(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite3"
    with pytest.raises(KeyboardInterrupt):
        train(
            tiny(),
            [0],
            tmp_path,
            open_store=functools.partial(RunStore, store),
            callbacks=[_Stop()],
        )
    with RunStore.open_readonly(store) as db:
        assert db.list_runs()[0].status == "interrupted"
    result = train(
        tiny(), [0], tmp_path, open_store=functools.partial(RunStore, store), resume=True
    )
    with RunStore.open_readonly(store) as db:
        (run,) = db.list_runs()
        assert (run.run_id, run.status) == (result["run_id"], "finished")


@click.group()
def _laws() -> None:
    """Stand-in for the laws group the command is attached to."""


def _cli() -> click.Group:
    from lorekit.laws.commands.train import train as command

    _laws.add_command(command)
    return _laws


def test_command_line_trains_and_reports_the_score(tmp_path: Path) -> None:
    out, store = tmp_path / "out", tmp_path / "s.sqlite3"
    args = ["train", "--reward", "crafter", "--steps", "128", "--envs", "2", "--length", "40"]
    args += ["--eval-episodes", "2", "--out", str(out), "--store", str(store), "-q"]
    args += ["--ppo-opt", "n_steps=64", "--ppo-opt", "batch_size=64", "--ppo-opt", "n_epochs=1"]
    result = CliRunner().invoke(_cli(), args)
    assert result.exit_code == 0, result.output
    assert "reward crafter: crafter score" in result.output
    assert (
        json.loads((out / "crafter" / "summary.json").read_text())["config"]["ppo"]["n_steps"] == 64
    )
    again = CliRunner().invoke(_cli(), args)
    assert again.exit_code == 2 and "--resume" in again.output


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--reward", "laws"], "reward 'laws'"),  # no wrapper yet, or no laws given
        (["--reward", "health", "--ppo-opt", "lr=1"], "unknown PPO settings ['lr']"),
        (["--reward", "health", "--reward-opt", "x=1"], "takes no options"),
    ],
)
def test_command_line_errors_are_one_line(tmp_path: Path, extra: list[str], message: str) -> None:
    store = str(tmp_path / "s.sqlite3")
    args = ["train", *extra, "--steps", "64", "--out", str(tmp_path), "--store", store]
    result = CliRunner().invoke(_cli(), args)
    assert result.exit_code == 2
    assert message in result.output and len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "health").exists()  # refused before any file was written


BENCH = Path(__file__).parents[2] / "benchmarks" / "laws_rl.py"


def test_benchmark_runs_each_obs_reward_seed_in_its_own_process(tmp_path: Path) -> None:
    """``--jobs`` trains every (observation, reward, seed) in a process of its own and
    ``--time-limit`` stops training early: the table names the steps reached."""
    out = tmp_path / "bench"
    args = ["--steps", "4096", "--seeds", "2", "--obs", "symbolic,image", "--rewards", "health"]
    args += ["--eval-episodes", "1", "--out", str(out), "--jobs", "2", "--time-limit", "0"]
    done = subprocess.run(
        [sys.executable, str(BENCH), *args], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    rows = {
        line.split()[0]: line.split()
        for line in done.stdout.splitlines()
        if line.split()[:2] in (["symbolic", "health"], ["image", "health"])
    }
    assert set(rows) == {"symbolic", "image"}
    for obs in ("symbolic", "image"):
        for seed in (0, 1):
            summary = json.loads(
                (out / obs / "health" / f"seed-{seed}" / "summary.json").read_text()
            )
            assert summary["steps"] < 4096  # stopped by the time limit, then evaluated
            assert len(summary["episode_summaries"]) == 1
        cells = rows[obs]
        ratio = next(i for i, c in enumerate(cells) if c.endswith("x") or c == "n/a")
        steps = int(cells[ratio + 1].replace(",", ""))
        assert steps < 4096
    assert "fewest any seed reached" in done.stdout
    bad = subprocess.run(
        [sys.executable, str(BENCH), "--obs", "pixels", "--out", str(tmp_path / "x")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert bad.returncode != 0 and "--obs: expected a list of symbolic, image" in bad.stderr
