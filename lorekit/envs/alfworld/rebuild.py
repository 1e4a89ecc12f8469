"""Rebuild ALFWorld's release of the 134 unseen games without downloading it.

The release cannot be fetched everywhere, but everything it is made of is
public and checkable:

- each game's PDDL problem: in AutoManual's copy of the data (132 of the 134;
  pinned in ``release_games.sha256``), and for the two it lacks, in another
  public copy (``candidates`` in ``release.yaml``), checked by the same pins;
- the release's grammar and the domain its games carry: derived from the
  alfworld wheel (:mod:`.release`), checked by their sha256;
- each game's task sentence: ADaPT's record, which shows it. The release drew
  it from the task type's templates with an unseeded random choice, so it
  cannot be derived; it is checked to be one of those templates.

Every game is then played through LoreKit's env as ADaPT's run played it
(:mod:`.record`), and only games that give every recorded observation and the
recorded outcome are installed. Nothing is installed if none is; the install
is written aside and moved into place whole.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lorekit.envs.alfworld import release
from lorekit.envs.alfworld.fetch import check_dest, move_into_place, staging_for
from lorekit.envs.alfworld.record import RecordReplay, read_record, replay_env, replay_game
from lorekit.envs.alfworld.rules import goal_templates
from lorekit.envs.alfworld.variants import MARKER, json_root

Progress = Callable[[int, int], None]
_TYPES_WITH_TOGGLE = ("look_at_obj_in_light",)


class RebuildError(RuntimeError):
    """The release could not be rebuilt; the message says what to give or fix."""


@dataclass
class Rebuilt:
    """What :func:`rebuild_release` did: the games written and how they replayed."""

    dest: Path
    replay: RecordReplay
    sources: dict[str, str] = field(default_factory=dict)
    """Game id -> where its PDDL problem came from (``copy`` or ``candidates``)."""
    left_out: dict[str, str] = field(default_factory=dict)
    """Game id -> why it is not installed."""

    @property
    def installed(self) -> int:
        return len(self.sources) - len(self.left_out)

    def summary(self) -> str:
        left = f", {len(self.left_out)} left out" if self.left_out else ""
        rebuilt = f"{self.installed} of {len(self.sources)} games rebuilt{left}"
        return f"{rebuilt}; {self.replay.summary()}"


def rebuild_release(
    copy: Path,
    record: Path,
    dest: Path,
    *,
    candidates: Path | None = None,
    progress: Progress | None = None,
) -> Rebuilt:
    """Rebuild the release's 134 unseen games into ``dest`` (see the module docstring).

    ``copy`` is AutoManual's data folder (holding ``json_2.1.1``), ``record``
    ADaPT's published ALFWorld record, ``candidates`` a folder holding other
    copies of the games' files (``json_2.1.1/valid_unseen/<id>/game.tw-pddl``),
    e.g. a checkout of the repository ``release.yaml`` names.
    """
    games = read_record(record)
    pins = release.game_pins()
    if set(games) != set(pins):
        raise RebuildError(f"{record}: its games are not the 134 the release's pins name")
    dest = dest.expanduser()
    check_dest(dest)
    staging = staging_for(dest)
    try:
        out = Rebuilt(dest, RecordReplay())
        unseen = staging / "json_2.1.1" / release.UNSEEN
        roots = [("copy", json_root(copy.expanduser()))]
        if candidates is not None:
            roots.append(("candidates", json_root(candidates.expanduser())))
        for game_id in sorted(pins):
            found = _problem(game_id, roots, pins[game_id])
            if isinstance(found, str):
                out.sources[game_id], out.left_out[game_id] = "-", found
                continue
            label, folder, problem = found
            out.sources[game_id] = label
            sentence = games[game_id].sentence
            problem_why = _write_game(unseen / game_id, folder, game_id, problem, sentence)
            if problem_why:
                out.left_out[game_id] = problem_why
                shutil.rmtree(unseen / game_id)
        _write_logic(staging / "logic")
        _verify(staging, games, out, progress)
        if len(out.left_out) == len(pins):
            raise RebuildError("no game could be rebuilt and verified; nothing installed")
        _write_marker(staging, out)
        move_into_place(staging, dest)
        return out
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _problem(game_id: str, roots: list[tuple[str, Path]], pin: str) -> tuple[str, Path, str] | str:
    """(where, folder, PDDL problem) of the first copy whose problem is the pinned
    one, else why there is none."""
    seen = []
    for label, root in roots:
        folder = root / release.UNSEEN / game_id
        try:
            data = json.loads((folder / "game.tw-pddl").read_text("utf-8"))
        except (OSError, ValueError):
            continue
        problem = str(data.get("pddl_problem", "")) if isinstance(data, dict) else ""
        if release.sha256_text(problem) == pin:
            return label, folder, problem
        seen.append(label)
    if seen:
        return f"the PDDL problem in {', '.join(seen)} is not the release's"
    names = " or ".join(label for label, _ in roots)
    return f"not in {names}" + ("" if len(roots) > 1 else " (give --candidates)")


def _write_game(target: Path, source: Path, game_id: str, problem: str, sentence: str) -> str:
    """Write one game; a reason it cannot be written, else ''."""
    traj = _traj_data(source, game_id)
    params = traj["pddl_params"]
    filled = {
        template.format(
            obj=str(params.get("object_target", "")).lower(),
            recep=str(params.get("parent_target", "")).lower(),
            toggle=str(params.get("toggle_target", "")).lower(),
            mrecep=str(params.get("mrecep_target", "")).lower(),
        )
        for template in goal_templates(str(traj["task_type"]))
    }
    target.mkdir(parents=True)
    if sentence not in filled:
        return f"the record's task sentence {sentence!r} is none of the release's templates"
    game = {
        "pddl_domain": release.game_domain(),
        "grammar": release.grammar_with_goal(sentence),
        "pddl_problem": problem,
        "solvable": True,
    }
    (target / "game.tw-pddl").write_text(json.dumps(game), encoding="utf-8")
    (target / "traj_data.json").write_text(json.dumps(traj), encoding="utf-8")
    (target / "initial_state.pddl").write_text(problem, encoding="utf-8")
    return ""


def _traj_data(source: Path, game_id: str) -> dict[str, Any]:
    """The copy's ``traj_data.json``; where a copy has none (the candidates hold
    game files only), what the task folder's name says, marked as such."""
    try:
        data = json.loads((source / "traj_data.json").read_text("utf-8"))
        if isinstance(data, dict) and "pddl_params" in data:
            return data
    except (OSError, ValueError):
        pass
    task_dir, trial = game_id.split("/", 1)
    task_type, obj, mrecep, target, scene = task_dir.split("-")
    toggle = task_type in _TYPES_WITH_TOGGLE
    return {
        "task_type": task_type,
        "task_id": trial,
        "pddl_params": {
            "object_target": obj,
            "parent_target": "" if toggle else target,
            "toggle_target": target if toggle else "",
            "mrecep_target": "" if mrecep == "None" else mrecep,
            "object_sliced": False,
        },
        "scene": {"scene_num": int(scene)},
        "lorekit": {"derived": "from the task folder's name (no traj_data.json in the copy)"},
    }


