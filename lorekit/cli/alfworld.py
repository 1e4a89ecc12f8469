"""``lorekit alfworld``: ALFWorld's games, generated offline or installed.

- ``generate`` writes games made offline in ALFWorld's own layout
  (``<task dir>/<trial>/game.tw-pddl`` and ``traj_data.json``), so both
  ``make("alfworld", source=DIR)`` and alfworld's ``AlfredTWEnv`` read them;
  by default each game's walkthrough is played through the real engine first.
- ``fetch-data`` installs ALFWorld's 2.1.1 release, checked by sha256;
  ``rebuild-release`` rebuilds its 134 unseen games offline and verifies
  each on ADaPT's published record; ``data`` says what is installed.
"""

from __future__ import annotations

import collections
import hashlib
import sys
import tempfile
from pathlib import Path

import click

from lorekit.cli.errors import RunFailed, UserError
from lorekit.cli.options import SEED
from lorekit.extras import requires_extra


@click.group("alfworld")
def alfworld() -> None:
    """ALFWorld games: generate them offline, or install ALFWorld's release."""


@alfworld.command("generate")
@click.option(
    "--out",
    "out",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder to write the games into (created if missing).",
)
@click.option(
    "-n",
    "--n",
    "count",
    default=12,
    show_default=True,
    type=click.IntRange(min=1, max=100_000),
    help="How many games (cycling over the task types).",
)
@click.option("--seed", default=0, show_default=True, type=SEED)
@click.option(
    "--task-types",
    "task_types",
    default="",
    show_default=False,
    help="Comma-separated task types (default: all six).",
)
@click.option(
    "--syntax",
    type=click.Choice(["move", "put"]),
    default="move",
    show_default=True,
    help="Placing command: 'move X to Y' (alfworld 0.4) or 'put X in/on Y' (0.3, papers).",
)
@click.option(
    "--verify/--no-verify",
    default=True,
    show_default=True,
    help="Play every walkthrough on the real engine and require 'won' at its end.",
)
def generate(out: Path, count: int, seed: int, task_types: str, syntax: str, verify: bool) -> None:
    """Write N seeded, byte-reproducible games (generated, not ALFWorld's official set)."""
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out} exists and is not a folder")
    with requires_extra("lorekit alfworld generate", "alfworld"):
        from lorekit.envs.alfworld.engine import AlfredEngine
        from lorekit.envs.alfworld.generate import GenerationError, dump_json, generate_games
        from lorekit.envs.alfworld.verify import play_walkthrough
        from lorekit.envs.alfworld.world import TASK_TYPES
    types = [t.strip() for t in task_types.split(",") if t.strip()] or list(TASK_TYPES)
    unknown = [t for t in types if t not in TASK_TYPES]
    if unknown:
        raise UserError(
            f"--task-types: unknown {', '.join(unknown)}; known: {', '.join(TASK_TYPES)}"
        )
    from lorekit.progress import stderr_progress

    try:
        with stderr_progress("generating games") as progress:
            games = generate_games(
                count,
                seed,
                task_types=types,
                syntax=syntax,  # type: ignore[arg-type]
                label="gen",
                progress=progress,
            )
    except GenerationError as exc:
        raise RunFailed(str(exc)) from None
    failures = []
    if verify:
        engine = AlfredEngine()  # one engine (one copy of Fast Downward's library) for all
        with stderr_progress("verifying walkthroughs") as progress:
            for done, game in enumerate(games, 1):
                problem = play_walkthrough(game.game, engine)
                if problem is not None:
                    failures.append(f"{game.path}: {problem}")
                progress(done, len(games))
    if failures:
        raise RunFailed(
            f"{len(failures)} of {len(games)} games failed on the engine; first: {failures[0]}"
        )
    out.mkdir(parents=True, exist_ok=True)
    manifest = {"generator": "lorekit", "seed": seed, "syntax": syntax, "games": {}}
    for game in games:
        folder = game.write(out)
        digest = hashlib.sha256((folder / "game.tw-pddl").read_bytes()).hexdigest()
        manifest["games"][game.path] = digest  # type: ignore[index]
    (out / "lorekit-manifest.json").write_text(dump_json(manifest), encoding="utf-8")
    counts = collections.Counter(str(g.traj_data["task_type"]) for g in games)
    for task_type, n in sorted(counts.items()):
        click.echo(f"  {task_type:<32} {n}")
    checked = "; every walkthrough won on the engine" if verify else " (not verified: --no-verify)"
    click.echo(
        f"wrote {len(games)} generated games (not ALFWorld's official set) to {out}{checked}. "
        f"Play them: lorekit run alfworld --env-opt source={out} --split all --agent oracle"
    )


_DEST_HELP = (
    "Install here (default: $LOREKIT_DATA/alfworld-release, else "
    "~/.local/share/lorekit/alfworld-release, where source=official finds it)."
)


