"""``lorekit alfworld fetch-data``: install ALFWorld's release, checked first.

The release is the three archives alfworld 0.2.2-0.3.5's ``alfworld-download``
fetches (``release.yaml``). Each is downloaded (or read from ``--from PATH``,
a folder holding them) into a folder beside the destination, and its size and
sha256 are compared with the manifest's; only when all three match are they
unpacked (refusing any member that would land outside the folder, or is a
link), the release's ``logic/`` files added, and the whole moved into place.
Any failure leaves the destination as it was.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import tempfile
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable, Mapping
from pathlib import Path, PurePosixPath
from typing import IO, Any

from lorekit.envs.alfworld import release
from lorekit.envs.alfworld.variants import MARKER, default_home, folder_variant, title

Progress = Callable[[str, int, int], None]
"""Called with (archive name, bytes so far, bytes in all)."""
URL_ENV_VAR = "LOREKIT_ALFWORLD_RELEASE_URL"
"""A base URL to fetch the archives from instead of the addresses in the manifest."""
_CHUNK = 1 << 20


class FetchError(RuntimeError):
    """The release could not be fetched or did not match its manifest; nothing installed."""


def check_dest(dest: Path) -> None:
    """Only a missing or empty folder, or an earlier install of LoreKit's, is replaced."""
    if dest.exists() and not dest.is_dir():
        raise FetchError(f"--dest {dest} exists and is not a folder")
    if dest.is_dir() and any(dest.iterdir()) and not (dest / MARKER).is_file():
        raise FetchError(
            f"--dest {dest} is not empty and holds no LoreKit install ({MARKER}); "
            "give an empty or new folder"
        )


def staging_for(dest: Path) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f".{dest.name}-", dir=dest.parent))


def move_into_place(staging: Path, dest: Path) -> None:
    if dest.exists():
        shutil.rmtree(dest)
    staging.rename(dest)


def fetch_release(
    dest: Path | None = None,
    *,
    from_path: Path | None = None,
    url: str | None = None,
    specs: list[Mapping[str, Any]] | None = None,
    progress: Progress | None = None,
    timeout_s: float = 60.0,
) -> Path:
    """Install the release into ``dest`` (default: LoreKit's data folder); see the
    module docstring. ``url`` (or ``$LOREKIT_ALFWORLD_RELEASE_URL``) replaces the
    manifest's addresses by a base URL; ``specs`` the manifest's archive list."""
    dest = (dest or default_home("release")).expanduser()
    check_dest(dest)
    wanted = specs if specs is not None else release.archive_specs()
    staging = staging_for(dest)
    try:
        archives = staging / ".archives"
        archives.mkdir()
        for spec in wanted:
            _get(spec, archives, from_path, url or os.environ.get(URL_ENV_VAR), progress, timeout_s)
        for spec in wanted:
            _unpack(archives / str(spec["name"]), staging)
        shutil.rmtree(archives)
        logic = staging / "logic"
        logic.mkdir(exist_ok=True)
        (logic / "alfred.twl2").write_text(release.release_grammar(), encoding="utf-8")
        (logic / "alfred.pddl").write_text(release.release_domain(), encoding="utf-8")
        held = folder_variant(staging / "json_2.1.1")
        marker = {
            "variant": "release",
            "made": "downloaded by lorekit alfworld fetch-data, every archive's sha256 checked",
            "archives": {str(s["name"]): str(s["sha256"]) for s in wanted},
            "games_read_as": title(held) if held and held != "unknown" else str(held),
        }
        (staging / MARKER).write_text(json.dumps(marker, indent=2), encoding="utf-8")
        move_into_place(staging, dest)
        return dest
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _get(
    spec: Mapping[str, Any],
    folder: Path,
    from_path: Path | None,
    base: str | None,
    progress: Progress | None,
    timeout_s: float,
) -> None:
    """Copy or download one archive into ``folder``, checking its size and sha256."""
    name = str(spec["name"])
    size = int(spec["bytes"])
    target = folder / name
    if from_path is not None:
        source = from_path.expanduser() / name
        try:
            with source.open("rb") as stream:
                digest, got = _copy(stream, target, name, size, progress)
        except OSError as exc:
            raise FetchError(f"--from {from_path}: {name}: {exc.strerror}") from None
    else:
        address = f"{base.rstrip('/')}/{name}" if base else str(spec["url"])
        if not address.startswith(("https://", "http://")):
            raise FetchError(f"expected an http(s) URL for {name}, got {address!r}")
        try:
            with urllib.request.urlopen(address, timeout=timeout_s) as answer:
                digest, got = _copy(answer, target, name, size, progress)
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise FetchError(
                f"could not download {address} ({reason}); without network, download the "
                "three archives elsewhere and give their folder with --from PATH"
            ) from None
    if got != size or digest != spec["sha256"]:
        raise FetchError(
            f"{name}: {got:,} bytes with sha256 {digest}, expected {size:,} bytes with sha256 "
            f"{spec['sha256']}; nothing installed"
        )


def _copy(
    stream: IO[bytes], target: Path, name: str, size: int, progress: Progress | None
) -> tuple[str, int]:
    digest = hashlib.sha256()
    got = 0
    with target.open("wb") as out:
        while chunk := stream.read(_CHUNK):
            digest.update(chunk)
            out.write(chunk)
            got += len(chunk)
            if got > size:
                break  # longer than the manifest says: no need to read the rest
            if progress is not None:
                progress(name, got, size)
    return digest.hexdigest(), got


def _unpack(archive: Path, into: Path) -> None:
    """Unpack ``archive`` into ``into``; a member that is a link, or whose path
    is absolute or climbs out, refuses the whole archive."""
    root = into.resolve()
    with zipfile.ZipFile(archive) as zipped:
        members = zipped.infolist()
        for member in members:
            path = PurePosixPath(member.filename.replace("\\", "/"))
            kind = stat.S_IFMT(member.external_attr >> 16)
            bad = path.is_absolute() or ".." in path.parts or ":" in member.filename
            if bad or kind == stat.S_IFLNK or not (root / path).resolve().is_relative_to(root):
                raise FetchError(f"{archive.name}: refusing member {member.filename!r}")
        for member in members:
            target = root / PurePosixPath(member.filename.replace("\\", "/"))
            if member.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            with zipped.open(member) as src, target.open("wb") as dst:
                shutil.copyfileobj(src, dst)
