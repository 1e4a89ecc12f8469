"""Text actions for MiniWoB++, in AutoManual's vocabulary.

Models write ``click_xpath //button[text()="Submit"]`` or, as code would,
``click_xpath('//button[text()="Submit"]')``; both parse to the same
:class:`Action`. ``type`` takes a quoted string (``type "hello world"``) or
the rest of the line; ``press_key`` a key name (enter, space, tab,
backspace, arrows, ...).
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass

VERBS = ("click_xpath", "click_option", "move_mouse_on", "type", "press_key")
FORMS = (
    "click_xpath <xpath>",
    "click_option <xpath of an <option>>",
    "move_mouse_on <xpath>",
    'type "<text>"',
    "press_key <enter|space|tab|backspace|delete|escape|up|down|left|right|home|end>",
)
_CALL = re.compile(r"^(\w+)\s*\((.*)\)\s*;?$", re.DOTALL)


class ActionSyntaxError(ValueError):
    """Not one of the action forms; the message shows them."""


@dataclass(frozen=True)
class Action:
    verb: str
    argument: str

    def render(self) -> str:
        if self.verb == "type":
            return f"type {json.dumps(self.argument)}"
        return f"{self.verb} {self.argument}"


def parse_action(text: str) -> Action:
    """``text`` as an :class:`Action`, or :class:`ActionSyntaxError`."""
    raw = str(text).strip()
    call = _CALL.match(raw)
    if call and call.group(1) in VERBS:
        verb, inner = call.group(1), call.group(2).strip()
        try:
            value = ast.literal_eval(inner) if inner else ""
        except (ValueError, SyntaxError, RecursionError, MemoryError):  # deep nesting
            value = inner
        return _checked(verb, str(value))
    verb, _, rest = raw.partition(" ")
    if verb not in VERBS:
        raise ActionSyntaxError(f"not an action: {raw[:80]!r}; write one of: {'; '.join(FORMS)}")
    rest = rest.strip()
    if verb == "type" and len(rest) >= 2 and rest[0] == rest[-1] and rest[0] in "\"'":
        try:
            rest = str(ast.literal_eval(rest))
        except (ValueError, SyntaxError, RecursionError, MemoryError):  # deep nesting
            rest = rest[1:-1]
    return _checked(verb, rest)


def _checked(verb: str, argument: str) -> Action:
    if verb != "type" and not argument.strip():
        raise ActionSyntaxError(
            f"{verb} needs an argument: {dict(zip(VERBS, FORMS, strict=True))[verb]}"
        )
    return Action(verb, argument if verb == "type" else argument.strip())
