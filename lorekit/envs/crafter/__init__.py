"""Crafter for language agents and for RL.

* :class:`CrafterTextEnv` - the TextEnv (``make("crafter")``), crafter's real engine.
* :class:`CrafterGym` - gymnasium env, image or symbolic observations.
* :class:`ExpandedActions`, :data:`EXPANDED_ACTIONS` - the 27-action variant.
* :func:`crafter_score`, :func:`success_rates`, :func:`episode_summary` - metrics.
* :class:`CrafterRules` - crafter's rules as a table of preconditions and effects.

The engine (:class:`CrafterCore`) holds one or several players; the
multi-player party world, its skills and the team world on a clock serve the
S-Agents teams and live with them (:mod:`lorekit.agents.teams.world`).
"""

from lorekit.envs.crafter.core import ACHIEVEMENTS, ACTIONS, CrafterCore, world_seed
from lorekit.envs.crafter.env import CrafterTextEnv
from lorekit.envs.crafter.expanded import EXPANDED_ACTIONS, ExpandedActions, to_standard
from lorekit.envs.crafter.gym_env import CrafterGym
from lorekit.envs.crafter.rules import CrafterRules, Rule
from lorekit.envs.crafter.scoring import crafter_score, episode_summary, success_rates

__all__ = [
    "ACHIEVEMENTS",
    "ACTIONS",
    "EXPANDED_ACTIONS",
    "CrafterCore",
    "CrafterGym",
    "CrafterRules",
    "CrafterTextEnv",
    "ExpandedActions",
    "Rule",
    "crafter_score",
    "episode_summary",
    "success_rates",
    "to_standard",
    "world_seed",
]
