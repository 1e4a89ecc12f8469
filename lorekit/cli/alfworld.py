"""``lorekit alfworld generate``: write ALFWorld games made offline.

The games follow ALFWorld's own layout (``<task dir>/<trial>/game.tw-pddl``
and ``traj_data.json``), so both ``make("alfworld", source=DIR)`` and
alfworld's ``AlfredTWEnv`` read them. By default each game's walkthrough is
played through the real engine before the command reports success.
"""

from __future__ import annotations

import collections
import hashlib
from pathlib import Path

import click

from lorekit.cli.errors import RunFailed, UserError
from lorekit.cli.options import SEED
from lorekit.extras import requires_extra


@click.group("alfworld")
def alfworld() -> None:
    """ALFWorld games: generate them offline from the alfworld wheel's data."""


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
