"""The PPO envs and evaluation helpers that need no torch (run everywhere, CI included).

The training itself (torch and stable-baselines3, the ``rl`` extra) is tested in
``test_rl.py`` (CI installs that extra; elsewhere it skips where the extra is missing).
"""

from __future__ import annotations

import importlib
import math
import re
import tomllib
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import pytest

from lorekit.envs.crafter import worldgen
from lorekit.envs.crafter.expanded import EXPANDED_ACTIONS, ExpandedActions
from lorekit.envs.crafter.gym_env import CrafterGym
from lorekit.eval.store import RunStore
from lorekit.laws import rl_env
from lorekit.laws.rl_config import SB3_PIN, TORCH_PIN
from lorekit.laws.rl_env import (
    OneHotObs,
    RewardUnavailable,
    make_env,
    register_reward,
    reward_builder,
)
from lorekit.laws.rl_eval import aggregate, eval_seed, evaluate, score_episodes

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module", autouse=True)
def _warm() -> None:
    worldgen.warm_up()


def test_every_variant_is_the_one_law_reward_with_its_parts() -> None:
    from lorekit.laws.wrapper import VARIANTS, LawReward

    for variant in ("health", "crafter", "oracle"):
        env = make_env(variant, seed=3, obs="symbolic", length=50)
        inner = env
        while not isinstance(inner, LawReward):
            inner = inner.env  # type: ignore[assignment]
        assert inner.parts == VARIANTS[variant]
        env.reset()
        _, _, _, _, info = env.step(EXPANDED_ACTIONS.index("noop"))
        assert set(info["reward_parts"]) >= {"health"}


def test_crafter_variant_keeps_crafters_reward_and_seeds_repeat() -> None:
    env = make_env("crafter", seed=5, obs="symbolic", length=300)
    bare = ExpandedActions(CrafterGym("symbolic", length=300))
    env.reset()
    bare.reset(seed=5)
    rng = np.random.default_rng(0)
    total = 0.0
    for _ in range(300):
        action = int(rng.integers(len(EXPANDED_ACTIONS)))
        _, reward, term, trunc, _ = env.step(action)
        _, expected, bterm, btrunc, _ = bare.step(np.int64(action))
        assert reward == expected and (term, trunc) == (bterm, btrunc)
        total += abs(reward)
        if term or trunc:
            break
    assert total > 0  # the walk earned or lost something, so the comparison meant something


def test_one_hot_observation_decodes_to_the_symbolic_one() -> None:
    env = make_env("crafter", seed=1, obs="symbolic", length=20)
    raw_env = env.unwrapped
    obs, _ = env.reset()
    assert env.observation_space.contains(obs)
    raw = raw_env._observe()  # type: ignore[attr-defined]
    kinds = raw_env._kinds  # type: ignore[attr-defined]
    view = obs[: 63 * kinds].reshape(63, kinds)
    ripe = obs[63 * kinds : 63 * kinds + 63]
    rest = obs[63 * kinds + 63 :]
    faced, facing = rest[:kinds], rest[kinds : kinds + 4]
    counts, sleeping = rest[kinds + 4 : kinds + 4 + 160].reshape(16, 10), rest[kinds + 4 + 160 :]
    assert (view.sum(1) == 1).all() and (counts.sum(1) == 1).all()
    assert sleeping.tolist() == [float(raw["sleeping"][0])]
    assert (view.argmax(1) == raw["view"].ravel()).all()
    assert (ripe == raw["ripe"].ravel()).all()
    assert faced.argmax() == raw["faced"][0] and facing.argmax() == raw["facing"][0]
    assert (counts.argmax(1) == raw["inventory"]).all()
    with pytest.raises(ValueError, match="symbolic"):
        OneHotObs(CrafterGym("image", length=5))


def test_symbolic_observation_shows_facing_and_ripeness() -> None:
    # most laws need the faced target, eat_plant a ripe plant: both must be visible
    from crafter import objects

    env = make_env("crafter", seed=0, obs="symbolic", length=20)
    env.reset()
    core = env.unwrapped.core  # type: ignore[attr-defined]
    player = core.players[0]
    px, py = (int(v) for v in player.pos)
    for dx, dy in ((1, 0), (-1, 0)):
        obj = core.world[(px + dx, py + dy)][1]
        if obj is not None:
            core.world.remove(obj)
    core.world[(px + 1, py)] = "tree"
    core.world[(px - 1, py)] = "grass"
    observe = env.env.observation  # type: ignore[attr-defined]
    raw = env.unwrapped._observe  # type: ignore[attr-defined]
    player.facing = (1, 0)
    toward = observe(raw())
    player.facing = (-1, 0)
    away = observe(raw())
    assert not np.array_equal(toward, away)
    plant = objects.Plant(core.world, (px - 1, py))
    core.world.add(plant)
    young = observe(raw())
    plant.grown = 1000
    assert plant.ripe and not np.array_equal(young, observe(raw()))
    assert raw()["ripe"].sum() == 1


