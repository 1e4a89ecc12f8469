"""The game's text grammar for ALFWorld's engine: parsed once, derived lean.

A game's grammar is ALFWorld's with its task sentence filled in, so the parse
of everything else is shared by all games of a domain. Derivation follows
textworld 1.7.0's code with two changes that keep its output: the parses of
rule texts and queries are kept, and contexts are copied one level deep
(derivations only read the entities and variables they are given).
"""

from __future__ import annotations

import copy
import functools
import json
import re
from collections import OrderedDict, defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

import textworld.logic
from textworld.envs.pddl import logic as pddl_logic
from textworld.envs.pddl import textgen
from textworld.envs.pddl.textgen import ContextSensitiveGrammar

from lorekit.envs.alfworld.caching import cached, digest

_logics: OrderedDict[str, Any] = OrderedDict()
_shared_logics: OrderedDict[str, Any] = OrderedDict()


def game_logic(domain: str, grammar: str) -> Any:
    """TextWorld's parsed domain and grammar, cached by their text.

    A game's grammar is ALFWorld's with the task sentence filled in, so the
    parse of everything but that sentence is shared by all games of a domain;
    each game gets a copy with its own ``task`` rule (a grammar holding other
    than one ``task`` rule is parsed whole).
    """
    return cached(_logics, digest(domain, grammar), lambda: _parse_logic(domain, grammar))


def _parse_logic(domain: str, grammar: str) -> Any:
    found = list(_TASK_RULE.finditer(grammar))
    if len(found) != 1:
        logic = pddl_logic.GameLogic(domain=domain, grammar=grammar)
        logic.grammar = _FastGrammar(logic.grammar._rules)
        return logic
    task = found[0]
    shared_text = grammar[: task.start(1)] + _TASK_SENTINEL + grammar[task.end(1) :]
    shared = cached(
        _shared_logics,
        digest(domain, shared_text),
        lambda: pddl_logic.GameLogic(domain=domain, grammar=shared_text),
    )
    rhs = json.loads(f'"{task.group(1)}"')
    own = ContextSensitiveGrammar.parse(json.dumps({"task": [{"rhs": rhs}]}))
    logic = copy.copy(shared)
    logic.grammar = _FastGrammar({**shared.grammar._rules, "task": own._rules["task"]})
    return logic


#: The ``task`` rule of ALFWorld's grammar (``"rhs": "Your task is to: ..."``).
_TASK_RULE = re.compile(r'"task"\s*:\s*\[\s*\{\s*"rhs"\s*:\s*"((?:[^"\\]|\\.)*)"\s*\}\s*\]')
_TASK_SENTINEL = "Your task is to: UNKNOWN GOAL."


class _FastGrammar(ContextSensitiveGrammar):  # type: ignore[misc]
    """TextWorld's grammar (textworld 1.7.0's ``derive`` and ``replace``), with
    the parse of each text and query kept, and contexts copied one level
    deep: derivations only read the entities and variables they are given."""

    def __init__(self, rules: Mapping[str, list[Any]]) -> None:
        super().__init__()
        self._rules = defaultdict(list, rules)
        for alternatives in rules.values():
            for rule in alternatives:
                _speed_up(rule.rhs)

    def derive(self, start: str, context: Mapping[str, Any] | None = None) -> str:
        derivation = copy.deepcopy(_parsed(start))[::-1]
        for symbol in derivation:
            symbol.context = _copy_context(context or {})
        derived = []
        while derivation:
            symbol = derivation.pop()
            if isinstance(symbol, textgen.TerminalSymbol):
                derived.append(symbol)
            elif isinstance(symbol, textgen.NonterminalSymbol):
                derivation += self.replace(symbol)[::-1]
            else:  # conditional, eval and list symbols
                derivation += symbol.derive()[::-1]
        return "".join(map(str, derived))

    def replace(self, start: Any) -> list[Any]:
        rules = self._rules.get(str(start))
        if not rules:
            raise textgen.CSGUnknownSymbolError(start)
        state, mapping = start.context["state"], start.context["mapping"]
        rule = next(
            r
            for r in rules
            if not r.condition or state.all_assignments(_query(r.condition), mapping)
        )
        symbols: list[Any] = copy.deepcopy(rule.rhs)
        for symbol in symbols:
            symbol.context = _copy_context(start.context)
        return symbols


class _FastConditional(textgen.ConditionalSymbol):  # type: ignore[misc]
    """``{expression | query}``: one copy of the expression per match."""

    def derive(self) -> list[Any]:
        context = _copy_context(self.context)
        contexts = [context]
        if self.given:
            contexts = []
            for found in context["state"].all_assignments(_query(self.given), context["mapping"]):
                each = _copy_context(context)
                infos = each["entity_infos"]
                each["variables"].update({ph.name: infos[var.name] for ph, var in found.items()})
                each["mapping"].update(found)
                contexts.append(each)
        copies = []
        for each in contexts:
            expression = copy.deepcopy(self.expression)
            expression.context = _copy_context(each)
            copies.append(expression)
        return copies


def _copy_context(context: Mapping[str, Any]) -> dict[str, Any]:
    shallow = dict(context)
    shallow["variables"] = dict(context.get("variables", {}))
    shallow["mapping"] = dict(context.get("mapping", {}))
    return shallow


def _speed_up(symbols: Iterable[Any]) -> None:
    """Turn the conditional symbols of a parse into :class:`_FastConditional`."""
    for symbol in symbols:
        if type(symbol) is textgen.ConditionalSymbol:
            symbol.__class__ = _FastConditional
        if isinstance(symbol, textgen.ConditionalSymbol):
            _speed_up([symbol.expression])
        elif isinstance(symbol, textgen.ListSymbol):
            _speed_up([symbol.symbol])


@functools.lru_cache(maxsize=1024)
def _parsed(text: str) -> list[Any]:
    symbols: list[Any] = textgen._parse_and_convert(text, rule_name="symbols")
    _speed_up(symbols)
    return symbols


@functools.lru_cache(maxsize=1024)
def _query(text: str) -> Any:
    return textworld.logic.Rule.parse_conjunctive_query(text)


def template_uses(template: str, placeholders: Iterable[str]) -> frozenset[str]:
    """The placeholders a command template's text can depend on.

    ``go to [{r.name | receptacleatlocation(r:receptacle, lend:location)}]``
    names ``r`` and ``lend``, not the agent or the start location, so the text
    of "go to fridge 1" is derived once, not once per place it is reached from.
    Only a template that names every placeholder of its queries and expands no
    grammar rule (``#...#``) is narrowed: anything else depends on them all.
    """
    names = frozenset(placeholders)
    words = set(_WORD.findall(template))
    queried = set(_QUERY_PLACEHOLDER.findall(template))
    if "#" in template or not queried <= names:
        return names
    return frozenset(name for name in names if name in words)


_WORD = re.compile(r"[A-Za-z_]\w*")
_QUERY_PLACEHOLDER = re.compile(r"([A-Za-z_]\w*)\s*:")
