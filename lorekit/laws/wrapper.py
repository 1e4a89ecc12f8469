"""The paper's law-based reward as a gymnasium wrapper over the 27-action Crafter.

Per step, with the player's state read just *before* the action runs:

- **health**: the change in health times ``health_scale`` (0.1, as in
  crafter's own reward): the paper's "health reward";
- **laws**: ``+bonus`` (1) the first time in an episode that an action is
  taken while its objective's predicate is valid, i.e. the law says the
  action can succeed now. Whether it then does (a sapling drops one time in
  ten, a cow takes several hits) does not matter: the reward judges the
  choice, as Algorithm 1's predicates do;
- **penalty**: ``penalty`` (-0.5) the first time in an episode that an action
  is chosen while *none* of its law's preconditions hold (an action whose law
  has no preconditions is never penalised; sleeping at full energy is, as
  sleep needs energy below full);
- **crafter**: crafter's own reward (health / 10 plus 1 per new achievement).

While the player sleeps crafter ignores the chosen action (it keeps
sleeping until rested), so such steps earn no bonus and no penalty.

Each part is switched by :class:`RewardParts`; ``info["reward_parts"]`` holds
every computed part separately, and the episode's last step adds
``info["episode_reward_parts"]``, their sums over the episode (the trainer
logs them per episode in its CSV, summary and run store).
The predicates are compiled inside the wrapper, so under a subprocess
vector env the reward is computed in the env's own process (no round trip
per step): :func:`reward_env_factory` returns a picklable factory that
carries only predicate sources.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gymnasium
import numpy as np
from crafter import constants

from lorekit.envs.crafter.expanded import EXPANDED_ACTIONS, ExpandedActions
from lorekit.envs.crafter.gym_env import CrafterGym, ObsKind
from lorekit.laws.experience import Experience, oracle_experience
from lorekit.laws.rewards import ActionRule, PredicateSet, compile_set, predicates_from_experience
from lorekit.laws.state_api import state_from_core
from lorekit.sandbox import PredicateError

_MAX_ENERGY = int(constants.items["energy"]["max"])


@dataclass(frozen=True)
class RewardParts:
    """Which parts make up the reward, and their sizes."""

    health: bool = True
    laws: bool = False
    penalty: bool = False
    crafter: bool = False
    health_scale: float = 0.1
    bonus: float = 1.0
    penalty_value: float = -0.5


VARIANTS: dict[str, RewardParts] = {
    "health": RewardParts(health=True),
    "crafter": RewardParts(health=False, crafter=True),
    "laws": RewardParts(health=True, laws=True),
    "laws+penalty": RewardParts(health=True, laws=True, penalty=True),
    "oracle": RewardParts(health=True, laws=True, penalty=True),
    "laws+small-penalty": RewardParts(health=True, laws=True, penalty=True, penalty_value=-0.1),
}
"""Named reward variants. ``oracle`` is ``laws+penalty`` with the laws taken
from :class:`~lorekit.envs.crafter.rules.CrafterRules`, so comparing the two
isolates the quality of the learned laws from the design of the reward.

