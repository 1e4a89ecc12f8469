"""ADaPT's published ALFWorld run, read as the env's reference, and replayed.

The record (``ADaPT_maxd3_alfworld_text_davinci_003.json``, archiki/ADaPT's
``results/``) holds, per game, the first observation (``problem``), the
transcript of every executor run that succeeded (``trace``: `` action`` /
observation lines, runs ending in ``>``), the plans and the reward. The
original's controller resets the game before each run and replays the actions
of the runs that succeeded before it, so a failed run leaves no trace;
thoughts (``think: ...``) reach the game too, which ignores them, and the
controller writes "OK." for them. The arrival sentence is shown as "You arrive
at the location.", and the first observation is cut to the room and the task
lines (:func:`first_observation`).

:func:`replay_game` does the same through LoreKit's env (each run after
:meth:`~lorekit.envs.alfworld.env.AlfWorldEnv.restore` of the actions before
it) and compares every observation the game gave and the outcome.
:func:`replay_env` builds the env with the settings that make the text ADaPT's.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lorekit.envs.alfworld.release import manifest

THOUGHT = "think:"
_TASK_PREFIX = "Your task is to: "


class RecordError(ValueError):
    """The record is not ADaPT's ALFWorld file, or a transcript cannot be read."""


@dataclass(frozen=True)
class RecordedStep:
    """One command the executor sent, and the observation it was shown."""

    action: str
    observation: str

    @property
    def thought(self) -> bool:
        return self.action.startswith(THOUGHT)


@dataclass(frozen=True)
class RecordedGame:
    """One game of the record: ``id`` is ``<task dir>/<trial>``."""

    id: str
    group: str
    problem: str
    runs: tuple[tuple[RecordedStep, ...], ...]
    reward: bool

    @property
    def sentence(self) -> str:
        """The task sentence without its final period ("put a mug in desk")."""
        line = self.problem.rsplit("\n", 1)[-1]
        if not line.startswith(_TASK_PREFIX):
            raise RecordError(f"{self.id}: the problem's last line is not 'Your task is to: ...'")
        return line[len(_TASK_PREFIX) :].strip().removesuffix(".")

    def steps(self) -> Iterator[RecordedStep]:
        for run in self.runs:
            yield from run


def shared_record() -> Path:
    """Where a development checkout keeps the record: ``shared/data`` beside the repository."""
    name = str(manifest()["record"]["name"])
    shared = Path(__file__).resolve().parents[4] / "shared" / "data"
    return shared / "published-runs" / "adapt" / name


def download_record(folder: Path, timeout_s: float = 60.0) -> Path:
    """Fetch the published record (``release.yaml`` names it) into ``folder``,
    checked by its sha256 when read."""
    import urllib.error
    import urllib.request

    spec = manifest()["record"]
    target = folder / str(spec["name"])
    try:
        with urllib.request.urlopen(str(spec["url"]), timeout=timeout_s) as answer:
            target.write_bytes(answer.read())
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise RecordError(
            f"could not download ADaPT's record from {spec['url']} ({reason}); give it "
            "with --record PATH"
        ) from None
    return target


