"""``CrafterRules``: crafter's rule data as a table of preconditions and effects.

Law-extraction methods learn rules such as "make_stone_pickaxe needs a table
nearby, 1 wood and 1 stone". To score such laws we need the ground truth in
the same shape, built from crafter's own ``data.yaml`` (never retyped), one
row per action and target: requirements (inventory), nearby stations, the
faced material or creature, costs (consumed) and benefits (gained, unlocked).

Two conditions live in crafter's code rather than its data, and are added
here from a reading of ``crafter/objects.py``: ``sleep`` only takes effect
below full energy (an upper bound, ``below``), and only a *ripe* plant can
be eaten (``do`` on an unripe one does nothing). So do the creatures'
effects on the faced cell: an eaten plant stays as a young ``plant`` (its
growth starts over), while a cow, zombie or skeleton that dies uncovers
whatever ground it stood on (``cell="varies"``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from crafter import constants

from lorekit.envs.crafter.expanded import DO_TARGETS


def kind(name: str) -> str:
    """The ``do`` target a thing belongs to: a ripe plant is a plant."""
    return "plant" if name == "ripe plant" else name


_NONE: Mapping[str, int] = MappingProxyType({})

# Creature targets of ``do``: their effects live in crafter's code, not its data.
_CREATURE_EFFECTS: Mapping[str, Mapping[str, int]] = {
    "cow": {"food": 6},
    "ripe plant": {"food": 4},
    "zombie": {},
    "skeleton": {},
}
# What the faced cell holds after a success on a creature: crafter resets an
# eaten plant's growth (it stays, unripe); the others are removed.
_CREATURE_LEAVES: Mapping[str, str] = {"ripe plant": "plant"}


@dataclass(frozen=True)
class Rule:
    """Preconditions and effects of one action on one kind of target."""

    action: str
    achievement: str | None
    requires: Mapping[str, int] = field(default_factory=lambda: _NONE)
    nearby: tuple[str, ...] = ()
    faced: tuple[str, ...] = ()
    below: Mapping[str, int] = field(default_factory=lambda: _NONE)
    costs: Mapping[str, int] = field(default_factory=lambda: _NONE)
    gains: Mapping[str, int] = field(default_factory=lambda: _NONE)
    leaves: str | None = None
    probability: float = 1.0
    cell: str = "known"
    """``known``: the faced cell after a success is ``leaves`` (None: as it
    was, or untouched); ``varies``: it depends on the ground under a creature."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "achievement": self.achievement,
            "requires": dict(self.requires),
            "nearby": list(self.nearby),
            "faced": list(self.faced),
            "below": dict(self.below),
            "costs": dict(self.costs),
            "gains": dict(self.gains),
            "leaves": self.leaves,
            "probability": self.probability,
            "cell": self.cell,
        }


class CrafterRules:
    """All rules of the installed crafter, keyed by achievement."""

    def __init__(self) -> None:
        rules: list[Rule] = []
        target_of = {target: name for name, target in DO_TARGETS.items()}
        for material, info in constants.collect.items():
            gains = dict(info["receive"])
            achievement = target_of.get(material)
            rules.append(
                Rule(
                    action="do",
                    achievement=achievement,
                    requires=dict(info["require"]),
                    faced=(material,),
                    gains=gains,
                    leaves=str(info["leaves"]),
                    probability=float(info.get("probability", 1.0)),
                )
            )
        for creature, effect in _CREATURE_EFFECTS.items():
            rules.append(
                Rule(
                    action="do",
                    achievement=target_of[kind(creature)],
                    faced=(creature,),
                    gains=effect,
                    leaves=_CREATURE_LEAVES.get(creature),
                    cell="known" if creature in _CREATURE_LEAVES else "varies",
                )
            )
        for name, info in constants.place.items():
            rules.append(
                Rule(
                    action=f"place_{name}",
                    achievement=f"place_{name}",
                    requires=dict(info["uses"]),
                    nearby=tuple(info.get("nearby", ())),
                    faced=tuple(info["where"]),
                    costs=dict(info["uses"]),
                    leaves=name,
                )
            )
        for name, info in constants.make.items():
            rules.append(
                Rule(
                    action=f"make_{name}",
                    achievement=f"make_{name}",
                    requires=dict(info["uses"]),
                    nearby=tuple(info["nearby"]),
                    costs=dict(info["uses"]),
                    gains={name: int(info["gives"])},
                )
            )
        # Crafter's ``sleep`` puts the player to sleep only below full energy
        # (at full energy it is a no-op); the ``wake_up`` achievement follows
        # once rested, so the attempt it rewards is a sleep that took.
        full = int(constants.items["energy"]["max"])
        rules.append(Rule(action="sleep", achievement="wake_up", below={"energy": full}))
        self.rules: tuple[Rule, ...] = tuple(rules)
        self._by_achievement = {r.achievement: r for r in rules if r.achievement}

    def for_achievement(self, achievement: str) -> Rule:
        """The rule whose success unlocks ``achievement``."""
        try:
            return self._by_achievement[achievement]
        except KeyError:
            raise KeyError(f"no rule unlocks {achievement!r}") from None

    def achievements(self) -> list[str]:
        return sorted(self._by_achievement)

    def table(self) -> list[dict[str, Any]]:
        """Every rule as a plain dict (for JSON and for scoring laws)."""
        return [rule.as_dict() for rule in self.rules]