def _write_logic(folder: Path) -> None:
    """``logic/`` as alfworld-download writes it: the package's files of the release."""
    folder.mkdir(parents=True)
    (folder / "alfred.twl2").write_text(release.release_grammar(), encoding="utf-8")
    (folder / "alfred.pddl").write_text(release.release_domain(), encoding="utf-8")


def _verify(staging: Path, games: Any, out: Rebuilt, progress: Progress | None) -> None:
    """Replay every written game against the record; drop those that differ."""
    unseen = staging / "json_2.1.1" / release.UNSEEN
    written = sorted(g for g in out.sources if g not in out.left_out)
    if not written:
        return
    env = replay_env(staging)
    try:
        for done, game_id in enumerate(written, 1):
            result = replay_game(env, games[game_id])
            out.replay.games.append(result)
            if not result.ok:
                why = "; ".join(result.differences) or "the outcome differs from the record's"
                out.left_out[game_id] = f"does not replay equal: {why}"
                shutil.rmtree(unseen / game_id)
            if progress is not None:
                progress(done, len(written))
    finally:
        env.close()


def _write_marker(staging: Path, out: Rebuilt) -> None:
    installed = len(out.sources) - len(out.left_out)
    from_candidates = sum(1 for g, s in out.sources.items() if s == "candidates")
    made = (
        "rebuilt by LoreKit from AutoManual's copy"
        + (f" and {from_candidates} candidate game files" if from_candidates else "")
        + f", verified against ADaPT's record: {installed} of 134 games"
    )
    data = {
        "variant": "release",
        "made": made,
        "replay": out.replay.summary(),
        "sources": out.sources,
        "left_out": out.left_out,
    }
    (staging / MARKER).write_text(json.dumps(data, indent=2), encoding="utf-8")
