"""ALFWorld as Python methods, for agents that act by writing code.

AutoManual's planner does not type commands; it writes Python such as
``obs = agent.go_to("cabinet_1")`` and LoreKit runs that code in
:mod:`lorekit.sandbox`. :class:`AlfWorldCodeApi` is the object behind the
sandbox's ``agent`` proxy: one method per ALFWorld action, each sending one
command to the :class:`~lorekit.envs.alfworld.env.AlfWorldEnv` and returning
its observation, plus a few read-only queries.

Every argument is a plain ``str`` and every result JSON data, so the
sandbox's gate can check calls against the annotations alone. Names are
accepted as ``"mug 1"`` or ``"mug_1"`` (AutoManual's form), in any case and
with spaces around them; anything else (an empty string, a bare type such as
``"mug"``, an article as in ``"a mug 1"``, two names, punctuation) raises
:class:`BadName` before the engine sees it, because such a call is a bug in
the code, not a move in the game. A well-formed name the room does not have
(``"spaceship 1"``) is a move: the engine answers "Nothing happens." and the
step counts, as it would for a typed command. Once the episode is over, every
action returns the env's own "episode is over" message instead of raising.

The published AutoManual agent's names are offered too: ``take_from``,
``put_in_or_on``, ``heat_with``, ``cool_with`` and ``clean_with`` (the short
``take``/``put``/... stay as aliases), and :meth:`~AlfWorldCodeApi.state`
gives ``holding`` and ``location`` as that agent's attributes read them
("nothing" in the hand, "middle of room" before the first ``go_to``); the
sandbox shows them to the code as plain attributes (``agent.holding``).
Two options make the actions answer as that agent's did: ``state_line``
ends every action's text with "You are at X and holding Y.", and
``revisit`` makes ``go_to`` the place you stand at show it again (the
engine itself answers "Nothing happens.").

The object keeps :attr:`~AlfWorldCodeApi.history`, every command it sent and
the env's :class:`~lorekit.envs.base.Step` for it, for the agent (the sandbox's
``result.calls`` records the method calls; this records what reached the env).
Make one object per episode.

It wraps either a plain :class:`AlfWorldEnv` or the harness's awaitable handle
on one (:class:`~lorekit.envs.asyncenv.AsyncEnv`, e.g. the env in its own
process). With a handle, build the object on the event loop and run the code
with ``run_code_async``: each call then waits, on the sandbox's thread, for
the env call it sends to the loop.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from lorekit.envs.alfworld.env import AlfWorldEnv
from lorekit.envs.alfworld.planner import Act
from lorekit.envs.alfworld.text import Syntax, render
from lorekit.envs.alfworld.world import name_key
from lorekit.envs.asyncenv import AsyncEnv, call_blocking, owning_loop
from lorekit.envs.base import Step, TextEnv

_NAME = re.compile(r"([a-z]+)(?:_| +)([0-9]+)")
_SHOWN_CHARS = 60
R = TypeVar("R")


class BadName(ValueError):
    """An argument that is not an ALFWorld name ("mug 1" or "mug_1")."""


@dataclass(frozen=True)
class CodeStep:
    """One command the code's calls sent to the env, and what the env answered."""

    command: str
    step: Step
    shown: str = ""
    """The text the call returned, where it differs from the env's observation
    (the state line, a place shown again); "" otherwise."""

    @property
    def text(self) -> str:
        """What the code saw for this command."""
        return self.shown or self.step.observation


def entity_name(value: str, what: str = "name") -> str:
    """``value`` as the engine's display name ("Mug_1 " -> "mug 1"); :class:`BadName` if odd."""
    if not isinstance(value, str):
        raise BadName(f"{what} must be a str such as 'mug 1', got {type(value).__name__}")
    text = value.strip().lower()
    match = _NAME.fullmatch(text)
    if match is None:
        shown = value if len(value) <= _SHOWN_CHARS else value[:_SHOWN_CHARS] + "..."
        why = "is empty" if not text else "is not an ALFWorld name"
        raise BadName(
            f"{what} {shown!r} {why}: write one object or receptacle as its type and number, "
            "like 'mug 1' or 'mug_1' (no article, as the room lists them)"
        )
    return f"{match.group(1)} {match.group(2)}"


