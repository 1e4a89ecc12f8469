"""Which ALFWorld games a folder holds, and where each kind is found.

Three kinds of official-format folders exist and are easy to confuse, since
all three are laid out as ``json_2.1.1/<split>/<task dir>/<trial>``:

- ``release``: ALFWorld's 2.1.1 release, the games alfworld 0.3.x played
  (ReAct, ADaPT; ``lorekit alfworld fetch-data`` or ``rebuild-release``);
- ``automanual``: AutoManual's edit of it (the copy its repository ships);
- ``release-2.1.3``: alfworld 0.4's re-generated games ("move X to Y").

A fourth, LoreKit's ``generated`` games, can be written in the same layout.
:func:`game_variant` tells them apart by what each game says (its grammar, and
LoreKit's entry in a generated game's ``traj_data.json``), so a folder is never
taken for what it is not, whatever it is called or wherever it lies.

Nothing here imports TextWorld.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lorekit.envs.alfworld.release import manifest


class GameSourceError(ValueError):
    """A game source that cannot be read; the message says what to fix."""


OFFICIAL_VARIANTS = ("release", "automanual", "release-2.1.3")
"""What ``source="official"`` can play, by ``variant=``; ``"any"`` takes a folder as it is."""
ANY = "any"
DATA_ENV_VAR = "ALFWORLD_DATA"
MARKER = "lorekit-alfworld.json"
"""Written beside ``json_2.1.1/`` by LoreKit's installers: the variant and how it was made."""
AUTOMANUAL_COPY = "alfworld-2.1.1"
"""The name of AutoManual's copy in the project's shared data folder."""


def spec(variant: str) -> Mapping[str, Any]:
    found: Mapping[str, Any] = manifest()["variants"][variant]
    return found


def title(variant: str) -> str:
    return str(spec(variant)["title"])


def own_syntax(variant: str) -> str:
    """The placing command the variant's games use ("put" or "move")."""
    return str(spec(variant)["syntax"])


def game_variant(grammar: str, traj: Mapping[str, Any]) -> str:
    """The kind of one game, from its grammar and ``traj_data.json``; ``"unknown"``
    for a grammar none of the known marks fit."""
    meta = traj.get("lorekit")
    if isinstance(meta, Mapping) and meta.get("generated"):
        return "generated"
    for variant in OFFICIAL_VARIANTS:
        marks = [str(m) for m in spec(variant)["marks"]]
        if all(mark in grammar for mark in marks):
            return variant
    return "unknown"


def user_data_dir() -> Path:
    """LoreKit's folder for data fetched on request (``$LOREKIT_DATA``, else the XDG one)."""
    if os.environ.get("LOREKIT_DATA"):
        return Path(os.environ["LOREKIT_DATA"]).expanduser()
    xdg = os.environ.get("XDG_DATA_HOME")
    return (Path(xdg) if xdg else Path.home() / ".local" / "share") / "lorekit"


def default_home(variant: str) -> Path:
    """Where LoreKit's installers put ``variant`` unless told otherwise."""
    return user_data_dir() / f"alfworld-{variant}"


def shared_copy() -> Path:
    """AutoManual's copy in a development checkout's ``shared/data`` beside the repository."""
    return Path(__file__).resolve().parents[4] / "shared" / "data" / AUTOMANUAL_COPY


def json_root(folder: Path) -> Path:
    """``folder/json_2.1.1`` if there, else ``folder`` itself."""
    return folder / "json_2.1.1" if (folder / "json_2.1.1").is_dir() else folder


def first_game(root: Path) -> Path | None:
    """One game folder of a ``json_2.1.1`` root (the unseen split's first, if any)."""
    for split in ("valid_unseen", "valid_seen", "train"):
        folder = root / split
        if folder.is_dir():
            for traj in sorted(folder.glob("*/*/traj_data.json")):
                if (traj.parent / "game.tw-pddl").is_file():
                    return traj.parent
    return None


def folder_variant(root: Path) -> str | None:
    """The kind of the games under a ``json_2.1.1`` root, read from its first game."""
    game = first_game(root)
    if game is None:
        return None
    try:
        data = json.loads((game / "game.tw-pddl").read_text("utf-8"))
        traj = json.loads((game / "traj_data.json").read_text("utf-8"))
    except (OSError, ValueError):
        return "unknown"
    if not isinstance(data, dict) or not isinstance(traj, dict):
        return "unknown"
    return game_variant(str(data.get("grammar", "")), traj)


