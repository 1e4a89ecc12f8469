"""ADaPT's registrations: the agent, its baselines, its view, its scripted test models.

LoreKit's ``pyproject.toml`` names :func:`register` in the ``lorekit.plugins``
entry-point group, exactly as an outside package would.
"""

from __future__ import annotations

from lorekit.registry import Registry

FAMILY = ("react", "plan-execute", "try-again", "reflexion", "adapt")
"""Agents that share ADaPT's executor, planner and reflection prompts."""

_TESTING = "lorekit.agents.adapt.testing.envs"

REPLAY_READERS = (
    (
        "adapt-textcraft",
        "lorekit.agents.adapt.replay_textcraft:READER",
        "ADaPT's published TextCraft run (ADaPT_maxd3_textcraft_*.json)",
    ),
    (
        "adapt-alfworld",
        "lorekit.agents.adapt.replay_alfworld:READER",
        "ADaPT's published ALFWorld run (ADaPT_maxd3_alfworld_*.json); needs the official games",
    ),
    (
        "adapt-webshop",
        "lorekit.agents.adapt.replay_webshop:READER",
        "ADaPT's published WebShop run (ADaPT_maxd3_webshop_*.json): its recorded purchases",
    ),
)
"""Readers of ADaPT's published result files (``lorekit reproduce replay FILE``)."""

PROMPT_ORDER = (
    "stable parts first: the system message (manual, rules, worked examples), then the "
    "task and state; each turn appends to the previous prompt"
)


def register(registry: Registry) -> None:
    """Add ADaPT, ReAct, Plan-and-Execute, Try-Again and Reflexion."""
    agents = {
        "react": (
            "lorekit.agents.adapt.react:ReActAgent",
            "reason-then-act turns: ADaPT's executor alone, d_max x its turns",
        ),
        "adapt": (
            "lorekit.agents.adapt.controller:AdaptAgent",
            "ADaPT: executor first, AND/OR decomposition only on failure",
        ),
        "plan-execute": (
            "lorekit.agents.adapt.baselines:PlanExecuteAgent",
            "one plan up front, each step executed once",
        ),
        "try-again": (
            "lorekit.agents.adapt.baselines:TryAgainAgent",
            "up to d_max fresh executor trials on the whole task",
        ),
        "reflexion": (
            "lorekit.agents.adapt.baselines:ReflexionAgent",
            "executor trials with a lesson kept after each failure",
        ),
    }
    for name, (target, description) in agents.items():
        registry.add_agent(name, target, description, prompt_order=PROMPT_ORDER)
    registry.add_view("adapt", "lorekit.agents.adapt.view:VIEW", order=10)
    for name, target, description in REPLAY_READERS:
        registry.add("replay", name, target, description)
    for agent in FAMILY:
        registry.add_scripted(
            "textcraft",
            agent,
            f"{_TESTING}:textcraft_roles",
            "scripted TextCraft executor (capability 2, noise 0.1) and planner "
            "(lorekit.agents.adapt.testing.textcraft)",
            takes_env=True,
        )
        for env in ("alfworld", "webshop"):
            registry.add_scripted(
                env,
                agent,
                f"{_TESTING}:{env}_roles",
                f"scripted {env} executor and one-step planner ({_TESTING})",
                takes_env=True,
            )
