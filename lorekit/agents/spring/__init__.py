"""SPRING on Crafter: a question graph per step, with a choice of game knowledge.

``SpringAgent(context="paper" | "actions" | "experience:FILE")``; the
questions are ``spring.yaml``. See ``docs/spring.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lorekit.lazyexports import lazy_attributes

if TYPE_CHECKING:
    from lorekit.agents.spring.agent import SpringAgent, SpringPassError
    from lorekit.agents.spring.context import SpringContext, parse_context

__all__ = ["SpringAgent", "SpringContext", "SpringPassError", "parse_context"]

if not TYPE_CHECKING:  # mypy checks the names above; at run time they load on use
    __getattr__ = lazy_attributes(
        __name__,
        {
            "lorekit.agents.spring.agent": (
                "SpringAgent",
                "SpringPassError",
            ),
            "lorekit.agents.spring.context": (
                "SpringContext",
                "parse_context",
            ),
        },
    )