@alfworld.command("fetch-data")
@click.option(
    "--dest", type=click.Path(file_okay=False, path_type=Path), default=None, help=_DEST_HELP
)
@click.option(
    "--from",
    "from_path",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="A folder holding the three archives (json_2.1.1_json.zip, json_2.1.1_pddl.zip, "
    "json_2.1.1_tw-pddl.zip) instead of downloading them.",
)
@click.option(
    "--url",
    default=None,
    help="A base URL to download the archives from (default: "
    "$LOREKIT_ALFWORLD_RELEASE_URL, else ALFWorld's release 0.2.2 on GitHub).",
)
def fetch_data(dest: Path | None, from_path: Path | None, url: str | None) -> None:
    """Install ALFWorld's 2.1.1 release (what alfworld 0.3's alfworld-download gets).

    Each archive's size and sha256 are checked against the manifest shipped
    with LoreKit before anything is unpacked; a mismatch installs nothing."""
    if from_path is not None and url is not None:
        raise UserError("give one of --from and --url")
    with requires_extra("lorekit alfworld fetch-data", "alfworld"):
        from lorekit.envs.alfworld.fetch import FetchError, fetch_release
        from lorekit.envs.alfworld.release import ReleaseError

    bars: dict[str, int] = {}

    def progress(name: str, done: int, total: int) -> None:
        if sys.stderr.isatty() and done - bars.get(name, 0) >= total // 20:
            bars[name] = done
            click.echo(f"\r{name}: {done / total:.0%}", err=True, nl=done >= total)

    try:
        path = fetch_release(dest, from_path=from_path, url=url, progress=progress)
    except (FetchError, ReleaseError) as exc:
        raise RunFailed(str(exc)) from None
    except OSError as exc:
        raise UserError(f"{dest or 'the data folder'}: {exc.strerror or exc}") from None
    click.echo(f"installed ALFWorld's release: {path}")
    _how_to_play(path, dest)


@alfworld.command("rebuild-release")
@click.option(
    "--copy",
    "copy",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="AutoManual's copy of the data (the folder holding json_2.1.1; default: the "
    "project's shared/data/alfworld-2.1.1 when there).",
)
@click.option(
    "--record",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="ADaPT's published ALFWorld record (default: the project's shared copy, else "
    "downloaded from archiki/ADaPT; checked by its sha256).",
)
@click.option(
    "--candidates",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Another copy of the games' files for the two trials AutoManual's copy lacks "
    "(e.g. a checkout of jiangmin8/lz-tool-skillopt); each is checked by its pin.",
)
@click.option(
    "--dest", type=click.Path(file_okay=False, path_type=Path), default=None, help=_DEST_HELP
)
def rebuild_release_cmd(
    copy: Path | None, record: Path | None, candidates: Path | None, dest: Path | None
) -> None:
    """Rebuild the release's 134 unseen games offline and verify each on ADaPT's record.

    Each game's PDDL problem must match its pin; the release's grammar and domain
    come from the alfworld wheel (checked by their sha256) and the task sentence
    from the record. Only games that replay every recorded observation and the
    recorded outcome are installed."""
    with requires_extra("lorekit alfworld rebuild-release", "alfworld"):
        from lorekit.envs.alfworld.fetch import FetchError
        from lorekit.envs.alfworld.rebuild import RebuildError, rebuild_release
        from lorekit.envs.alfworld.record import RecordError, download_record, shared_record
        from lorekit.envs.alfworld.release import ReleaseError
        from lorekit.envs.alfworld.variants import default_home, shared_copy
    from lorekit.progress import stderr_progress

    copy = copy or (shared_copy() if shared_copy().is_dir() else None)
    if copy is None:
        raise UserError("--copy: give AutoManual's copy of ALFWorld's data (holding json_2.1.1)")
    target = dest or default_home("release")
    try:
        with tempfile.TemporaryDirectory() as scratch:
            if record is None:
                found = shared_record()
                record = found if found.is_file() else download_record(Path(scratch))
            with stderr_progress("replaying ADaPT's record") as progress:
                done = rebuild_release(
                    copy, record, target, candidates=candidates, progress=progress
                )
    except (RebuildError, RecordError, ReleaseError, FetchError) as exc:
        raise RunFailed(str(exc)) from None
    except OSError as exc:
        raise UserError(f"{target}: {exc.strerror or exc}") from None
    click.echo(done.summary())
    for game_id, why in sorted(done.left_out.items()):
        click.echo(f"  left out {game_id}: {why}")
    click.echo(f"installed ALFWorld's release (rebuilt, {done.installed} games): {target}")
    _how_to_play(target, dest)


def _how_to_play(path: Path, dest: Path | None) -> None:
    where = f" --env-opt data_dir={path}" if dest is not None else ""
    click.echo(
        f"play it: lorekit run alfworld --env-opt source=official{where} --split valid_unseen"
    )


@alfworld.command("data")
def data_cmd() -> None:
    """Which ALFWorld data is installed: the release, AutoManual's edit, where."""
    from lorekit.envs.alfworld.variants import installed

    for line in installed():
        click.echo(line)