def test_symbolic_observation_shows_whether_the_player_sleeps() -> None:
    # asleep, crafter ignores every action and the law reward pays nothing; the
    # image shows it (a dark screen), and so must the symbolic observation
    env = make_env("crafter", seed=0, obs="symbolic", length=20)
    env.reset()
    player = env.unwrapped.core.players[0]  # type: ignore[attr-defined]
    observe = env.env.observation  # type: ignore[attr-defined]
    raw = env.unwrapped._observe  # type: ignore[attr-defined]
    awake = observe(raw())
    player.sleeping = True
    assert not np.array_equal(awake, observe(raw()))
    assert env.observation_space.contains(observe(raw()))


def test_seeds_fix_the_worlds_and_differ_between_seeds() -> None:
    def first(seed: int) -> np.ndarray:
        obs, _ = make_env("health", seed=seed, length=10).reset()
        return np.asarray(obs)

    assert (first(7) == first(7)).all()
    assert not all((first(s) == first(7)).all() for s in (8, 9, 10))


def test_image_observation() -> None:
    env = make_env("crafter", seed=0, obs="image", length=10)
    obs, _ = env.reset()
    assert obs.shape == (64, 64, 3) and obs.dtype == np.uint8
    with pytest.raises(ValueError, match="obs must be"):
        make_env("crafter", seed=0, obs="pixels", length=10)  # type: ignore[arg-type]


def test_reward_lookup_errors_say_what_to_do() -> None:
    with pytest.raises(RewardUnavailable, match=r"unknown reward 'gold'.*health, crafter"):
        reward_builder("gold")
    with pytest.raises(RewardUnavailable, match="reward 'health' takes no options"):
        make_env("health", seed=0, options={"x": 1})


def _bonus(env: gymnasium.Env[Any, Any], options: Any) -> gymnasium.Env[Any, Any]:
    return gymnasium.wrappers.TransformReward(env, lambda r: r + float(options["bonus"]))


def test_a_registered_builder_replaces_a_variant(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rl_env, "_BUILDERS", dict(rl_env._BUILDERS))
    register_reward("oracle", _bonus)
    env = make_env("oracle", seed=0, options={"bonus": 2}, length=10)
    env.reset()
    _, reward, *_ = env.step(0)
    assert reward == pytest.approx(2.0)  # crafter's reward (0 on a noop at full health) + 2


def test_law_variants_are_the_wrappers_law_reward() -> None:
    """The law variants build lorekit.laws.wrapper's LawReward."""
    env = make_env("oracle", seed=0, length=50)
    env.reset()
    _, _, _, _, info = env.step(EXPANDED_ACTIONS.index("collect_wood"))
    assert "reward_parts" in info  # the wrapper's per-part breakdown
    with pytest.raises(RewardUnavailable, match="experience=FILE or predicates=FILE"):
        make_env("laws", seed=0)  # laws need an experience or predicates
    with pytest.raises(RewardUnavailable, match="takes the options experience, predicates"):
        make_env("laws+penalty", seed=0, options={"bonus": 1})


def _constant(action: str) -> Any:
    index = EXPANDED_ACTIONS.index(action)
    return lambda batch: np.full(len(batch), index)


def test_evaluate_plays_whole_episodes_and_records_them(tmp_path: Path) -> None:
    with RunStore(tmp_path / "s.sqlite3") as store:
        rid = store.create_run(env="crafter", agent="ppo:test", config={})
        summaries = evaluate(
            _constant("noop"),
            lambda slot: make_env("crafter", seed=0, length=30 + slot),
            seed=2,
            episodes=5,
            slots=2,
            writer=lambda i, w: store.episode(rid, f"ep{i}", index=i, seed=w),
        )
        episodes = store.episodes(rid)
    assert [s["seed"] for s in summaries] == [eval_seed(2, i) for i in range(5)]
    assert len({s["seed"] for s in summaries}) == 5
    assert all(not s["died"] and s["length"] in (30, 31) for s in summaries)
    assert sorted(e.episode_key for e in episodes) == [f"ep{i}" for i in range(5)]
    assert all(e.success and e.steps in (30, 31) for e in episodes)
    scored = score_episodes(summaries)
    assert scored["episodes"] == 5 and scored["died"] == 0 and scored["length_mean"] > 29


