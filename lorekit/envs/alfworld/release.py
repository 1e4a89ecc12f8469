"""ALFWorld's 2.1.1 release: its logic files, its games' pins, and how to tell
the release from AutoManual's edit of it and from LoreKit's generated games.

The facts live in ``release.yaml`` (archive sizes and sha256 values, the
logic files' sha256, where ADaPT's record and the two missing trials are
published) and ``release_games.sha256`` (the sha256 of the PDDL problem of
each of the 134 unseen games the papers report). No ALFWorld data is shipped:
the release's grammar and domain are derived from the alfworld wheel that
the ``alfworld`` extra installs (:func:`release_grammar`,
:func:`game_domain`) and checked against the pinned hashes, so a different
wheel fails loudly instead of giving other text.

Nothing here imports TextWorld, so ``lorekit reproduce list`` can say what is
installed without the extra.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.resources
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lorekit import yamlio

MANIFEST_FILE = Path(__file__).with_name("release.yaml")
GAME_PINS_FILE = Path(__file__).with_name("release_games.sha256")
UNSEEN = "valid_unseen"


class ReleaseError(RuntimeError):
    """The release's logic could not be derived, or a file is not what its pin says."""


@functools.cache
def manifest() -> Mapping[str, Any]:
    data: dict[str, Any] = yamlio.safe_load(
        MANIFEST_FILE.read_text(encoding="utf-8"), source=str(MANIFEST_FILE)
    )
    return data


@functools.cache
def game_pins() -> Mapping[str, str]:
    """``<task dir>/<trial>`` -> sha256 of its PDDL problem, for the 134 unseen games."""
    rows = (line.split() for line in GAME_PINS_FILE.read_text("utf-8").splitlines() if line)
    return {game_id: digest for game_id, digest in rows}


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _wheel_file(name: str, pin: str) -> str:
    try:
        text = (importlib.resources.files("alfworld") / "data" / name).read_text("utf-8")
    except (ModuleNotFoundError, OSError) as exc:
        raise ReleaseError(
            f"the alfworld wheel's data/{name} is not readable ({exc}); install the extra: "
            "pip install 'lorekit[alfworld]'"
        ) from None
    if sha256_text(text) != pin:
        raise ReleaseError(
            f"alfworld's data/{name} is not the 0.4.2 file LoreKit derives the release's "
            f"logic from (sha256 {sha256_text(text)[:12]}, expected {pin[:12]})"
        )
    return text


def _edited(text: str, edits: list[list[str]], what: str) -> str:
    for old, new in edits:
        if old not in text:
            raise ReleaseError(f"{what}: the edit of {old!r} does not apply")
        text = text.replace(old, new)
    return text


def _checked(text: str, pin: str, what: str) -> str:
    if sha256_text(text) != pin:
        raise ReleaseError(
            f"{what} derived from the wheel is not the release's (sha256 "
            f"{sha256_text(text)[:12]}, expected {pin[:12]})"
        )
    return text


@functools.cache
def release_grammar() -> str:
    """``alfred.twl2`` as alfworld 0.2.2-0.3.5 shipped it ("put X in/on Y",
    "You arrive at loc 12."), with its ``UNKNOWN GOAL`` placeholder."""
    spec = manifest()["from_wheel"]
    text = _wheel_file("alfred.twl2", str(spec["grammar_sha256"]))
    text = text[: text.index(str(spec["grammar_cut_from"]))]
    text = _edited(text, spec["grammar_edits"], "alfred.twl2")
    return _checked(text, str(manifest()["logic"]["grammar_sha256"]), "alfred.twl2")


@functools.cache
def release_domain() -> str:
    """``alfred.pddl`` as alfworld 0.2.2-0.3.5 shipped it (``$ALFWORLD_DATA/logic``)."""
    spec = manifest()["from_wheel"]
    text = _wheel_file("alfred.pddl", str(spec["domain_sha256"]))
    text = text[: text.index(str(spec["domain_cut_from"]))] + str(spec["domain_cut_keep"])
    return _checked(text, str(manifest()["logic"]["domain_sha256"]), "alfred.pddl")


@functools.cache
def game_domain() -> str:
    """The PDDL domain the release's game files carry (see ``release.yaml``)."""
    spec = manifest()["from_wheel"]
    text = _edited(release_domain(), spec["game_domain_edits"], "the games' domain")
    return _checked(text, str(manifest()["logic"]["game_domain_sha256"]), "the games' domain")


def grammar_with_goal(sentence: str) -> str:
    """The release grammar with its task sentence (without the final period) filled in."""
    return release_grammar().replace("UNKNOWN GOAL", sentence)


def archive_specs() -> list[Mapping[str, Any]]:
    return list(manifest()["archives"])
