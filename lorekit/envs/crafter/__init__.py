"""Crafter for language agents and for RL.

* :class:`CrafterTextEnv` - the TextEnv (``make("crafter")``), crafter's real engine.
* :class:`CrafterGym` - gymnasium env, image or symbolic observations.
* :class:`ExpandedActions`, :data:`EXPANDED_ACTIONS` - the 27-action variant.
* :func:`crafter_score`, :func:`success_rates`, :func:`episode_summary` - metrics.
* :class:`Record`, :func:`structured_state`, :func:`collect` - interaction records.
* :class:`CrafterRules` - crafter's rules as a table of preconditions and effects.

The engine (:class:`CrafterCore`) holds one or several players; the
multi-player party world, its skills and the team world on a clock serve the
S-Agents teams and live with them (:mod:`lorekit.agents.teams.world`).
"""

from collections.abc import Callable

from lorekit.envs.base import TextEnv
from lorekit.envs.crafter.collector import Collection, collect
from lorekit.envs.crafter.core import ACHIEVEMENTS, ACTIONS, CrafterCore, world_seed
from lorekit.envs.crafter.env import CrafterTextEnv
from lorekit.envs.crafter.expanded import EXPANDED_ACTIONS, ExpandedActions, to_standard
from lorekit.envs.crafter.explorer import Explorer
from lorekit.envs.crafter.gym_env import CrafterGym
from lorekit.envs.crafter.records import Record, read_jsonl, structured_state, write_jsonl
from lorekit.envs.crafter.rules import CrafterRules, Rule
from lorekit.envs.crafter.scoring import crafter_score, episode_summary, success_rates

__all__ = [
    "ACHIEVEMENTS",
    "ACTIONS",
    "EXPANDED_ACTIONS",
    "Collection",
    "CrafterCore",
    "CrafterGym",
    "CrafterRules",
    "CrafterTextEnv",
    "ExpandedActions",
    "Explorer",
    "Record",
    "Rule",
    "collect",
    "crafter_score",
    "episode_summary",
    "read_jsonl",
    "structured_state",
    "success_rates",
    "to_standard",
    "world_seed",
    "write_jsonl",
]


_MOVED = {"CrafterParty": "lorekit.agents.teams.world.party:CrafterParty"}


def __getattr__(name: str) -> Callable[..., TextEnv]:
    """A bridge for the env registry's ``crafter-party`` factory, which still
    imports ``CrafterParty`` from here: remove it once the registry names the
    teams' own factory (``lorekit.agents.teams.world:make_crafter_party``)."""
    if name in _MOVED:
        import pkgutil

        factory: Callable[..., TextEnv] = pkgutil.resolve_name(_MOVED[name])
        return factory
    raise AttributeError(f"module 'lorekit.envs.crafter' has no attribute {name!r}")
