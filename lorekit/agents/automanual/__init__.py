"""AutoManual (Chen et al. 2024): learn a world's rules online, write them as a manual.

Three stages, each a command:

- building (``lorekit automanual build``): :class:`AutoManualBuildAgent` plays
  tasks one at a time; the :class:`Planner` writes free-form Python against
  the env's code API (run in :mod:`lorekit.sandbox`), the :class:`Builder`
  turns each trajectory into changes of the :class:`RuleSystem` (tool calls
  parsed with :mod:`ast`, never executed), the :class:`Consolidator` merges
  rules past ``max_rules``, and the skill and reflection libraries keep the
  planner's conclusions;
- formulating (``lorekit automanual formulate``): the :class:`Formulator`
  groups the rules into a Markdown manual, stored with the build;
- testing (``lorekit run ENV --agent automanual --agent-opt manual=BUILD``):
  :class:`AutoManualAgent`, the planner with the manual.

See docs/automanual.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lorekit.lazyexports import lazy_attributes

if TYPE_CHECKING:
    from lorekit.agents.automanual.agent import AutoManualAgent, ManualNotFound
    from lorekit.agents.automanual.build_agent import AutoManualBuildAgent, CommittedEpisode
    from lorekit.agents.automanual.builder import Builder
    from lorekit.agents.automanual.consolidator import Consolidator
    from lorekit.agents.automanual.core import (
        Diagnosis,
        Outcome,
        PlannerEpisode,
        PlannerTurn,
        Rule,
        RuleType,
    )
    from lorekit.agents.automanual.formulator import Formulator
    from lorekit.agents.automanual.libraries import Libraries
    from lorekit.agents.automanual.planner import Planner
    from lorekit.agents.automanual.rules import RuleError, RuleSystem

__all__ = [
    "AutoManualAgent",
    "AutoManualBuildAgent",
    "Builder",
    "CommittedEpisode",
    "Consolidator",
    "Diagnosis",
    "Formulator",
    "Libraries",
    "ManualNotFound",
    "Outcome",
    "Planner",
    "PlannerEpisode",
    "PlannerTurn",
    "Rule",
    "RuleError",
    "RuleSystem",
    "RuleType",
]

if not TYPE_CHECKING:  # mypy checks the names above; at run time they load on use
    __getattr__ = lazy_attributes(
        __name__,
        {
            "lorekit.agents.automanual.agent": (
                "AutoManualAgent",
                "ManualNotFound",
            ),
            "lorekit.agents.automanual.build_agent": (
                "AutoManualBuildAgent",
                "CommittedEpisode",
            ),
            "lorekit.agents.automanual.builder": ("Builder",),
            "lorekit.agents.automanual.consolidator": ("Consolidator",),
            "lorekit.agents.automanual.core": (
                "Diagnosis",
                "Outcome",
                "PlannerEpisode",
                "PlannerTurn",
                "Rule",
                "RuleType",
            ),
            "lorekit.agents.automanual.formulator": ("Formulator",),
            "lorekit.agents.automanual.libraries": ("Libraries",),
            "lorekit.agents.automanual.planner": ("Planner",),
            "lorekit.agents.automanual.rules": (
                "RuleError",
                "RuleSystem",
            ),
        },
    )
