"""ALFWorld's engine, TextWorld's ``PddlEnv``, with its slow parts cached.

This is the same engine ``alfworld``'s ``AlfredTWEnv`` runs: the PDDL domain
and problem grounded by Fast Downward, the game's text grammar deriving every
observation and admissible command, and alfworld's own ``Demangler`` naming
the entities ("mug 2"). Five things differ, none of them in what a player
sees or can do:

- *Grounding is cached.* Translating PDDL to SAS takes most of a reset; the
  translation depends only on the domain and problem text, so it is kept
  (per process, by content hash, for the last ``TRANSLATION_CACHE_SIZE``
  games) and a second reset of the same game only reloads it. The second
  translation ``PddlEnv`` makes, for Fast Downward's replanner, is skipped:
  LoreKit's expert does not use it.
- *Command texts are cached.* Every step, ``PddlEnv`` re-derives the text of
  each applicable action from the grammar (most of a step's time). The text
  of an action depends only on static facts and on the entities its
  template names ("go to {r}" does not name the place the agent stands),
  so it is derived once per game and those entities, and kept across resets.
- *The grammar's parse is shared.* A game's grammar is ALFWorld's with its
  task sentence filled in: the rest is parsed once per domain, the task
  rule per game.
- *Derivation is lean.* TextWorld re-parses a rule's text and queries each
  time it expands them and deep-copies every context (entities included);
  here parses are kept and contexts copied one level deep, as derivations
  only read them (``_FastGrammar``, which follows textworld 1.7.0's code).
- *Text is deterministic.* TextWorld lists entities in set order, which
  depends on Python's per-process string hashing, so the same game could
  list "a cabinet 2, a cabinet 1" in one process and the reverse in another.
  Here every grammar query enumerates its matches in sorted order.

``tests/envs/alfworld/test_alfworld_engine.py`` and
``test_alfworld_engine_caches.py`` check that observations and admissible
commands equal the unmodified ``PddlEnv``'s (as multisets where the
original's order is hash-dependent) along walkthroughs and random walks.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import hashlib
import json
import re
import threading
from collections import Counter, OrderedDict, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, TypeVar

import fast_downward
import textworld.logic
from alfworld.agents.utils.misc import Demangler
from textworld.core import EnvInfos, GameState
from textworld.envs.pddl import PddlEnv, textgen
from textworld.envs.pddl import logic as pddl_logic
from textworld.envs.pddl.textgen import ContextSensitiveGrammar
from textworld.logic import Proposition

#: Games whose grounding, parsed grammar and command texts are kept per process
#: (least recently used first out); see docs/alfworld.md "Speed" for the memory.
TRANSLATION_CACHE_SIZE = 64

_translations: OrderedDict[str, tuple[Any, str]] = OrderedDict()
_logics: OrderedDict[str, Any] = OrderedDict()
_shared_logics: OrderedDict[str, Any] = OrderedDict()
_command_texts: OrderedDict[str, dict[str, str]] = OrderedDict()
_lock = threading.Lock()
_T = TypeVar("_T")


def _cached(cache: OrderedDict[str, _T], key: str, build: Callable[[], _T]) -> _T:
    """``cache[key]``, built on a miss, keeping the newest ``TRANSLATION_CACHE_SIZE``."""
    with _lock:
        if key in cache:
            cache.move_to_end(key)
            return cache[key]
    value = build()  # outside the lock: two threads may build the same entry once each
    with _lock:
        cache[key] = value
        while len(cache) > TRANSLATION_CACHE_SIZE:
            cache.popitem(last=False)
    return value


def _digest(*texts: str) -> str:
    return hashlib.sha256("\0".join(texts).encode()).hexdigest()


def _translate(domain: str, problem: str) -> tuple[Any, str]:
    """Fast Downward's (task, SAS text) for a domain and problem, cached."""
    return _cached(
        _translations,
        _digest(domain, problem),
        lambda: fast_downward.pddl2sas(domain, problem, verbose=False),
    )


def _game_logic(domain: str, grammar: str) -> Any:
    """TextWorld's parsed domain and grammar, cached by their text.

    A game's grammar is ALFWorld's with the task sentence filled in, so the
    parse of everything but that sentence is shared by all games of a domain;
    each game gets a copy with its own ``task`` rule (a grammar holding other
    than one ``task`` rule is parsed whole).
    """
    return _cached(_logics, _digest(domain, grammar), lambda: _parse_logic(domain, grammar))


