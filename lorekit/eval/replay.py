"""Replay a published run through LoreKit: the part that knows no method.

A published result file holds what a model answered in the authors' runs. To
replay it, LoreKit's agent plays the same tasks on LoreKit's env, and a
*replay model* answers each model call with the recorded output at the
corresponding point of the record. Everything else is LoreKit's: the prompts,
the parsing, the controller's decisions, the env's replies. Where the two
disagree the replay says so, call by call, as a :class:`Divergence` (task,
call, what the record has, what LoreKit asked or showed); where the record
has nothing to give (a transcript the original dropped) it says what it did
instead. The outcome is a stored run (``lorekit show``, ``lorekit report``)
and a table of the published figure beside the replayed one, per task group.

A format is a *reader* (registered under the ``replay`` kind): ``claims(data)``
says whether a loaded JSON file is its format and ``open(path)`` returns a
:class:`ReplaySource`, which builds the env and the agent, lists the tasks and
makes one :class:`ReplayCursor` per episode. The cursor is the record of one
episode; the harness builds each episode's own replay models
(``episode_roles``), each answering from that episode's cursor, so episodes
may play concurrently; :class:`ReplayAgent` hands the cursor the episode's
env and stores its summary.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Awaitable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from lorekit.agents.base import Agent, Recorder, Trajectory
from lorekit.envs.asyncenv import AsyncEnv, EnvLike, as_async
from lorekit.envs.base import Task, TextEnv
from lorekit.llm.base import Message
from lorekit.llm.roles import Roles
from lorekit.llm.scripted import ScriptedLLM

KINDS: Mapping[str, str] = {
    "decision": "LoreKit's controller decided otherwise than the record (an outcome, a plan)",
    "call": "LoreKit made a call the record does not have at this point",
    "missing": "the record has calls LoreKit never made",
    "observation": "LoreKit's env replied otherwise than the record's",
    "reward": "the episode's replayed figure differs from the recorded one",
    "gap": "the record has no transcript here; the replay's stand-in is named",
    "unplayable": "the record cannot be played on this env (e.g. a product not in the catalogue)",
}
"""Every class of divergence, and what it means."""


class ReplayError(ValueError):
    """A file no reader can replay, or a record that contradicts itself."""


@dataclass(frozen=True, slots=True)
class Divergence:
    """One place where LoreKit and the record part: call ``call`` (1-based, over all
    roles, 0 for the episode as a whole) by ``role``; ``recorded`` is what the record
    has there, ``asked`` what LoreKit asked, showed or decided."""

    kind: str
    call: int
    role: str
    recorded: str
    asked: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class ReplayCursor(Protocol):
    """One episode's record, answering the agent's model calls in order."""

    def bind(self, env: AsyncEnv) -> None:
        """The episode's env, before the agent plays (for stand-ins that read its state)."""
        ...

    def answer(self, role: str, messages: Sequence[Message]) -> Awaitable[str]:
        """The recorded output for this call (or the replay's named stand-in)."""
        ...

    def finish(self, trajectory: Trajectory) -> dict[str, Any]:
        """The episode's replay summary for its notes: ``published``, ``replayed``,
        ``decided`` (the record's decisions all taken), ``divergences`` and counts."""
        ...


class ReplaySource(Protocol):
    """A published run, opened by its reader."""

    title: str
    path: Path
    roles: tuple[str, ...]
    limits: tuple[str, ...]
    """What the replay cannot do with this file and why (shown with the table)."""

    def make_env(self) -> TextEnv: ...

    def make_agent(self) -> Agent: ...

    def tasks(self) -> list[Task]: ...

    def seed(self, task: Task) -> int:
        """The episode seed the published run played ``task`` with."""
        ...

    def cursor(self, task: Task) -> ReplayCursor: ...

    def describe(self) -> dict[str, Any]:
        """What the run store keeps of this replay's configuration."""
        ...


class ReplayReader(Protocol):
    """A registered format: recognises a file's data and opens it."""

    name: str

    def claims(self, data: object) -> bool: ...

    def open(self, path: Path, **options: Any) -> ReplaySource: ...


class ReplaySession:
    """The cursors of the episodes under way: :meth:`roles` is the harness's
    per-episode model factory, :meth:`take` hands an episode's cursor to its agent."""

    def __init__(self, source: ReplaySource, label: str = "replay") -> None:
        self.source = source
        self.label = label
        self._cursors: dict[tuple[str, int], ReplayCursor] = {}

    def roles(self, task: Task, seed: int) -> Roles:
        """One replay model per role of ``source``, each answering from this episode's cursor."""
        cursor = self.source.cursor(task)
        self._cursors[(task.id, seed)] = cursor
        models = {
            role: ScriptedLLM(
                fn=functools.partial(cursor.answer, role), model=f"{self.label}:{role}"
            )
            for role in dict.fromkeys(self.source.roles)
        }
        return Roles(models)

    def take(self, task: Task, seed: int | None) -> ReplayCursor:
        cursor = self._cursors.pop((task.id, int(seed or 0)), None)
        if cursor is None:
            raise ReplayError(f"no replay models were built for episode {task.id!r} (seed {seed})")
        return cursor


