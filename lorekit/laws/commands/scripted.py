"""``scripted:simulate`` as the model of a laws command's role.

``lorekit run`` reads ``--model scripted:simulate`` as the scripted test
models a method registers for an agent on an env. The laws' model commands
have neither to look them up by: extraction picks its scripted extractors
with its own ``--simulate careful|careless``, and the rewarder has none. Left
alone, the name would reach a scripted backend that answers nothing useful
(an extraction of no laws, predicates that all fall back), so each command
refuses it in one line that says what to use instead.
"""

from __future__ import annotations

from lorekit.cli.errors import UserError
from lorekit.config import RunConfig


def refuse_simulate(cfg: RunConfig, role: str, instead: str) -> None:
    """Stop when ``role`` (or the default role serving it) is ``scripted:simulate``."""
    settings = cfg.roles.get(role) or cfg.roles.get(cfg.default_role)
    if settings is not None and settings.provider == "scripted" and settings.model == "simulate":
        raise UserError(f"scripted:simulate for the {role} role: {instead}")
