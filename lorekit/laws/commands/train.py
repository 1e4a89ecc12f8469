"""``lorekit laws train``: PPO on 27-action Crafter with a chosen reward.

A click command of the ``laws`` group. It trains one reward variant
on seeds ``--seed .. --seed + --seeds - 1``, evaluates each policy, writes
``OUT/<reward>/`` (checkpoints, CSV logs, JSON summaries) and records the
evaluation episodes as a run of the run store. Torch and stable-baselines3
come from the ``rl`` extra and are imported only when the command runs, so
``lorekit --help`` stays fast and works without them.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import click

from lorekit.cli.errors import Interrupted, UserError
from lorekit.cli.options import SEED, read_store_option
from lorekit.cli.prepare import kv

REWARDS = ("health", "crafter", "laws", "laws+penalty", "oracle", "laws+small-penalty")
"""``lorekit.laws.rl_env.REWARD_VARIANTS``, spelled out so that loading the CLI
imports neither crafter nor torch (a test keeps the two equal)."""


@click.command("train")
@click.option(
    "--reward",
    type=click.Choice(REWARDS),
    required=True,
    help="What earns reward: health change, crafter's reward, or law-based rewards "
    "(laws+small-penalty is our variant, not the paper's: the penalty at -0.1).",
)
@click.option(
    "--steps",
    type=click.IntRange(min=1),
    default=250_000,
    show_default=True,
    help="Env steps per seed.",
)
@click.option(
    "--seeds", type=click.IntRange(min=1), default=1, show_default=True, help="How many seeds."
)
@click.option("--seed", "first_seed", type=SEED, default=0, show_default=True, help="First seed.")
@click.option(
    "--obs", type=click.Choice(["symbolic", "image"]), default="symbolic", show_default=True
)
@click.option("--out", default="runs/laws-rl", show_default=True, help="Folder for run files.")
@click.option("--resume", is_flag=True, help="Continue a killed or interrupted run in --out.")
@click.option(
    "--envs", type=click.IntRange(min=1), default=4, show_default=True, help="Parallel envs."
)
@click.option(
    "--vec",
    type=click.Choice(["dummy", "subproc"]),
    default="dummy",
    show_default=True,
    help="Step the envs in this process (faster on few cores) or one process each.",
)
@click.option(
    "--checkpoint-every",
    type=click.IntRange(min=1),
    default=50_000,
    show_default=True,
    help="Env steps between checkpoints.",
)
@click.option(
    "--eval-episodes",
    type=click.IntRange(min=1),
    default=10,
    show_default=True,
    help="Evaluation episodes per seed, on unseen worlds.",
)
@click.option(
    "--length",
    type=click.IntRange(min=1),
    default=10_000,
    show_default=True,
    help="Episode length limit.",
)
@click.option("--device", default="auto", show_default=True, help="auto, cpu or cuda.")
@click.option(
    "--reward-opt",
    multiple=True,
    help="KEY=VALUE for the reward, e.g. experience=FILE or predicates=FILE for laws.",
)
@click.option(
    "--ppo-opt", multiple=True, help="KEY=VALUE overriding a PPO setting, e.g. ent_coef=0.02."
)
@click.option("--tensorboard", is_flag=True, help="Also log to OUT/<reward>/seed-K/tensorboard.")
@click.option("--quiet", "-q", is_flag=True, help="No progress lines.")
@read_store_option
def train(
    reward: str,
    steps: int,
    seeds: int,
    first_seed: int,
    obs: str,
    out: str,
    resume: bool,
    envs: int,
    vec: str,
    checkpoint_every: int,
    eval_episodes: int,
    length: int,
    device: str,
    reward_opt: tuple[str, ...],
    ppo_opt: tuple[str, ...],
    tensorboard: bool,
    quiet: bool,
    store: str,
) -> None:
    """Train PPO with a reward variant and report crafter's score over seeds."""
    from lorekit.eval.store import RunStore
    from lorekit.laws.rl import TrainConfig, TrainError
    from lorekit.laws.rl import train as run_training
    from lorekit.laws.rl_env import RewardUnavailable
    from lorekit.laws.rl_eval import result_text

    try:
        config = TrainConfig(
            reward=reward,
            steps=steps,
            obs="image" if obs == "image" else "symbolic",
            n_envs=envs,
            vec=vec,
            checkpoint_every=checkpoint_every,
            eval_episodes=eval_episodes,
            length=length,
            reward_options=kv(reward_opt, "--reward-opt"),
            ppo=_ppo_options(ppo_opt),
        )
        report = None if quiet else (lambda line: click.echo(line, err=True))
        result = run_training(
            config,
            list(range(first_seed, first_seed + seeds)),
            Path(out),
            resume=resume,
            device=device,
            open_store=functools.partial(RunStore, store),
            report=report,
            tensorboard=tensorboard,
        )
    except (TrainError, RewardUnavailable) as exc:
        raise UserError(str(exc)) from None
    except KeyboardInterrupt:
        raise Interrupted(
            f"interrupted; continue with the same command and --resume (files in {out})"
        ) from None
    click.echo(result_text(result))


def _ppo_options(items: tuple[str, ...]) -> dict[str, Any]:
    """``--ppo-opt`` values typed like the defaults they override (an integer for
    ``n_steps``, a finite number for ``ent_coef``) and in range, so a wrong one is a
    line naming it, not an error from inside stable-baselines3."""
    import math

    from lorekit.cli.prepare import raw_kv
    from lorekit.cli.typed import Mismatch, coerce
    from lorekit.laws.rl_config import PPO_DEFAULTS

    values, raw = kv(items, "--ppo-opt"), raw_kv(items)
    out: dict[str, Any] = {}
    for key, value in values.items():
        if key not in PPO_DEFAULTS:
            out[key] = value  # TrainConfig names the settings there are
            continue
        kind = int if isinstance(PPO_DEFAULTS[key], int) else float
        try:
            typed = coerce(value, raw.get(key, str(value)), kind)
        except Mismatch as exc:
            shown = raw.get(key, str(value))
            shown = shown if len(shown) <= 40 else shown[:37] + "..."
            raise UserError(f"--ppo-opt {key}: expected {exc}, got {shown!r}") from None
        low_ok = typed >= 2 if key in ("n_steps", "batch_size") else typed >= (kind is int)
        if not (math.isfinite(typed) and low_ok) or (kind is float and typed < 0):
            least = "2" if key in ("n_steps", "batch_size") else ("1" if kind is int else "0")
            raise UserError(f"--ppo-opt {key}: expected at least {least}, got {typed}")
        out[key] = typed
    return out