def read_record(path: Path, *, pinned: bool = True) -> dict[str, RecordedGame]:
    """The record's games by id. With ``pinned`` the file must be the published
    one (its sha256 in ``release.yaml``): the release is checked against it."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise RecordError(f"{path}: not readable ({exc.strerror})") from None
    want = str(manifest()["record"]["sha256"])
    if pinned and hashlib.sha256(raw).hexdigest() != want:
        raise RecordError(
            f"{path}: not ADaPT's published ALFWorld record (sha256 "
            f"{hashlib.sha256(raw).hexdigest()[:12]}, expected {want[:12]})"
        )
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise RecordError(f"{path}: not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise RecordError(f"{path}: expected an object of task groups")
    games: dict[str, RecordedGame] = {}
    for group, entries in data.items():
        if group == "overall" or not isinstance(entries, dict):
            continue
        for game_id, entry in entries.items():
            games[game_id] = _game(path, group, game_id, entry)
    return games


def _game(path: Path, group: str, game_id: str, entry: Any) -> RecordedGame:
    if not isinstance(entry, Mapping) or not {"problem", "trace", "reward"} <= set(entry):
        raise RecordError(f"{path}: {group}/{game_id}: expected problem, trace and reward")
    runs = parse_trace(str(entry["trace"]), f"{path}: {game_id}")
    return RecordedGame(game_id, group, str(entry["problem"]), runs, bool(entry["reward"]))


def parse_trace(trace: str, where: str = "trace") -> tuple[tuple[RecordedStep, ...], ...]:
    """The runs of a transcript. Each run is `` a1\\no1\\n> a2\\no2\\n>``: its first
    command follows a space, the others "> ", and a lone ">" ends it."""
    runs: list[tuple[RecordedStep, ...]] = []
    run: list[RecordedStep] | None = None
    lines = trace.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line in (">", ""):
            if line == ">" and run is not None:
                runs.append(tuple(run))
                run = None
            i += 1
            continue
        if line.startswith("> ") and run is not None:
            action = line[2:]
        elif line.startswith(" ") and run is None:
            action, run = line[1:], []
        else:
            raise RecordError(f"{where}: line {i + 1} is not a command: {line[:60]!r}")
        if i + 1 >= len(lines):
            raise RecordError(f"{where}: the command on line {i + 1} has no observation")
        run.append(RecordedStep(action, lines[i + 1]))
        i += 2
    if run is not None:
        runs.append(tuple(run))
    return tuple(runs)


@dataclass
class GameReplay:
    """How one game of the record replayed: commands compared, equal, and the outcome."""

    id: str
    steps: int = 0
    equal: int = 0
    thoughts: int = 0
    first_equal: bool = False
    won: bool = False
    recorded: bool = False
    differences: list[str] = field(default_factory=list)

    @property
    def outcome_equal(self) -> bool:
        return self.won == self.recorded

    @property
    def ok(self) -> bool:
        return self.first_equal and self.equal == self.steps and self.outcome_equal


def first_observation(intro: str) -> str:
    """The first observation as ADaPT's controller keeps it: the engine's
    paragraphs after the welcome banner, one line each (room, then task)."""
    return "\n".join(intro.split("\n\n")[1:])


def replay_env(data_dir: Path) -> Any:
    """LoreKit's env on the release at ``data_dir``, set as ADaPT's run was: its
    arrival sentence, TextWorld's exact commands, no step cap (the original's
    cap of 50 counts from each reset; the record never reaches it)."""
    from lorekit.envs.alfworld.env import AlfWorldEnv

    return AlfWorldEnv(
        "official",
        variant="release",
        data_dir=data_dir,
        split="valid_unseen",
        arrival="location",
        commands="exact",
        max_steps=None,
    )


def replay_game(env: Any, game: RecordedGame, *, keep: int = 3) -> GameReplay:
    """Play ``game``'s commands through ``env`` as the original did and compare
    the first observation, every command's observation and the outcome. Up to
    ``keep`` differences are described (command, the record's text, ours)."""
    out = GameReplay(game.id, recorded=game.reward)
    first = first_observation(env.reset(game.id).text)
    out.first_equal = first == game.problem
    if not out.first_equal:
        out.differences.append(f"first observation: record {game.problem!r}, env {first!r}")
    done: list[str] = []
    for run in game.runs:
        env.restore(done)
        for step in run:
            answer = env.step(step.action)
            if step.thought:  # the game ignores it; the controller answers "OK."
                out.thoughts += 1
                continue
            done.append(step.action)
            out.steps += 1
            if answer.observation == step.observation:
                out.equal += 1
            elif len(out.differences) < keep:
                out.differences.append(
                    f"{step.action!r}: record {step.observation!r}, env {answer.observation!r}"
                )
    out.won = bool(env.won)
    return out


@dataclass
class RecordReplay:
    """The replay of many games: totals and the games that did not replay equal."""

    games: list[GameReplay] = field(default_factory=list)

    @property
    def steps(self) -> int:
        return sum(g.steps for g in self.games)

    @property
    def equal(self) -> int:
        return sum(g.equal for g in self.games)

    @property
    def outcomes_equal(self) -> int:
        return sum(g.outcome_equal for g in self.games)

    @property
    def failed(self) -> list[GameReplay]:
        return [g for g in self.games if not g.ok]

    def summary(self) -> str:
        n = len(self.games)
        return (
            f"{n - len(self.failed)}/{n} games replay equal: {self.equal:,}/{self.steps:,} "
            f"observations, {self.outcomes_equal}/{n} outcomes"
        )
