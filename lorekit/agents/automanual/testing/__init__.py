"""Scripted models for AutoManual's four roles on ALFWorld, for tests and the study.

They read AutoManual's real prompts and answer in its formats, with knobs
that set how good an answer is; nothing here is used by a run with real
models. They are kept apart from the agent's modules so the product does not
depend on them: the plugin registers :func:`~.builder.stage_roles` as the
scripted models of ``automanual`` on ``alfworld`` (``reproduce run
--simulate``), and ``benchmarks/automanual_study.py`` drives them directly.

- :mod:`.planner`: the planner (writes code for ALFWorld's code API, follows
  rules and copies skills as the study needs);
- :mod:`.builder`: the builder, consolidator and formulator, and
  :func:`~.builder.stage_roles` (one model per role);
- :mod:`.code`: what the scripted planner knows of ALFWorld and the code it writes;
- :mod:`.rules`: the key phrases both sides understand.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lorekit.lazyexports import lazy_attributes

if TYPE_CHECKING:
    from lorekit.agents.automanual.testing.builder import (
        builder_model,
        consolidator_model,
        formulator_model,
        stage_roles,
    )
    from lorekit.agents.automanual.testing.planner import planner_model

__all__ = [
    "builder_model",
    "consolidator_model",
    "formulator_model",
    "planner_model",
    "stage_roles",
]

if not TYPE_CHECKING:  # mypy checks the names above; at run time they load on use
    __getattr__ = lazy_attributes(
        __name__,
        {
            "lorekit.agents.automanual.testing.builder": (
                "builder_model",
                "consolidator_model",
                "formulator_model",
                "stage_roles",
            ),
            "lorekit.agents.automanual.testing.planner": ("planner_model",),
        },
    )
