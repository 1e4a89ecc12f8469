"""``TeamWorld``: one crafter-party world shared by asynchronous agents.

``CrafterParty.step`` takes one joint action for all players, which suits an
agent that speaks for everyone. A team of agents is different: each agent acts
for its own player whenever it is ready, and the world does not wait for
anyone. Here time comes from a clock (:mod:`lorekit.agents.teams.clock`): tick ``k``
of the episode happens ``k * seconds_per_tick`` after ``reset``, whether or
not anybody acted. ``act`` queues one action of one player for the next tick
and returns once that tick has happened; players with nothing queued wait a
tick (``noop``). So while one agent awaits its model, the others' players keep
moving, zombies keep walking and the day goes on.

The world is brought up to date lazily: every call (``act``, ``observe``,
``tick``, ``done`` ...) first plays the ticks that are due at the clock's
current time. The result is the same as a ticking loop, without a task that
wakes every tick; on the wall clock the ticks follow real time, on the virtual
clock virtual time, where runs are deterministic.

Messages go to a shared pool, each stamped with time, tick, sender and
addressee (``None`` for everyone); any agent may read the whole pool.

A world without zombies or skeletons is ``TeamWorld(CrafterParty(players,
peaceful=True), clock)``; ``world.peaceful`` says which kind a team plays.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from lorekit.agents.teams.clock import Clock, ClockEvent
from lorekit.agents.teams.world.party import CrafterParty
from lorekit.envs.base import Step, Task
from lorekit.envs.crafter.core import CrafterCore
from lorekit.envs.crafter.data import data
from lorekit.envs.crafter.textobs import canonical_actions, describe

_EPS = 1e-9  # float slack when comparing clock times with tick times


@dataclass(frozen=True)
class Message:
    """One message in the pool: when (clock seconds since reset, and tick), who, to whom."""

    time: float
    tick: int
    sender: str
    to: str | None
    text: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class TeamWorld:
    """One :class:`CrafterParty` world driven by a clock; see the module docstring.

    ``speakers`` are extra names that may post and receive messages without a
    player of their own (a commander outside the world); players ``p1..pK``
    always may.
    """

    def __init__(
        self,
        party: CrafterParty,
        clock: Clock,
        *,
        seconds_per_tick: float = 0.2,
        speakers: tuple[str, ...] = (),
    ) -> None:
        if not seconds_per_tick > 0:
            raise ValueError(f"seconds_per_tick must be > 0, got {seconds_per_tick}")
        self.party = party
        self.clock = clock
        self.seconds_per_tick = float(seconds_per_tick)
        self.players: list[str] = list(party.names)
        self.speakers: list[str] = [*self.players, *(s for s in speakers if s not in party.names)]
        self._actions = canonical_actions()
        self._aliases: dict[str, str] = dict(data()["aliases"])
        self._origin = clock.now()
        self._queued: dict[int, str] = {}
        self._pool: list[Message] = []
        self._started = False
        self.finished: ClockEvent = clock.event()
        self._posted: ClockEvent = clock.event()
        self.success_time: float | None = None
        self.best_progress = 0.0
        self.progress_time = 0.0
        self._reported = 0.0  # task reward already handed out by report()

    @property
    def peaceful(self) -> bool:
        """True when the party world has no zombies or skeletons (``peaceful=True``)."""
        return bool(getattr(self.party, "peaceful", False))

    @property
    def core(self) -> CrafterCore:
        """The engine, for skills that read the map."""
        return self.party.core

    # -- episode -------------------------------------------------------------

    def reset(self, task: str | Task, seed: int | None = None) -> None:
        """Start an episode now: tick 0 is the clock's current time."""
        self.party.reset(task, seed)
        self.begin()

    def begin(self) -> None:
        """Start the team's episode on a party its owner has just reset (an
        :class:`~lorekit.agents.Episode` resets the harness's env): tick 0 is now."""
        if self.party.task is None:
            raise RuntimeError("the party has no episode: reset it before begin()")
        self._origin = self.clock.now()
        self._queued = {}
        self._pool = []
        self._started = True
        self.finished = self.clock.event()
        self._posted = self.clock.event()
        self.success_time = None
        self.best_progress = self.party.progress_fraction()
        self.progress_time = 0.0
        self._reported = 0.0

    @property
    def task(self) -> Task:
        task = self.party.task
        if task is None or not self._started:
            raise RuntimeError("no episode is running: call reset(task) first")
        return task

    def now(self) -> float:
        """Clock seconds since ``reset``."""
        return self.clock.now() - self._origin

    @property
    def tick(self) -> int:
        """Ticks played since ``reset``."""
        self._catch_up()
        return int(self.core.step_count)

    @property
    def done(self) -> bool:
        self._catch_up()
        return self.party.done

    @property
    def success(self) -> bool:
        self._catch_up()
        return self.party.success

    def progress(self) -> str:
        """The team's progress in words (``"12/50 wood"``)."""
        self._catch_up()
        return self.party.progress()

    def progress_fraction(self) -> float:
        self._catch_up()
        return self.party.progress_fraction()

    # -- acting --------------------------------------------------------------

    async def act(self, player: str, action: str) -> None:
        """Do one crafter action for ``player`` at the next tick; return after it.

        Other players' actions queued for the same tick happen in the same
        tick. Once the episode is over this returns at once and does nothing.
        """
        index = self._index(player)
        name = self._action(action)
        self._catch_up()
        if self.party.done:
            return
        if index in self._queued:
            raise RuntimeError(
                f"{player} already has an action queued for tick {self.core.step_count + 1}; "
                "await one act before starting the next"
            )
        self._queued[index] = name
        target = int(self.core.step_count) + 1
        try:
            while self.core.step_count < target and not self.party.done:
                wait = self._tick_time(target) - self.clock.now()
                await self.clock.sleep(max(0.0, wait))
                self._catch_up()
        finally:
            if self.core.step_count < target:  # cancelled before its tick came
                self._queued.pop(index, None)

    def observe(self, player: str) -> str:
        """``player``'s text observation (what it sees, vitals, inventory)."""
        index = self._index(player)
        self._catch_up()
        return describe(self.core, index)

    def report(self, observation: str, info: Mapping[str, Any]) -> Step:
        """The world's standing as an env step, for a driver that records what its
        players did (a finished skill) in an episode: ``done`` and
        ``info["success"]`` are the party's own, ``info["progress"]`` its words,
        and the reward its task reward not yet reported by an earlier call (so
        an episode's rewards add up to the party's)."""
        self._catch_up()
        reward = self.party.task_reward() - self._reported
        self._reported += reward
        full = {**info, "success": self.party.success, "progress": self.party.progress()}
        return Step(observation, reward, self.party.done, full)

    # -- messages ------------------------------------------------------------

    def post(self, sender: str, to: str | None, text: str) -> Message:
        """Add a message to the pool (``to=None``: everyone) and wake those waiting for one."""
        for role, name in (("sender", sender), ("addressee", to)):
            if name is not None and name not in self.speakers:
                raise ValueError(
                    f"unknown {role} {name!r}; names in this world are {', '.join(self.speakers)}"
                )
        if not text.strip():
            raise ValueError("a message needs some text")
        self._catch_up()
        message = Message(self.now(), int(self.core.step_count), sender, to, text.strip())
        self._pool.append(message)
        posted, self._posted = self._posted, self.clock.event()
        posted.set()
        return message

    def messages(self, since: int = 0) -> list[Message]:
        """The pool from index ``since`` on (keep ``len`` of what you read to get only news)."""
        return self._pool[since:]

    @property
    def posted(self) -> ClockEvent:
        """An event set by the next ``post`` (wait on it with ``clock.wait``)."""
        return self._posted

    # -- internals -----------------------------------------------------------

    def _index(self, player: str) -> int:
        try:
            return self.players.index(player)
        except ValueError:
            raise ValueError(
                f"unknown player {player!r}; players are {', '.join(self.players)}"
            ) from None

    def _action(self, action: str) -> str:
        word = action.strip().lower()
        word = self._aliases.get(word, word)
        if word in self._actions:
            return self._actions[word]
        if word in self._actions.values():
            return word
        raise ValueError(
            f"unknown action {action!r}; actions are {', '.join(sorted(self._actions))}"
        )

    def _tick_time(self, tick: int) -> float:
        return self._origin + tick * self.seconds_per_tick

    def _catch_up(self) -> None:
        """Play every tick that is due at the clock's current time."""
        if not self._started or self.party.done:
            return
        due = math.floor((self.clock.now() - self._origin) / self.seconds_per_tick + _EPS)
        while self.core.step_count < due and not self.party.done:
            joint = [self._queued.pop(i, "noop") for i in range(len(self.players))]
            self.party.tick(joint)
            tick_time = int(self.core.step_count) * self.seconds_per_tick
            fraction = self.party.progress_fraction()
            if fraction > self.best_progress:
                self.best_progress, self.progress_time = fraction, tick_time
            if self.party.done:
                if self.party.success:
                    self.success_time = tick_time
                self._queued.clear()
                self.finished.set()
