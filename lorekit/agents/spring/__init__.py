"""SPRING on Crafter: a question graph per step, with a choice of game knowledge.

``SpringAgent(context="paper" | "actions" | "experience:FILE")``; the
questions are ``spring.yaml``. See ``docs/spring.md``.
"""

from lorekit.agents.spring.agent import SpringAgent, SpringPassError
from lorekit.agents.spring.context import SpringContext, parse_context

__all__ = ["SpringAgent", "SpringContext", "SpringPassError", "parse_context"]