class ReplayAgent:
    """Plays ``source``'s agent with each episode's replay models, then stores the
    cursor's summary in ``notes["replay"]``. The agent's own notes (an ADaPT tree)
    stay as they are, so its view shows the replayed episode like any other."""

    def __init__(self, source: ReplaySource, session: ReplaySession) -> None:
        self.source = source
        self.session = session
        self.inner = source.make_agent()
        self.name = self.inner.name
        self.model_roles = tuple(source.roles)

    async def run(
        self, env: EnvLike, task: Task, roles: Roles, recorder: Recorder, *, seed: int | None = None
    ) -> Trajectory:
        handle = as_async(env)
        cursor = self.session.take(task, seed)
        cursor.bind(handle)
        trajectory = await self.inner.run(handle, task, roles, recorder, seed=seed)
        trajectory.notes["replay"] = cursor.finish(trajectory)
        return trajectory


@dataclass(slots=True)
class GroupFigures:
    """One row of the comparison: a task group (or ``all``)."""

    group: str
    episodes: int = 0
    published: float = 0.0
    replayed: float = 0.0
    replayed_n: int = 0
    """Episodes with a replayed figure (an unplayable record has none)."""
    decided: int = 0
    equal: int = 0
    divergences: dict[str, int] = field(default_factory=dict)

    def add(self, summary: Mapping[str, Any]) -> None:
        self.episodes += 1
        self.published += float(summary.get("published") or 0.0)
        if summary.get("replayed") is not None:
            self.replayed += float(summary["replayed"])
            self.replayed_n += 1
            self.equal += int(summary.get("published") == summary.get("replayed"))
        self.decided += int(bool(summary.get("decided")))
        for d in summary.get("divergences") or ():
            kind = str(d.get("kind"))
            self.divergences[kind] = self.divergences.get(kind, 0) + 1

    def cells(self) -> list[str]:
        n = max(self.episodes, 1)
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(self.divergences.items())) or "none"
        if self.replayed_n == 0:
            replayed = "-"
        else:
            replayed = f"{100 * self.replayed / self.replayed_n:.1f}"
            replayed += "" if self.replayed_n == self.episodes else f" (of {self.replayed_n})"
        return [
            self.group,
            str(self.episodes),
            f"{100 * self.published / n:.1f}",
            replayed,
            f"{self.decided}/{self.episodes}",
            f"{self.equal}/{self.episodes}",
            kinds,
        ]


HEADERS = [
    "group",
    "episodes",
    "published %",
    "replayed %",
    "decisions taken",
    "same figure",
    "divergences",
]


def compare(episodes: Iterable[tuple[str, Mapping[str, Any]]]) -> list[GroupFigures]:
    """Per group (sorted) and over all: the published and replayed figures."""
    groups: dict[str, GroupFigures] = {}
    total = GroupFigures("all")
    for group, summary in episodes:
        groups.setdefault(group, GroupFigures(group)).add(summary)
        total.add(summary)
    return [groups[g] for g in sorted(groups)] + [total]


def markdown(title: str, rows: Sequence[GroupFigures], limits: Sequence[str]) -> str:
    """The comparison as a Markdown table, the limits under it."""
    lines = [f"# Replay: {title}", "", "| " + " | ".join(HEADERS) + " |"]
    lines.append("|" + "---|" * len(HEADERS))
    lines += ["| " + " | ".join(r.cells()) + " |" for r in rows]
    if limits:
        lines += ["", *[f"- {line}" for line in limits]]
    return "\n".join(lines) + "\n"


def save(folder: Path, stem: str, record: Mapping[str, Any], text: str) -> Path:
    """Write the comparison as ``stem.json`` and ``stem.md`` in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{stem}.json").write_text(json.dumps(record, indent=2), encoding="utf-8")
    (folder / f"{stem}.md").write_text(text, encoding="utf-8")
    return folder / f"{stem}.md"


@dataclass(slots=True)
class ReplayResult:
    """A finished replay: its run in the store and its comparison rows."""

    run_id: str
    rows: list[GroupFigures]
    summaries: dict[str, dict[str, Any]]


async def replay(
    source: ReplaySource,
    store: Any,
    *,
    run_id: str | None = None,
    tasks: Sequence[Task] | None = None,
    concurrency: int = 4,
    progress: Any = False,
) -> ReplayResult:
    """Play ``source``'s episodes (all, or ``tasks``) with replay models into ``store``
    (a :class:`~lorekit.eval.store.RunStore`), each with the seed the published run used,
    and compare. Resuming a ``run_id`` plays only the missing episodes."""
    from lorekit.eval.backend import EpisodeSpec
    from lorekit.eval.runner import run_eval

    chosen = list(tasks if tasks is not None else source.tasks())
    specs = [
        EpisodeSpec(f"{t.id}/{source.seed(t)}", i, t, source.seed(t)) for i, t in enumerate(chosen)
    ]
    session = ReplaySession(source)
    result = await run_eval(
        store,
        env_factory=source.make_env,
        agent=ReplayAgent(source, session),
        episode_roles=session.roles,
        episodes=specs,
        run_id=run_id,
        env_name=str(source.describe().get("env", "")),
        config={"replay": source.describe(), "simulated": False},
        concurrency=concurrency,
        progress=progress,
    )
    summaries: dict[str, dict[str, Any]] = {}
    pairs: list[tuple[str, Mapping[str, Any]]] = []
    for episode in store.episodes(result.run_id):
        notes = (episode.info or {}).get("notes") or {}
        summary = notes.get("replay")
        if isinstance(summary, dict):
            summaries[episode.task_id] = summary
            pairs.append((episode.task_group, summary))
    return ReplayResult(result.run_id, compare(pairs), summaries)
