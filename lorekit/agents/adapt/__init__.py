"""ADaPT (as-needed decomposition and planning) and the baselines it is compared with.

- :class:`AdaptAgent`: executor first, planner only on failure, recursion to ``d_max``.
- :class:`PlanExecuteAgent`, :class:`TryAgainAgent`, :class:`ReflexionAgent`:
  the baselines, on the same executor; ReAct (the ``react`` agent) is that
  executor alone, the same code and prompt as ``AdaptAgent(d_max=1)``.
- :class:`Executor`: LoreKit's one ReAct loop, with worked examples per
  environment (``lorekit/agents/prompts/examples/``, ``shots`` of them).
- :func:`parse_execution_order`: ``((Step 1 OR Step 2) AND Step 3)`` to a tree.
- :class:`EnvBridge` and :func:`register_bridge`: what an environment may add
  (state text, sub-task checks) so ADaPT works well on it; TextCraft's,
  ALFWorld's (:class:`AlfworldBridge`) and WebShop's (:class:`WebShopBridge`) are built in.

See docs/adapt.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lorekit.lazyexports import lazy_attributes

if TYPE_CHECKING:
    from lorekit.agents.adapt.baselines import PlanExecuteAgent, ReflexionAgent, TryAgainAgent
    from lorekit.agents.adapt.bridge import (
        EnvBridge,
        NullBridge,
        TextCraftBridge,
        bridge_for,
        parse_goal,
        register_bridge,
    )
    from lorekit.agents.adapt.bridge_alfworld import AlfworldBridge
    from lorekit.agents.adapt.bridge_webshop import WebShopBridge
    from lorekit.agents.adapt.common import AdaptContext, BudgetExhausted, CallBudget
    from lorekit.agents.adapt.controller import AdaptAgent
    from lorekit.agents.adapt.executor import Executor, SubtaskResult, verdict_of
    from lorekit.agents.adapt.order import (
        AllOf,
        AnyOf,
        OrderError,
        OrderNode,
        StepRef,
        evaluate,
        evaluate_async,
        format_order,
        parse_execution_order,
        step_indices,
    )
    from lorekit.agents.adapt.planner import Plan, PlanAttempt, PlanError, Planner, parse_plan

__all__ = [
    "AdaptAgent",
    "AdaptContext",
    "AlfworldBridge",
    "AllOf",
    "AnyOf",
    "BudgetExhausted",
    "CallBudget",
    "EnvBridge",
    "Executor",
    "NullBridge",
    "OrderError",
    "OrderNode",
    "Plan",
    "PlanAttempt",
    "PlanError",
    "PlanExecuteAgent",
    "Planner",
    "ReflexionAgent",
    "StepRef",
    "SubtaskResult",
    "TextCraftBridge",
    "TryAgainAgent",
    "WebShopBridge",
    "bridge_for",
    "evaluate",
    "evaluate_async",
    "format_order",
    "parse_execution_order",
    "parse_goal",
    "parse_plan",
    "register_bridge",
    "step_indices",
    "verdict_of",
]

if not TYPE_CHECKING:  # mypy checks the names above; at run time they load on use
    __getattr__ = lazy_attributes(
        __name__,
        {
            "lorekit.agents.adapt.baselines": (
                "PlanExecuteAgent",
                "ReflexionAgent",
                "TryAgainAgent",
            ),
            "lorekit.agents.adapt.bridge": (
                "EnvBridge",
                "NullBridge",
                "TextCraftBridge",
                "bridge_for",
                "parse_goal",
                "register_bridge",
            ),
            "lorekit.agents.adapt.bridge_alfworld": ("AlfworldBridge",),
            "lorekit.agents.adapt.bridge_webshop": ("WebShopBridge",),
            "lorekit.agents.adapt.common": (
                "AdaptContext",
                "BudgetExhausted",
                "CallBudget",
            ),
            "lorekit.agents.adapt.controller": ("AdaptAgent",),
            "lorekit.agents.adapt.executor": (
                "Executor",
                "SubtaskResult",
                "verdict_of",
            ),
            "lorekit.agents.adapt.order": (
                "AllOf",
                "AnyOf",
                "OrderError",
                "OrderNode",
                "StepRef",
                "evaluate",
                "evaluate_async",
                "format_order",
                "parse_execution_order",
                "step_indices",
            ),
            "lorekit.agents.adapt.planner": (
                "Plan",
                "PlanAttempt",
                "PlanError",
                "Planner",
                "parse_plan",
            ),
        },
    )