``laws+small-penalty`` is *our* reading, not the paper's stated design: the
same penalty at a fifth of the weight (-0.1). With -0.5, a random policy pays
about -8 to -9 per episode in penalties and earns +2 to +4 in bonuses, so
trying law actions at all looks bad to PPO; at -0.1 the blind tries of all
27 actions cost less than the bonuses they find."""


class LawReward(gymnasium.Wrapper[Any, Any, Any, Any]):
    """Replaces the inner reward by the parts of :class:`RewardParts`.

    ``env`` must be :class:`ExpandedActions` over :class:`CrafterGym` (the
    predicates are about the 27 named actions). ``predicates`` is needed
    when ``parts.laws`` or ``parts.penalty`` is on. A predicate that fails
    at run time earns nothing and charges nothing for that step; such
    failures are counted in ``self.predicate_errors``.
    """

    def __init__(
        self,
        env: gymnasium.Env[Any, Any],
        predicates: PredicateSet | None = None,
        parts: RewardParts | None = None,
    ) -> None:
        super().__init__(env)
        self.parts = parts or RewardParts()
        if (self.parts.laws or self.parts.penalty) and predicates is None:
            raise ValueError(
                "law rewards need predicates: pass predicates=PredicateSet(...) "
                "or use make_reward_env(variant, experience=...)"
            )
        if env.action_space != gymnasium.spaces.Discrete(len(EXPANDED_ACTIONS)):
            raise ValueError("LawReward wraps the 27-action crafter: ExpandedActions(CrafterGym())")
        self.rules: dict[int, ActionRule] = {}
        if predicates is not None:
            by_name = compile_set(predicates)
            unknown = sorted(set(by_name) - set(EXPANDED_ACTIONS))
            if unknown:
                raise ValueError(f"predicates name actions crafter does not have: {unknown}")
            self.rules = {EXPANDED_ACTIONS.index(a): rule for a, rule in by_name.items()}
        self.rewarded: set[int] = set()
        self.penalised: set[int] = set()
        self.predicate_errors = 0
        self.totals: dict[str, float] = {}

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        self.rewarded.clear()
        self.totals = {}
        self.penalised.clear()
        return self.env.reset(seed=seed, options=options)

    def _judge(self, action: int) -> tuple[float, float]:
        """(laws part, penalty part) for choosing ``action`` in the current state."""
        rule = self.rules.get(action)
        if rule is None:
            return 0.0, 0.0
        want_bonus = self.parts.laws and action not in self.rewarded
        want_penalty = self.parts.penalty and rule.partly is not None
        want_penalty = want_penalty and action not in self.penalised
        if not (want_bonus or want_penalty):
            return 0.0, 0.0
        core = self.env.unwrapped.core  # type: ignore[attr-defined]
        player = core.players[0]
        if player.sleeping and player.inventory["energy"] < _MAX_ENERGY:
            return 0.0, 0.0  # crafter replaces the action by sleeping: nothing was chosen
        state = state_from_core(core)
        bonus = penalty = 0.0
        if want_bonus:
            try:
                if rule.valid(state, state.faced):
                    self.rewarded.add(action)
                    bonus = self.parts.bonus
            except PredicateError:
                self.predicate_errors += 1
        if want_penalty and rule.partly is not None:
            try:
                if not rule.partly(state, state.faced):
                    self.penalised.add(action)
                    penalty = self.parts.penalty_value
            except PredicateError:
                self.predicate_errors += 1
        return bonus, penalty

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        index = int(action)
        core = self.env.unwrapped.core  # type: ignore[attr-defined]
        health_before = int(core.players[0].health)
        bonus, penalty = self._judge(index)
        obs, inner, terminated, truncated, info = self.env.step(np.int64(index))
        health = (int(core.players[0].health) - health_before) * self.parts.health_scale
        parts = {"health": health, "laws": bonus, "penalty": penalty, "crafter": float(inner)}
        p = self.parts
        reward = (
            (health if p.health else 0.0)
            + (bonus if p.laws else 0.0)
            + (penalty if p.penalty else 0.0)
            + (float(inner) if p.crafter else 0.0)
        )
        info["reward_parts"] = parts
        for name, value in parts.items():
            self.totals[name] = self.totals.get(name, 0.0) + value
        if terminated or truncated:
            info["episode_reward_parts"] = dict(self.totals)
        return obs, reward, terminated, truncated, info


def variant_predicates(
    variant: str,
    experience: Experience | None = None,
    predicates: PredicateSet | None = None,
) -> PredicateSet | None:
    """The predicates a variant uses: given ones, else compiled from
    ``experience``; ``oracle`` always uses CrafterRules' laws."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown reward variant {variant!r}; choose from {', '.join(VARIANTS)}")
    if variant == "oracle":
        return predicates_from_experience(oracle_experience())
    parts = VARIANTS[variant]
    if not (parts.laws or parts.penalty):
        return None
    if predicates is not None:
        return predicates
    if experience is not None:
        return predicates_from_experience(experience)
    raise ValueError(
        f"reward variant {variant!r} needs laws: pass experience=Experience.load(FILE) "
        "or predicates=PredicateSet.load(FILE)"
    )


def make_reward_env(
    variant: str = "laws+penalty",
    *,
    experience: Experience | None = None,
    predicates: PredicateSet | None = None,
    parts: RewardParts | None = None,
    obs: ObsKind = "symbolic",
    length: int = 10_000,
) -> LawReward:
    """``LawReward(ExpandedActions(CrafterGym(obs)))`` with a named variant.

    ``parts`` overrides the variant's parts (e.g. to change sizes or switch
    one off); the variant still decides where the laws come from.
    """
    return reward_env_factory(
        variant, experience=experience, predicates=predicates, parts=parts, obs=obs, length=length
    )()


def reward_env_factory(
    variant: str = "laws+penalty",
    *,
    experience: Experience | None = None,
    predicates: PredicateSet | None = None,
    parts: RewardParts | None = None,
    obs: ObsKind = "symbolic",
    length: int = 10_000,
) -> Callable[[], LawReward]:
    """A picklable no-argument factory (for ``SubprocVecEnv``): the laws are
    turned into predicate sources here, compiled in each env process."""
    chosen = variant_predicates(variant, experience, predicates)
    return functools.partial(_build, chosen, parts or VARIANTS[variant], obs, length)


def _build(
    predicates: PredicateSet | None, parts: RewardParts, obs: ObsKind, length: int
) -> LawReward:
    return LawReward(ExpandedActions(CrafterGym(obs, length=length)), predicates, parts)