class AlfWorldCodeApi:
    """The ``agent`` object that code-writing agents drive ALFWorld through.

    Actions return the observation text in the env's form (``object_ids=True``
    envs say "mug_1"); queries never step the env. Pass ``api_methods=ACTIONS``
    to ``run_code`` to hide the queries, e.g. for agents that must infer state
    from observations alone.
    """

    ACTIONS: ClassVar[tuple[str, ...]] = (
        "go_to",
        "open",
        "close",
        "take",
        "put",
        "heat",
        "cool",
        "clean",
        "take_from",
        "put_in_or_on",
        "heat_with",
        "cool_with",
        "clean_with",
        "use",
        "examine",
        "inventory",
        "look",
    )
    QUERIES: ClassVar[tuple[str, ...]] = ("holding", "location", "done", "won", "state")
    NOTHING: ClassVar[str] = "nothing"
    MIDDLE: ClassVar[str] = "middle of room"

    def __init__(
        self, env: AlfWorldEnv | AsyncEnv, *, state_line: bool = False, revisit: bool = False
    ) -> None:
        self._env = env
        self._state_line = state_line
        self._revisit = revisit
        self._here_text = ""  # what the place you stand at showed last (``revisit``)
        self._loop = owning_loop(env, "AlfWorldCodeApi")
        if not isinstance(env, (AsyncEnv, AlfWorldEnv)):
            raise TypeError(f"AlfWorldCodeApi needs an AlfWorldEnv, got {type(env).__name__}")
        self._form: tuple[Syntax, bool] | None = None
        self._history: list[CodeStep] = []
        self._went_to: str | None = None

    @property
    def history(self) -> list[CodeStep]:
        """Every command sent to the env through this object, in order (a copy)."""
        return list(self._history)

    # -- actions -------------------------------------------------------------------------

    def go_to(self, recep: str) -> str:
        """Walk to a receptacle; the answer lists what is on or in it, or says it is closed."""
        target = entity_name(recep, "go_to: recep")
        shown_again = self._here_text if self._revisit and target == self._went_to else ""
        command = render(Act("go", recep=target), self._syntax())
        observation, _ = self._send(command, again_shows=shown_again, arriving_at=target)
        return observation

    def open(self, recep: str) -> str:
        """Open a closed receptacle where you stand; the answer lists what is inside."""
        return self._act("open", recep=recep)

    def close(self, recep: str) -> str:
        """Close an open receptacle where you stand."""
        return self._act("close", recep=recep)

    def take(self, obj: str, recep: str) -> str:
        """Pick up ``obj`` from ``recep`` (you carry at most one object)."""
        return self._act("take", obj, recep)

    def put(self, obj: str, recep: str) -> str:
        """Place the held ``obj`` in or on ``recep`` where you stand.

        Sent as ``move obj to recep`` or ``put obj in/on recep``, whichever
        syntax the env plays.
        """
        return self._act("put", obj, recep)

    def heat(self, obj: str, recep: str) -> str:
        """Heat the held ``obj`` with a microwave where you stand."""
        return self._act("heat", obj, recep)

    def cool(self, obj: str, recep: str) -> str:
        """Cool the held ``obj`` with a fridge where you stand."""
        return self._act("cool", obj, recep)

    def clean(self, obj: str, recep: str) -> str:
        """Clean the held ``obj`` with a sinkbasin where you stand."""
        return self._act("clean", obj, recep)

    def take_from(self, obj: str, recep: str) -> str:
        """Pick up ``obj`` from ``recep`` where you stand (you carry at most one object)."""
        return self._act("take", obj, recep)

    def put_in_or_on(self, obj: str, recep: str) -> str:
        """Place the held ``obj`` in or on ``recep`` where you stand."""
        return self._act("put", obj, recep)

    def heat_with(self, obj: str, recep: str) -> str:
        """Heat the held ``obj`` with a microwave where you stand."""
        return self._act("heat", obj, recep)

    def cool_with(self, obj: str, recep: str) -> str:
        """Cool the held ``obj`` with a fridge where you stand."""
        return self._act("cool", obj, recep)

    def clean_with(self, obj: str, recep: str) -> str:
        """Clean the held ``obj`` with a sinkbasin where you stand."""
        return self._act("clean", obj, recep)

    def use(self, lamp: str) -> str:
        """Switch on a lamp where you stand (to look at what you hold under it)."""
        return self._send(f"use {entity_name(lamp, 'use: lamp')}")[0]

    def examine(self, name: str) -> str:
        """Look closely at an object you hold or a receptacle where you stand."""
        return self._send(f"examine {entity_name(name, 'examine: name')}")[0]

    def inventory(self) -> str:
        """What you are carrying."""
        return self._send("inventory")[0]

    def look(self) -> str:
        """What you are facing."""
        return self._send("look")[0]

    # -- read-only queries -----------------------------------------------------------------

    def holding(self) -> str | None:
        """The object you carry ("mug 1", or "mug_1" in an ``object_ids`` env), or None."""
        held = self._call(_status).holding
        return None if held is None else self._shown(held)

    def location(self) -> str | None:
        """The receptacle you stand at, or None (in the middle of the room, before any go_to).

        Where several receptacles share a spot (two drawers of one chest), the
        one you last walked to.
        """
        here = self._call(_status).here
        if not here:
            return None
        return self._shown(self._went_to if self._went_to in here else here[0])

    def state(self) -> dict[str, str]:
        """``holding`` and ``location`` as the published agent's attributes read them.

        "nothing" when the hand is empty, "middle of room" before the first ``go_to``
        (even where the start spot is some receptacle's, as the published agent read it).
        """
        where = self.location() if self._went_to is not None else None
        return {"holding": self.holding() or self.NOTHING, "location": where or self.MIDDLE}

    def done(self) -> bool:
        """Whether the episode is over (the task is done or the step limit was reached)."""
        return self._call(_status).done

    def won(self) -> bool:
        """Whether the engine reported the task done (its ``won`` signal)."""
        return self._call(_status).won

    # -- internals -----------------------------------------------------------------------

    def _act(self, verb: str, obj: str | None = None, recep: str = "") -> str:
        """Check the names, then send the command ``verb`` makes of them."""
        act = Act(
            verb,
            "" if obj is None else entity_name(obj, f"{verb}: obj"),
            entity_name(recep, f"{verb}: recep"),
        )
        return self._send(render(act, self._syntax()))[0]

    def _send(
        self, command: str, again_shows: str = "", arriving_at: str | None = None
    ) -> tuple[str, bool]:
        step = self._call(_step, command)
        valid = bool(step.info.get("valid", False))
        if valid and arriving_at is not None:
            self._went_to = arriving_at
        text = step.observation
        if valid and not step.done:
            verb = command.split(" ", 1)[0]
            if verb in ("go", "open", "close"):
                self._here_text = text
            elif verb in ("take", "put", "move"):
                self._here_text = ""
        elif again_shows and not valid and not step.done:
            text = again_shows  # the published agent shows the place again
        if self._state_line and not step.done:
            now = self.state()
            text = f"{text} You are at {now['location']} and holding {now['holding']}."
        self._history.append(CodeStep(command, step, "" if text == step.observation else text))
        return text, valid

    def _syntax(self) -> Syntax:
        if self._form is None:
            self._form = self._call(_form)
        return self._form[0]

    def _shown(self, name: str) -> str:
        if self._form is None:
            self._form = self._call(_form)
        return name.replace(" ", "_") if self._form[1] else name

    def _call(self, fn: Callable[..., R], *args: Any) -> R:
        """``fn(env, *args)`` where the env lives, waiting for it on this thread."""
        return call_blocking(self._env, self._loop, fn, *args, who="this AlfWorldCodeApi")


# Env-side functions: module-level, so a process env can receive them by reference.


@dataclass(frozen=True)
class _Status:
    holding: str | None
    here: tuple[str, ...]
    """Receptacles at the agent's spot, in name order (several may share one)."""
    done: bool
    won: bool


def _alf(env: TextEnv) -> AlfWorldEnv:
    if not isinstance(env, AlfWorldEnv):
        raise TypeError(f"AlfWorldCodeApi needs an AlfWorldEnv, got {type(env).__name__}")
    return env


def _step(env: TextEnv, command: str) -> Step:
    return _alf(env).step(command)


def _form(env: TextEnv) -> tuple[Syntax, bool]:
    alf = _alf(env)
    return alf.syntax, alf.object_ids


def _status(env: TextEnv) -> _Status:
    alf = _alf(env)
    if alf.goal is None:  # no episode yet
        return _Status(None, (), alf.done, alf.won)
    world = alf.world()
    here = tuple(sorted((r for r in world.recep_type if world.at(r)), key=name_key))
    return _Status(world.holding, here, alf.done, alf.won)
