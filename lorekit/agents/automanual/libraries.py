"""The skill and reflection libraries: what earlier episodes concluded, per task type.

AutoManual keeps two small libraries next to the rules (section 3.2). A
successful episode's cleaned code becomes the *skill* of its task type,
replacing the previous one unless that one came from a direct success (the
authors' skill bank keeps a first-try skill for good: ``keep_direct``); a
failed episode's reflection becomes the *reflection* of its type. When a new
task comes the planner is shown (:meth:`Libraries.retrieve_all`, as the
authors' code does)

1. the skill of the same task type, if there is one, else (``similar=True``)
   the skill of the most similar stored task, ranked by a
   :class:`~.retrieval.Retriever` over ``"task_type: goal"``;
2. and, when the type has no skill of its own, the reflection of that type,
   beside the similar skill.

``together=False`` shows one item instead (:meth:`Libraries.retrieve`: the
type's skill, else its reflection, else the most similar skill).

Every addition is a row of ``automanual_library`` (the history is kept; the
current entry of a type is its latest row), tagged with the episode it came
from, so a resumed build can drop what an uncommitted episode wrote
(:meth:`Libraries.truncate_to`). A test-time agent opens a build's libraries
with ``readonly=True``: it reads them and cannot change them.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from collections.abc import Collection, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from lorekit.agents.automanual.retrieval import BM25Retriever, Retriever
from lorekit.textsafe import storable_row

Kind = Literal["skill", "reflection"]
KINDS: tuple[Kind, ...] = ("skill", "reflection")


class LibraryError(RuntimeError):
    """A library was used in a way it does not allow (writing a read-only one, empty text)."""


@dataclass(frozen=True, slots=True)
class LibraryEntry:
    """One row of the library: a skill or a reflection as it was added."""

    seq: int
    kind: Kind
    task_type: str
    goal: str
    text: str
    episode_id: str | None
    meta: dict[str, Any] = field(default_factory=dict)
    at: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Retrieved:
    """What the planner is shown for a new task, and why.

    ``task_type`` and ``goal`` are those of the stored entry (for a skill
    found by similarity they differ from the new task's); ``same_type`` says
    whether it came from the new task's own type; ``score`` is the
    retriever's score for a similarity match (None for an exact type match).
    ``opening`` is where the stored task began, when the library kept it
    (ALFWorld's room, shown with the skill as the authors' code shows it).
    """

    kind: Kind
    task_type: str
    goal: str
    text: str
    same_type: bool
    score: float | None = None
    episode_id: str | None = None
    opening: str = ""

    @property
    def heading(self) -> str:
        """The planner prompt's H2 title for this entry (the shared prompt layout)."""
        if self.kind == "skill":
            return f"Skill for a similar task ({self.task_type})"
        return f"Reflection from an earlier failure ({self.task_type})"

    def section(self) -> str:
        """The whole prompt section: heading, the task it came from, then the text.

        A skill is shown as a Python block; a reflection as the planner wrote it.
        """
        body = self.text.strip()
        if self.kind == "skill" and not body.startswith("```"):
            body = f"```python\n{body}\n```"
        return f"## {self.heading}\nTask: {self.goal.strip()}\n{body}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Retrieved:
        kind = str(d["kind"])
        if kind not in KINDS:
            raise ValueError(f"unknown library kind {kind!r}; use skill or reflection")
        score = d.get("score")
        return cls(
            kind="skill" if kind == "skill" else "reflection",
            task_type=str(d["task_type"]),
            goal=str(d["goal"]),
            text=str(d["text"]),
            same_type=bool(d["same_type"]),
            score=None if score is None else float(score),
            episode_id=None if d.get("episode_id") is None else str(d["episode_id"]),
            opening=str(d.get("opening") or ""),
        )


_COLUMNS = "seq, kind, task_type, goal, text, episode_id, meta, at"


def _entry(row: tuple[Any, ...]) -> LibraryEntry:
    seq, kind, task_type, goal, text, episode_id, meta, at = row
    return LibraryEntry(
        seq=int(seq),
        kind="skill" if kind == "skill" else "reflection",
        task_type=str(task_type),
        goal=str(goal),
        text=str(text),
        episode_id=None if episode_id is None else str(episode_id),
        meta=json.loads(meta) if meta else {},
        at=float(at),
    )


class Libraries:
    """Both libraries of one build, over the ``automanual_library`` table.

    ``retriever`` ranks stored skills for the similarity fallback (BM25 by
    default); ``similar=False`` turns that fallback off (only the task's own
    type is used). A similarity match must score above ``min_score``: with
    BM25, a stored goal sharing no word with the new one is never offered.
    ``keep_direct`` (default, as published): a skill that came from a direct
    success stays its type's skill; later ones are stored in the history,
    marked ``shelved``, and never become current. ``together`` (default, as
    published): :meth:`retrieve_all` shows a similar skill and the type's
    reflection together; False: the single item of :meth:`retrieve`.
    """

    def __init__(
        self,
        db: sqlite3.Connection,
        build_id: str,
        *,
        retriever: Retriever | None = None,
        similar: bool = True,
        min_score: float = 0.0,
        readonly: bool = False,
        keep_direct: bool = True,
        together: bool = True,
    ) -> None:
        if not build_id:
            raise ValueError("Libraries needs a build id (the build run's id)")
        self.db = db
        self.build_id = build_id
        self.retriever: Retriever = retriever if retriever is not None else BM25Retriever()
        self.similar = similar
        self.min_score = min_score
        self.readonly = readonly
        self.keep_direct = keep_direct
        self.together = together

    # ---------------------------------------------------------------- writing
    def add_skill(
        self,
        task_type: str,
        goal: str,
        code: str,
        episode_id: str | None,
        *,
        direct: bool = False,
        meta: Mapping[str, Any] | None = None,
    ) -> int:
        """Make ``code`` the skill of ``task_type`` (the previous one stays in the history).

        ``direct``: the episode succeeded in its first turn. With
        ``keep_direct``, a type whose current skill is direct keeps it: the new
        row is stored ``shelved`` (history only), as the authors' skill bank
        never replaces a skill that worked at the first try.
        """
        info = {**dict(meta or {}), **({"direct": True} if direct else {})}
        current = self.skills().get(task_type)
        if self.keep_direct and current is not None and current.meta.get("direct"):
            info["shelved"] = True
        return self._add("skill", task_type, goal, code, episode_id, info)

    def add_reflection(
        self,
        task_type: str,
        goal: str,
        text: str,
        episode_id: str | None,
        *,
        meta: Mapping[str, Any] | None = None,
    ) -> int:
        """Make ``text`` the reflection of ``task_type``."""
        return self._add("reflection", task_type, goal, text, episode_id, meta)

    def _add(
        self,
        kind: Kind,
        task_type: str,
        goal: str,
        text: str,
        episode_id: str | None,
        meta: Mapping[str, Any] | None,
    ) -> int:
        self._writable(f"add a {kind}")
        if not task_type.strip():
            raise LibraryError(f"a {kind} needs a task type")
        if not text.strip():
            raise LibraryError(f"the {kind} for {task_type!r} is empty; nothing to store")
        blob = json.dumps(dict(meta or {}), sort_keys=True)
        row = self.db.execute(
            "SELECT COALESCE(MAX(seq), -1) + 1 FROM automanual_library WHERE build_id = ?",
            (self.build_id,),
        ).fetchone()
        seq = int(row[0])
        self.db.execute(
            "INSERT INTO automanual_library"
            " (build_id, seq, episode_id, kind, task_type, goal, text, meta, at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            storable_row(
                (self.build_id, seq, episode_id, kind, task_type, goal, text, blob, time.time())
            ),
        )
        _commit(self.db)
        return seq

    def truncate_to(self, kept_episode_ids: Collection[str]) -> int:
        """Drop rows of episodes not in ``kept_episode_ids`` (resume); rows without one stay.

        Returns how many rows were dropped. Since a build is sequential this
        only ever removes a tail, so the current entries become what they
        were after the last kept episode.
        """
        self._writable("truncate")
        kept = set(kept_episode_ids)
        rows = self.db.execute(
            "SELECT seq, episode_id FROM automanual_library"
            " WHERE build_id = ? AND episode_id IS NOT NULL",
            (self.build_id,),
        ).fetchall()
        drop = [(self.build_id, int(seq)) for seq, ep in rows if ep not in kept]
        self.db.executemany("DELETE FROM automanual_library WHERE build_id = ? AND seq = ?", drop)
        _commit(self.db)
        return len(drop)

    def _writable(self, what: str) -> None:
        if self.readonly:
            raise LibraryError(
                f"cannot {what}: the libraries of build {self.build_id!r} are open read-only"
                " (test time reads a build's libraries, it does not change them)"
            )

    # ---------------------------------------------------------------- reading
    def history(self, kind: Kind | None = None) -> list[LibraryEntry]:
        """Every row of this build in the order added (optionally one kind only)."""
        sql = f"SELECT {_COLUMNS} FROM automanual_library WHERE build_id = ?"
        args: tuple[Any, ...] = (self.build_id,)
        if kind is not None:
            sql += " AND kind = ?"
            args += (kind,)
        return [_entry(r) for r in self.db.execute(sql + " ORDER BY seq", args).fetchall()]

    def current(self, kind: Kind) -> dict[str, LibraryEntry]:
        """The latest entry of ``kind`` per task type, oldest entry first (rows stored
        ``shelved`` never become current: see :meth:`add_skill`)."""
        out: dict[str, LibraryEntry] = {}
        for entry in self.history(kind):
            if entry.meta.get("shelved"):
                continue
            out.pop(entry.task_type, None)  # re-inserted last: the dict stays in seq order
            out[entry.task_type] = entry
        return out

    def skills(self) -> dict[str, LibraryEntry]:
        """The current skill of each task type that has one."""
        return self.current("skill")

    def reflections(self) -> dict[str, LibraryEntry]:
        """The current reflection of each task type that has one."""
        return self.current("reflection")

    def retrieve(self, task_type: str, goal: str) -> Retrieved | None:
        """What to show the planner for a new task (see the module docstring), or None."""
        exact, candidates = self._lookup(task_type)
        if exact is not None or not candidates:
            return exact
        return self._best(candidates, self.retriever.rank(_doc(task_type, goal), _docs(candidates)))

    async def retrieve_async(self, task_type: str, goal: str) -> Retrieved | None:
        """:meth:`retrieve` for an event loop: the database is read here, the ranking
        (which may be a request to an embeddings server) runs in a worker thread."""
        exact, candidates = self._lookup(task_type)
        if exact is not None or not candidates:
            return exact
        ranked = await asyncio.to_thread(
            self.retriever.rank, _doc(task_type, goal), _docs(candidates)
        )
        return self._best(candidates, ranked)

    def retrieve_all(self, task_type: str, goal: str) -> list[Retrieved]:
        """Everything to show the planner for a new task (see the module docstring).

        With ``together``: the type's skill or the most similar one, then the
        type's reflection when the type has no skill. Otherwise the one item
        of :meth:`retrieve`, if any.
        """
        if not self.together:
            one = self.retrieve(task_type, goal)
            return [] if one is None else [one]
        skill, candidates, reflection = self._lookup_together(task_type)
        if skill is None and candidates:
            ranked = self.retriever.rank(_doc(task_type, goal), _docs(candidates))
            skill = self._best(candidates, ranked)
        return [r for r in (skill, reflection) if r is not None]

    async def retrieve_all_async(self, task_type: str, goal: str) -> list[Retrieved]:
        """:meth:`retrieve_all` for an event loop (the ranking runs in a worker thread)."""
        if not self.together:
            one = await self.retrieve_async(task_type, goal)
            return [] if one is None else [one]
        skill, candidates, reflection = self._lookup_together(task_type)
        if skill is None and candidates:
            ranked = await asyncio.to_thread(
                self.retriever.rank, _doc(task_type, goal), _docs(candidates)
            )
            skill = self._best(candidates, ranked)
        return [r for r in (skill, reflection) if r is not None]

    def _lookup_together(
        self, task_type: str
    ) -> tuple[Retrieved | None, list[LibraryEntry], Retrieved | None]:
        """The type's own skill (or the skills to rank) and, without one, its reflection."""
        skills = self.skills()
        if task_type in skills:
            return _retrieved(skills[task_type], same_type=True), [], None
        found = self.reflections().get(task_type)
        reflection = None if found is None else _retrieved(found, same_type=True)
        return None, list(skills.values()) if self.similar else [], reflection

    def _lookup(self, task_type: str) -> tuple[Retrieved | None, list[LibraryEntry]]:
        """The exact answer if the type has one; else the skills to rank (maybe none)."""
        skills = self.skills()
        if task_type in skills:
            return _retrieved(skills[task_type], same_type=True), []
        reflection = self.reflections().get(task_type)
        if reflection is not None:
            return _retrieved(reflection, same_type=True), []
        return None, list(skills.values()) if self.similar else []

    def _best(
        self, candidates: list[LibraryEntry], ranked: list[tuple[int, float]]
    ) -> Retrieved | None:
        if not ranked:
            return None
        index, score = ranked[0]
        if score <= self.min_score:
            return None
        return _retrieved(candidates[index], same_type=False, score=score)

    def snapshot(self) -> dict[str, Any]:
        """Plain data for the run store and ``lorekit show``: current entries and counts.

        Wall-clock times are left out, so a resumed build and an uninterrupted
        one give equal snapshots.
        """
        history = self.history()

        def plain(entry: LibraryEntry) -> dict[str, Any]:
            d = entry.to_dict()
            del d["at"]
            return d

        return {
            "build_id": self.build_id,
            "skills": {t: plain(e) for t, e in self.skills().items()},
            "reflections": {t: plain(e) for t, e in self.reflections().items()},
            "added": {k: sum(1 for e in history if e.kind == k) for k in KINDS},
        }


def _doc(task_type: str, goal: str) -> str:
    return f"{task_type}: {goal}"


def _docs(entries: list[LibraryEntry]) -> list[str]:
    return [_doc(e.task_type, e.goal) for e in entries]


def _retrieved(entry: LibraryEntry, *, same_type: bool, score: float | None = None) -> Retrieved:
    return Retrieved(
        kind=entry.kind,
        task_type=entry.task_type,
        goal=entry.goal,
        text=entry.text,
        same_type=same_type,
        score=score,
        episode_id=entry.episode_id,
        opening=str(entry.meta.get("opening") or ""),
    )


def _commit(db: sqlite3.Connection) -> None:
    """Commit when the connection opened a transaction (it may be in autocommit mode)."""
    if db.in_transaction:
        db.commit()
