"""The environments PPO trains on: 27-action Crafter with a chosen reward.

``make_env(variant, seed, obs)`` builds one gymnasium env in the process that
steps it (a ``SubprocVecEnv`` worker or the trainer itself), so the reward is
computed next to the game and never crosses a process boundary per step. The
stack is always the same, from the inside out:

1. :class:`~lorekit.envs.crafter.gym_env.CrafterGym` (symbolic or image
   observation; crafter's own reward and episode length);
2. :class:`~lorekit.envs.crafter.expanded.ExpandedActions` (the paper's 27
   actions);
3. the reward variant, a *reward builder* that wraps the env and replaces its
   reward (it sees the raw observation and the game through ``unwrapped.core``);
4. for ``obs="symbolic"``, :class:`OneHotObs`, which flattens the local view
   and the inventory into one one-hot vector for an MLP policy.

Every named variant (``health``, ``crafter``, ``laws``, ``laws+penalty``,
``oracle``, and ``laws+small-penalty``, our own reading of the penalty, see
:data:`lorekit.laws.wrapper.VARIANTS`) is :mod:`lorekit.laws.wrapper`'s
``LawReward`` with that variant's parts, built by :func:`law_reward`: one reward implementation for
training, tests and benchmarks (any variant can be replaced at run time with
:func:`register_reward`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any, Literal

import gymnasium
import numpy as np

from lorekit.envs.crafter.expanded import ExpandedActions
from lorekit.envs.crafter.gym_env import CrafterGym

ObsKind = Literal["symbolic", "image"]
REWARD_VARIANTS: tuple[str, ...] = (
    "health",
    "crafter",
    "laws",
    "laws+penalty",
    "oracle",
    "laws+small-penalty",
)
LAW_VARIANTS: tuple[str, ...] = ("laws", "laws+penalty", "oracle", "laws+small-penalty")
_LEARNED: tuple[str, ...] = ("laws", "laws+penalty", "laws+small-penalty")
# The inventory counts of crafter run from 0 to 9.
_COUNTS = 10

RewardBuilder = Callable[[gymnasium.Env[Any, Any], Mapping[str, Any]], gymnasium.Env[Any, Any]]


class RewardUnavailable(ValueError):
    """A reward variant that is unknown or has no builder plugged in."""


_BUILDERS: dict[str, RewardBuilder] = {}
"""Builders plugged in with :func:`register_reward`; the named variants need none."""


def register_reward(variant: str, builder: RewardBuilder) -> None:
    """Plug a reward builder in (or replace one).

    The builder must be picklable by reference (a module-level function), as
    ``SubprocVecEnv`` ships it to its workers.
    """
    _BUILDERS[variant] = builder


def reward_builder(variant: str) -> RewardBuilder:
    """The builder of a reward variant; a one-line error when there is none."""
    builder = _BUILDERS.get(variant)
    if builder is not None:
        return builder
    if variant in REWARD_VARIANTS:
        return functools.partial(law_reward, variant)
    raise RewardUnavailable(
        f"unknown reward {variant!r}: choose one of {', '.join(REWARD_VARIANTS)}"
    )


_LAW_OPTIONS = ("experience", "predicates")


def law_reward(
    variant: str, env: gymnasium.Env[Any, Any], options: Mapping[str, Any]
) -> gymnasium.Env[Any, Any]:
    """Every named variant is :class:`~lorekit.laws.wrapper.LawReward` with its parts.

    ``health`` and ``crafter`` take no options. ``laws``, ``laws+penalty``
    and ``laws+small-penalty`` take ``experience=FILE`` (an Experience JSON whose laws become the
    predicates) or ``predicates=FILE`` (a PredicateSet JSON, e.g. written by
    the rewarder); ``oracle`` needs neither (CrafterRules' laws).
    """
    from lorekit.laws.experience import Experience
    from lorekit.laws.rewards import PredicateSet
    from lorekit.laws.wrapper import VARIANTS, LawReward, variant_predicates

    allowed = _LAW_OPTIONS if variant in _LEARNED else ()
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        takes = f"the options {', '.join(allowed)}" if allowed else "no options (drop --reward-opt)"
        raise RewardUnavailable(f"reward {variant!r} takes {takes}, got {unknown}")
    try:
        experience = predicates = None
        if "experience" in options:
            experience = Experience.load(str(options["experience"]))
        if "predicates" in options:
            predicates = PredicateSet.load(str(options["predicates"]))
        chosen = variant_predicates(variant, experience, predicates)
        built: gymnasium.Env[Any, Any] = LawReward(env, chosen, VARIANTS[variant])
    except (ValueError, OSError) as exc:
        raise RewardUnavailable(
            f"reward {variant!r}: {exc} (give --reward-opt experience=FILE or predicates=FILE)"
        ) from None
    return built


class OneHotObs(gymnasium.ObservationWrapper[np.ndarray, Any, Any]):
    """Symbolic observation as one flat float32 vector of one-hot codes.

    Each of the 9x7 view cells becomes a one-hot over crafter's material and
    creature ids, then come the ripe-plant mask (0/1 per cell), the faced
    cell's id (one-hot), the facing (one-hot over 4), each inventory count
    as a one-hot over 0..9 and whether the player sleeps (0/1). Ids carry no order,
    so a one-hot lets a small MLP learn what each means without having to undo
    an arbitrary numbering.
    """

    def __init__(self, env: gymnasium.Env[Any, Any]) -> None:
        super().__init__(env)
        space = env.observation_space
        if not isinstance(space, gymnasium.spaces.Dict):
            raise ValueError(
                "OneHotObs wraps CrafterGym(obs='symbolic'), whose observation is a dict"
            )
        view, inventory = space["view"], space["inventory"]
        assert isinstance(view, gymnasium.spaces.Box)
        assert isinstance(inventory, gymnasium.spaces.Box)
        self._kinds = int(view.high.max()) + 1
        self._view_size = int(np.prod(view.shape)) * self._kinds
        cells = int(np.prod(view.shape))
        size = self._view_size + cells + self._kinds + 4
        size += int(np.prod(inventory.shape)) * _COUNTS + 1
        self.observation_space = gymnasium.spaces.Box(0.0, 1.0, (size,), np.float32)
        self._eye_view = np.eye(self._kinds, dtype=np.float32)
        self._eye_count = np.eye(_COUNTS, dtype=np.float32)
        self._eye_facing = np.eye(4, dtype=np.float32)

    def observation(self, observation: Any) -> np.ndarray:
        view = self._eye_view[np.asarray(observation["view"]).ravel()].ravel()
        ripe = np.asarray(observation["ripe"], np.float32).ravel()
        faced = self._eye_view[int(np.asarray(observation["faced"])[0])]
        facing = self._eye_facing[int(np.asarray(observation["facing"])[0])]
        counts = np.clip(np.asarray(observation["inventory"]), 0, _COUNTS - 1)
        asleep = np.asarray(observation["sleeping"], np.float32).ravel()
        parts = [view, ripe, faced, facing, self._eye_count[counts].ravel(), asleep]
        return np.concatenate(parts)


def make_env(
    variant: str,
    seed: int,
    obs: ObsKind = "symbolic",
    *,
    options: Mapping[str, Any] | None = None,
    length: int = 10_000,
    builder: RewardBuilder | None = None,
) -> gymnasium.Env[Any, Any]:
    """One training or evaluation env; see the module docstring for the stack.

    ``seed`` fixes the env's sequence of worlds: the first reset uses it
    (unless given another) and every later seedless reset (the vector env's
    auto-reset) plays crafter's next episode of that seed. ``builder`` overrides the
    lookup of ``variant`` (how a trainer hands a resolved builder to workers).
    """
    if obs not in ("symbolic", "image"):
        raise ValueError(f"obs must be 'symbolic' or 'image', got {obs!r}")
    build = builder if builder is not None else reward_builder(variant)
    env: gymnasium.Env[Any, Any] = ExpandedActions(CrafterGym(obs=obs, length=length))
    env = build(env, dict(options or {}))
    if obs == "symbolic":
        env = OneHotObs(env)
    env.action_space.seed(seed)
    return SeedFirstReset(env, seed)


class SeedFirstReset(gymnasium.Wrapper[Any, Any, Any, Any]):
    """Resets with ``seed`` the first time it is reset without one.

    Vector envs reset their members without a seed unless told otherwise;
    this gives each member its own reproducible sequence of worlds without
    paying for an extra world generation at construction.
    """

    def __init__(self, env: gymnasium.Env[Any, Any], seed: int) -> None:
        super().__init__(env)
        self._pending: int | None = seed

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        if seed is None:
            seed = self._pending
        self._pending = None
        return self.env.reset(seed=seed, options=options)