def _parse_logic(domain: str, grammar: str) -> Any:
    found = list(_TASK_RULE.finditer(grammar))
    if len(found) != 1:
        logic = pddl_logic.GameLogic(domain=domain, grammar=grammar)
        logic.grammar = _FastGrammar(logic.grammar._rules)
        return logic
    task = found[0]
    shared_text = grammar[: task.start(1)] + _TASK_SENTINEL + grammar[task.end(1) :]
    shared = _cached(
        _shared_logics,
        _digest(domain, shared_text),
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


def _template_uses(template: str, placeholders: Iterable[str]) -> frozenset[str]:
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


class _SortedPddlState(pddl_logic.PddlState):  # type: ignore[misc]
    """``PddlState`` from a cached translation, whose queries list matches in
    sorted order (so the text does not depend on string hashing)."""

    def __init__(self, downward_lib: Any, problem: str, logic: Any, translated: tuple[Any, str]):
        # Mirrors PddlState.__init__ (textworld 1.7.0) minus the two pddl2sas calls.
        self._facts: defaultdict[Any, set[Any]] = defaultdict(set)
        self._vars_by_name: dict[str, Any] = {}
        self._vars_by_type: defaultdict[str, set[Any]] = defaultdict(set)
        self._var_counts: Counter[str] = Counter()
        self._logic = logic
        self.downward_lib = downward_lib
        self.pddl_problem = problem
        self.task, self.sas = translated
        self._actions = {a.name: a for a in self.task.actions}
        for type_ in self.task.types:
            with contextlib.suppress(ValueError):  # the type is known already
                logic.types.add(textworld.logic.Type(type_.name, type_.supertype_names))
        downward_lib.load_sas(self.sas.encode("utf-8"))
        self.name2type = {o.name: o.type_name for o in self.task.objects}
        self.add_facts(filter(None, (_init_fact(atom, self.name2type) for atom in self.task.init)))
        size = downward_lib.get_state_size()
        atoms = (pddl_logic.Atom * size)()
        downward_lib.get_state(atoms)
        facts = (atom.get_fact(self.name2type) for atom in atoms)
        self.add_facts(fact for fact in facts if not fact.is_negation)

    def all_assignments(self, rule: Any, mapping: Any = None, *args: Any, **kwargs: Any) -> Any:
        found = super().all_assignments(rule, mapping, *args, **kwargs)
        order = [ph.name for ph in rule.placeholders]
        return sorted(found, key=lambda m: _mapping_key(m, order))


def _mapping_key(mapping: Mapping[Any, Any], order: list[str]) -> list[str]:
    """Matches sort by their variables in the order the query names them
    ("receptacleatlocation(r, l)": by receptacle, then location)."""
    by_name = {
        str(ph.name): str(var.name) if var is not None else "" for ph, var in mapping.items()
    }
    return [by_name.get(name, "") for name in order]


def _init_fact(atom: Any, name2type: Mapping[str, str]) -> Proposition | None:
    """A fact of the problem's init section (as ``PddlState`` reads them)."""
    conditions = fast_downward.translate.pddl.conditions
    expressions = fast_downward.translate.pddl.f_expression
    if isinstance(atom, conditions.Atom):
        if atom.predicate == "=":
            return None
        args = [textworld.logic.Variable(a, name2type[a]) for a in atom.args]
        return Proposition(atom.predicate, args)
    if isinstance(atom, expressions.Assign):
        if atom.fluent.symbol == "total-cost":
            return None
        name = f"{atom.expression.value}"
        if name.isdigit():
            return None
        args = [textworld.logic.Variable(a, name2type[a]) for a in atom.fluent.args]
        return Proposition(name, args)
    return None


class AlfredEngine(PddlEnv):  # type: ignore[misc]
    """One ALFWorld game on TextWorld's PDDL engine; see the module docstring.

    ``load`` takes the parsed ``game.tw-pddl`` mapping. After ``reset`` and
    each ``step``, :attr:`state` is TextWorld's game state (``feedback``,
    ``won``, ``admissible_commands``).
    """

    def __init__(self) -> None:
        super().__init__(EnvInfos(won=True, admissible_commands=True))
        self._commands: dict[str, str] = {}
        self._uses: dict[str, frozenset[str]] = {}
        self._translated: tuple[Any, str] | None = None

    def load(self, filename_or_data: Any) -> None:
        data = dict(filename_or_data)
        self._game_file = None
        self._game_data = data
        self.walkthrough = data.get("walkthrough")
        self._logic = _game_logic(data["pddl_domain"], data["grammar"])
        self._translated = _translate(data["pddl_domain"], data["pddl_problem"])
        # Texts depend on the entity names, so they are kept per game.
        game_key = _digest(data["pddl_domain"], data["pddl_problem"], data["grammar"])
        self._commands = _cached(_command_texts, game_key, dict)
        self._uses = {}
        self._pddl_state = self._fresh_state()
        self._entity_infos = self._get_entity_infos()
        # What alfworld's AlfredDemangler wrapper does, with alfworld's own Demangler.
        demangler = Demangler(game_infos=self._entity_infos, shuffle=False)
        for info in self._entity_infos.values():
            info.name = demangler.demangle_alfred_name(info.id)

    def _fresh_state(self) -> Any:
        assert self._translated is not None
        return _SortedPddlState(
            self.downward_lib, self._game_data["pddl_problem"], self._logic, self._translated
        )

    def reset(self) -> Any:
        """PddlEnv.reset (textworld 1.7.0), from the cached translation."""
        self._pddl_state = self._fresh_state()
        self.prev_state = None
        self.state = GameState()
        self._last_action = None
        self._moves = 0
        context = {
            "state": self._pddl_state,
            "facts": list(self._pddl_state.facts),
            "variables": {},
            "mapping": {},
            "entity_infos": self._entity_infos,
        }
        self.state.feedback = self._logic.grammar.derive("#intro#", context)
        self.state.raw = self.state.feedback
        self._gather_infos()
        return self.state

    def _gather_infos(self) -> None:
        """PddlEnv's infos, with each action's command text derived once."""
        state = self._pddl_state
        self.state["won"] = state.check_goal()
        self.state["lost"] = False
        self.state["_entity_infos"] = dict(self._entity_infos)
        facts = list(state.facts)
        self.state["_facts"] = facts
        self.state["last_action"] = None
        self.state["_last_action"] = self._last_action
        actions = list(state.all_applicable_actions())
        self.state["_valid_actions"] = actions
        mapping: dict[str, str] | None = None
        commands = []
        for action in actions:
            key = self._command_key(action)
            command = self._commands.get(key)
            if command is None:
                if mapping is None:
                    mapping = {k: info.name for k, info in self._entity_infos.items()}
                context = {
                    "state": state,
                    "facts": facts,
                    "variables": {
                        ph.name: self._entity_infos[var.name] for ph, var in action.mapping.items()
                    },
                    "mapping": action.mapping,
                    "entity_infos": self._entity_infos,
                }
                action.command_template = self._logic.grammar.derive(
                    action.command_template, context
                )
                command = action.format_command(mapping)
                self._commands[key] = command
            commands.append(command)
        self.state["_valid_commands"] = commands
        self.state["admissible_commands"] = sorted(set(commands))
        self.state["moves"] = self._moves

    def _command_key(self, action: Any) -> str:
        """What an action's command text depends on: its name and the entities
        its template mentions (see :func:`_template_uses`)."""
        uses = self._uses.get(action.name)
        if uses is None:
            names = [str(ph.name) for ph in action.mapping]
            uses = self._uses[action.name] = _template_uses(action.command_template, names)
        return f"{action.name} " + " ".join(
            str(var.name) for ph, var in action.mapping.items() if ph.name in uses
        )

    # -- what LoreKit reads --------------------------------------------------------

    def named_facts(self) -> Iterator[tuple[str, tuple[str, ...]]]:
        """The current facts as (predicate, display names of the arguments)."""
        infos = self._entity_infos
        for fact in self._pddl_state.facts:
            names = tuple(
                infos[v.name].name.strip() if v.name in infos else str(v.name)
                for v in fact.arguments
            )
            yield str(fact.name), names

    def display_names(self) -> dict[str, str]:
        """Engine id -> the name players see."""
        return {k: info.name.strip() for k, info in self._entity_infos.items()}


def facts_in(engine: AlfredEngine) -> Iterable[tuple[str, tuple[str, ...]]]:
    """Shorthand used by the env: the engine's facts with display names."""
    return list(engine.named_facts())
