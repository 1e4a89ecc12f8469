"""``splits.sha256``: the bytes of the shipped generated splits, pinned.

The ``dev`` and ``test`` splits are made in memory from seeds, so a change to
the generator, its data or the wheel's data could silently change the games
results are reported on. The pins make that loud: the test suite compares
every game with its pin. After a change made on purpose, rewrite them::

    python -m lorekit.envs.alfworld.pins --write

(without ``--write`` it only checks, and exits 1 on a difference).
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


def write_pins(path: Path = PINS_FILE) -> int:
    pins = split_pins()
    path.write_text("".join(f"{key} {digest}\n" for key, digest in pins.items()), encoding="utf-8")
    return len(pins)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--write", action="store_true", help="rewrite splits.sha256")
    args = parser.parse_args(argv)
    if args.write:
        print(f"wrote {write_pins()} pins to {PINS_FILE}")
        return 0
    pinned, now = read_pins(), split_pins()
    changed = sorted(k for k in pinned.keys() | now.keys() if pinned.get(k) != now.get(k))
    for key in changed[:10]:
        print(f"changed: {key}")
    print(f"{len(changed)} of {len(now)} games differ from {PINS_FILE.name}")
    return 1 if changed else 0


if __name__ == "__main__":
    raise SystemExit(main())