def marker(root: Path) -> Mapping[str, Any]:
    """LoreKit's note beside ``json_2.1.1`` (empty where there is none)."""
    path = (root.parent if root.name == "json_2.1.1" else root) / MARKER
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _candidates(variant: str) -> list[tuple[str, Path]]:
    found = []
    if os.environ.get(DATA_ENV_VAR):
        found.append((f"${DATA_ENV_VAR}", Path(os.environ[DATA_ENV_VAR]).expanduser()))
    if variant in OFFICIAL_VARIANTS:
        found.append(("LoreKit's data folder", default_home(variant)))
    if variant == "automanual":
        found.append(("the project's shared data", shared_copy()))
    return found


def locate(variant: str, data_dir: str | Path | None = None) -> Path:
    """The ``json_2.1.1`` root holding ``variant``'s games.

    ``data_dir`` is used as given (and must hold that variant); otherwise
    ``$ALFWORLD_DATA``, LoreKit's data folder and, for AutoManual's copy, a
    development checkout's shared data are tried in that order, skipping folders
    that hold another kind of game. The error says where it looked and how to
    install the data.
    """
    if variant != ANY and variant not in OFFICIAL_VARIANTS:
        raise GameSourceError(
            f"variant must be one of {', '.join((*OFFICIAL_VARIANTS, ANY))}, got {variant!r}"
        )
    if data_dir is not None:
        root = json_root(Path(data_dir).expanduser())
        _check(root, variant, f"data_dir={data_dir}")
        return root
    looked = []
    other = None
    for label, folder in _candidates(variant):
        root = json_root(folder)
        held = folder_variant(root) if root.is_dir() else None
        if held is not None and (variant == ANY or held == variant):
            return root
        looked.append(f"{label} ({folder}: {_holds(held, root)})")
        other = other or (held if held in OFFICIAL_VARIANTS else None)
    where = "; ".join(looked) if looked else f"${DATA_ENV_VAR} is not set"
    instead = f" To play what is there, pass variant={other}." if other else ""
    raise GameSourceError(f"no {_wanted(variant)} found: {where}. {_how_to_get(variant)}{instead}")


def _check(root: Path, variant: str, label: str) -> None:
    held = folder_variant(root) if root.is_dir() else None
    if held is None:
        raise GameSourceError(
            f"{label}: no ALFWorld games at {root} (expected json_2.1.1/<split>/<task>/<trial>/"
            "{game.tw-pddl,traj_data.json}). " + _how_to_get(variant)
        )
    if variant != ANY and held != variant:
        raise GameSourceError(
            f"{label}: {root} holds {_holds(held, root)}, not {_wanted(variant)}; "
            f"pass variant={held if held in OFFICIAL_VARIANTS else ANY} to play them"
        )


def _wanted(variant: str) -> str:
    return "ALFWorld games" if variant == ANY else title(variant)


def _holds(held: str | None, root: Path) -> str:
    if held is None:
        return "missing" if not root.is_dir() else "no games"
    return "games of an unknown kind" if held == "unknown" else title(held)


def _how_to_get(variant: str) -> str:
    if variant == "automanual":
        return (
            "AutoManual's copy is its repository's alfworld/downloaded folder "
            "(minghchen/automanual): pass data_dir=... or set $ALFWORLD_DATA to it"
        )
    return (
        "Install the release with `lorekit alfworld fetch-data` (or rebuild it offline with "
        "`lorekit alfworld rebuild-release`), or set $ALFWORLD_DATA to a folder holding json_2.1.1/"
    )


def describe(count: int, split: str, folder: Path, variant: str | None, kinds: set[str]) -> str:
    """What a split of a folder is, for run summaries: the variant's title and
    note (and how LoreKit made it), or the kinds of game a plain folder holds."""
    if variant in OFFICIAL_VARIANTS:
        made = marker(json_root(folder.parent)).get("made")
        how = f"; {made}" if made else ""
        note = spec(variant)["note"]
        return f"{count} games of {title(variant)} ({split}, {note}{how}; {folder})"
    named = sorted(title(k) if k != "unknown" else "games of an unknown kind" for k in kinds)
    return f"{count} games from {folder} ({split}): {'; '.join(named) or 'none'}"


def installed() -> list[str]:
    """One line per official variant: where it is found and how many games it has."""
    lines = []
    for variant in ("release", "automanual"):
        try:
            root = locate(variant)
        except ValueError:
            lines.append(f"{title(variant)}: not installed")
            continue
        counts = {
            split: sum(1 for _ in (root / split).glob("*/*/game.tw-pddl"))
            for split in ("train", "valid_seen", "valid_unseen")
            if (root / split).is_dir()
        }
        how = marker(root).get("made")
        made = f", {how}" if how else ""
        games = ", ".join(f"{split} {n}" for split, n in counts.items())
        lines.append(f"{title(variant)}: {games} games at {root}{made}")
    return lines
