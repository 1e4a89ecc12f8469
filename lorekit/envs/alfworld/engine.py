"""ALFWorld's engine, TextWorld's ``PddlEnv``, with its slow parts cached.

This is the same engine ``alfworld``'s ``AlfredTWEnv`` runs: the PDDL domain
and problem grounded by Fast Downward, the game's text grammar deriving every
observation and admissible command, and alfworld's own ``Demangler`` naming
the entities ("mug 2"). Five things differ, none of them in what a player
sees or can do:

- *Grounding is cached.* Translating PDDL to SAS takes most of a reset; the
  translation depends only on the domain and problem text, so it is kept
  (per process, by content hash, for the last ``TRANSLATION_CACHE_SIZE``
  games) and a second reset of the same game only reloads it. Its SAS text
  is also kept on disk, under the user's cache folder, for the processes that
  come after (each ALFWorld episode may play in a child process of its own);
  the task beside it is parsed again, which takes milliseconds. The second
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
  only read them (:mod:`lorekit.envs.alfworld.grammar`, which follows
  textworld 1.7.0's code).
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
import io
import sys
import threading
from collections import Counter, OrderedDict, defaultdict
from collections.abc import Callable, Iterator, Mapping
from importlib.metadata import PackageNotFoundError, version
from typing import Any, TypeVar

import fast_downward
import textworld.logic
from alfworld.agents.utils.misc import Demangler
from textworld.core import EnvInfos, GameState
from textworld.envs.pddl import PddlEnv
from textworld.envs.pddl import logic as pddl_logic
from textworld.logic import Proposition

from lorekit.envs.alfworld.caching import TRANSLATION_CACHE_SIZE, DiskTexts, cached, digest
from lorekit.envs.alfworld.grammar import game_logic, template_uses

__all__ = ["TRANSLATION_CACHE_SIZE", "AlfredEngine"]

_translations: OrderedDict[str, tuple[Any, str]] = OrderedDict()
_command_texts: OrderedDict[str, dict[str, str]] = OrderedDict()

_T = TypeVar("_T")
try:
    _DOWNWARD_VERSION = version("fast-downward-textworld")
except PackageNotFoundError:  # pragma: no cover - a source checkout of it
    _DOWNWARD_VERSION = str(getattr(fast_downward, "__file__", "unknown"))

ENGINE_LOCK = threading.RLock()
"""Held by every engine call. TextWorld's grammar and query parsers are
module-level and not thread-safe, and Fast Downward's translator swaps
``sys.stdout`` and sets module-wide options while it runs, so two engines in
one process must take turns. The env runs in a process of its own
(``execution = "process"``), where the lock costs nothing; an env forced
onto threads stays correct, one call at a time."""


SAS_FORMAT = 1
"""Part of the on-disk key of a grounding: raise it when what is kept changes meaning."""

GROUNDINGS = DiskTexts("alfworld-sas", max_bytes=512 * 1024 * 1024)
"""Fast Downward's SAS text of a game, across processes: grounding is most of a cold
reset (0.05 to 1 s a game), and every ALFWorld episode in a child process of its own
starts cold. About 100 KB a game compressed; the least recently used go past 512 MB."""


def _translate(domain: str, problem: str) -> tuple[Any, str]:
    """Fast Downward's (task, SAS text) for a domain and problem, cached in the process
    and, for the SAS text, on disk (:data:`GROUNDINGS`)."""
    return cached(_translations, digest(domain, problem), lambda: _load(domain, problem))


def _load(domain: str, problem: str) -> tuple[Any, str]:
    """The grounding from disk when it was made before, with the task parsed again
    (parsing and normalising take milliseconds; the SAS text is what costs)."""
    key = digest(f"sas-{SAS_FORMAT}", _DOWNWARD_VERSION, domain, problem)
    made: list[Any] = []

    def ground() -> str:
        task, sas = _pddl2sas(domain, problem)
        made.append(task)
        return sas

    sas = GROUNDINGS.get(key, ground)
    return (made[0] if made else _parsed_task(domain, problem)), sas


def _with_translator_argv(fn: Callable[[], _T]) -> _T:
    """Run ``fn`` with the command line Fast Downward's option module parses, putting
    ``sys.argv`` back after it (the translator overwrites it)."""
    argv = list(sys.argv)
    try:
        sys.argv[:] = ["translate.py", "domain", "task"]
        return fn()
    finally:
        sys.argv[:] = argv


def _pddl2sas(domain: str, problem: str) -> tuple[Any, str]:
    """Fast Downward's translation."""
    translated: tuple[Any, str] = _with_translator_argv(
        lambda: fast_downward.pddl2sas(domain, problem, verbose=False)
    )
    return translated


def _parsed_task(domain: str, problem: str) -> Any:
    """The normalised task ``fast_downward.pddl2sas`` returns beside its SAS text: the
    same parse and normalisation, without the grounding (which leaves the task as it
    is; tests/envs/alfworld/test_alfworld_engine_caches.py checks they agree)."""

    def parse() -> Any:
        from fast_downward.translate import normalize
        from fast_downward.translate.pddl_parser import lisp_parser, parsing_functions

        task = parsing_functions.parse_task(
            lisp_parser.parse_nested_list(domain.split("\n")),
            lisp_parser.parse_nested_list(problem.split("\n")),
        )
        with contextlib.redirect_stdout(io.StringIO()):
            normalize.normalize(task)
        return task

    return _with_translator_argv(parse)


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
        with ENGINE_LOCK:
            self._load(filename_or_data)

    def reset(self) -> Any:
        """PddlEnv.reset (textworld 1.7.0), from the cached translation."""
        with ENGINE_LOCK:
            return self._reset()

    def step(self, command: str) -> Any:
        with ENGINE_LOCK:
            return super().step(command)

    def _load(self, filename_or_data: Any) -> None:
        data = dict(filename_or_data)
        self._game_file = None
        self._game_data = data
        self.walkthrough = data.get("walkthrough")
        self._logic = game_logic(data["pddl_domain"], data["grammar"])
        self._translated = _translate(data["pddl_domain"], data["pddl_problem"])
        # Texts depend on the entity names, so they are kept per game.
        game_key = digest(data["pddl_domain"], data["pddl_problem"], data["grammar"])
        self._commands = cached(_command_texts, game_key, dict)
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

    def _reset(self) -> Any:
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
        its template mentions (see :func:`template_uses`)."""
        uses = self._uses.get(action.name)
        if uses is None:
            names = [str(ph.name) for ph in action.mapping]
            uses = self._uses[action.name] = template_uses(action.command_template, names)
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
