"""``splits.sha256``: the bytes of the shipped generated splits, pinned.

The ``dev`` and ``test`` splits are made in memory from seeds, so a change to
the generator, its data or the wheel's data could silently change the games
results are reported on. The pins make that loud: the test suite compares
every game with its pin. After a change made on purpose, rewrite them::

    python -m lorekit.envs.alfworld.pins --write

(without ``--write`` it only checks, and exits 1 on a difference). Writing first
plays every game's walkthrough on the engine (two processes, minutes) and
refuses to pin a split with a game it does not win, so a pinned game is one
that was won: the suite then plays a sample of them again, not all 254.
"""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

from lorekit.envs.alfworld.games import GENERATED_SPLITS, generated_split
from lorekit.envs.alfworld.generate import dump_json

PINS_FILE = Path(__file__).with_name("splits.sha256")


def split_pins() -> dict[str, str]:
    """``split/task dir/trial`` -> sha256 of its ``game.tw-pddl`` text, every shipped game."""
    return {
        f"{split}/{game.path}": hashlib.sha256(dump_json(game.game).encode()).hexdigest()
        for split in GENERATED_SPLITS
        for game in generated_split(split, "move")
    }


def read_pins(path: Path = PINS_FILE) -> dict[str, str]:
    rows = (line.split() for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
    return {key: digest for key, digest in rows}


def unwinnable(parts: int = 2) -> list[str]:
    """``split/path: problem`` for every shipped game whose walkthrough does not win on
    the engine (empty when all do), played on ``parts`` processes."""
    from concurrent.futures import ProcessPoolExecutor

    jobs = [(split, part) for split in GENERATED_SPLITS for part in range(parts)]
    with ProcessPoolExecutor(parts) as pool:
        found = pool.map(_unwinnable_part, [j[0] for j in jobs], [j[1] for j in jobs],
                         [parts] * len(jobs))  # fmt: skip
        return [line for lines in found for line in lines]


def _unwinnable_part(split: str, part: int, parts: int) -> list[str]:
    from lorekit.envs.alfworld.engine import AlfredEngine
    from lorekit.envs.alfworld.verify import play_walkthrough

    engine = AlfredEngine()
    games = generated_split(split, "move")[part::parts]
    problems = [(g.path, play_walkthrough(g.game, engine)) for g in games]
    return [f"{split}/{path}: {problem}" for path, problem in problems if problem is not None]


def write_pins(path: Path = PINS_FILE, *, check: bool = True) -> int:
    """Pin every shipped game; with ``check`` (the default) only once every walkthrough
    wins on the engine (ValueError naming the games that do not)."""
    if check and (bad := unwinnable()):
        raise ValueError(f"{len(bad)} shipped games are not won by their walkthrough: {bad[:5]}")
    pins = split_pins()
    path.write_text("".join(f"{key} {digest}\n" for key, digest in pins.items()), encoding="utf-8")
    return len(pins)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--write", action="store_true", help="rewrite splits.sha256")
    args = parser.parse_args(argv)
    if args.write:
        try:
            print(f"wrote {write_pins()} pins to {PINS_FILE}")
        except ValueError as exc:
            print(f"not written: {exc}")
            return 1
        return 0
    pinned, now = read_pins(), split_pins()
    changed = sorted(k for k in pinned.keys() | now.keys() if pinned.get(k) != now.get(k))
    for key in changed[:10]:
        print(f"changed: {key}")
    print(f"{len(changed)} of {len(now)} games differ from {PINS_FILE.name}")
    return 1 if changed else 0


if __name__ == "__main__":
    raise SystemExit(main())