def test_evaluate_counts_unlocks_and_deaths() -> None:
    summaries = evaluate(
        _constant("sleep"),
        lambda slot: make_env("crafter", seed=0, length=400),
        seed=0,
        episodes=2,
    )
    # always asleep: wakes up once rested, then starves or is killed long before the limit
    assert all(s["died"] and s["length"] < 400 for s in summaries)
    assert all(s["unlocked"] == ["wake_up"] for s in summaries)
    assert score_episodes(summaries)["success_rates"]["wake_up"] == 100.0


def test_aggregate_is_the_mean_with_its_standard_error() -> None:
    rates = {"a": 50.0, "b": 0.0}
    seeds = [
        {"seed": s, "score": x, "success_rates": rates, "unlocked_mean": 1.0}
        for s, x in enumerate([1.0, 2.0, 4.0])
    ]
    result = aggregate("health", seeds)
    assert result["score_mean"] == pytest.approx(7 / 3)
    sd = math.sqrt(sum((x - 7 / 3) ** 2 for x in (1, 2, 4)) / 2)
    assert result["score_se"] == pytest.approx(sd / math.sqrt(3))
    assert aggregate("health", seeds[:1])["score_se"] is None


def test_aggregate_carries_the_training_reward_parts() -> None:
    # the summary over seeds (and the run store's summary, which is the same
    # dict) holds the parts of training episodes, not only of evaluation ones
    rates = {"a": 0.0}
    seeds = [
        {
            "seed": s,
            "score": 1.0,
            "success_rates": rates,
            "unlocked_mean": 0.0,
            "reward_parts_mean": {"laws": 2.0, "penalty": -1.0},
            "train_reward_parts": {"laws": float(s), "penalty": -8.0 + s},
        }
        for s in range(2)
    ]
    result = aggregate("laws+penalty", seeds)
    assert result["reward_parts_mean"] == {"laws": 2.0, "penalty": -1.0}
    assert result["train_reward_parts_mean"] == {"laws": 0.5, "penalty": -7.5}


def test_rl_extra_pins_a_cpu_installable_torch() -> None:
    """A range such as torch>=2.2 lets pip pick a multi-GB CUDA build; the extra pins one."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    rl = extras["optional-dependencies"]["rl"]
    pins = {re.split(r"[=<>!~ \[]", req)[0].lower(): req for req in rl}
    assert re.fullmatch(r"torch==\d+\.\d+\.\d+", pins["torch"])
    assert re.fullmatch(r"stable-baselines3==\d+\.\d+\.\d+", pins["stable-baselines3"])
    assert pins["torch"] == f"torch=={TORCH_PIN}"
    assert pins["stable-baselines3"] == f"stable-baselines3=={SB3_PIN}"
    assert "torch" not in " ".join(extras["optional-dependencies"]["test"])
    # the documented CPU install names the same version
    assert f"pip install {pins['torch']}" in (ROOT / "docs" / "laws_rl.md").read_text()


def test_training_without_torch_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from lorekit.extras import MissingExtraError

    monkeypatch.setitem(sys.modules, "torch", None)  # what an installation without it sees
    monkeypatch.delitem(sys.modules, "lorekit.laws.rl", raising=False)
    with pytest.raises(MissingExtraError) as caught:
        importlib.import_module("lorekit.laws.rl")
    message = str(caught.value)
    assert "pip install 'lorekit[rl]'" in message
    assert f"torch=={TORCH_PIN}'s CPU build" in message


def test_the_train_command_offers_every_reward_variant() -> None:
    from lorekit.laws.commands.train import REWARDS
    from lorekit.laws.rl_env import REWARD_VARIANTS

    assert REWARDS == REWARD_VARIANTS


def test_our_penalty_variant_is_labelled_as_ours_where_variants_are_chosen() -> None:
    # laws+small-penalty is our reading of the penalty, not the paper's design
    from click.testing import CliRunner

    from lorekit.laws.commands.train import train

    shown = "".join(CliRunner().invoke(train, ["--help"]).output.split())
    assert "laws+small-penaltyisourvariant" in shown  # wrapped lines joined
    bench = (ROOT / "benchmarks" / "laws_rl.py").read_text()
    assert "laws+small-penalty is our variant" in " ".join(bench.split())
