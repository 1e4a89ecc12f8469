"""The recipe data pack of ADaPT's TextCraft: where it comes from, where it lives.

ADaPT's TextCraft (``--env-opt source=datapack --env-opt compat=true``) plays
Minecraft 1.16.5's own recipe files, which the repository does not ship. ADaPT's
README points at their public source, the 1.16.5 branch of
InventivetalentDev/minecraft-assets (``data/minecraft/recipes``).
``lorekit textcraft fetch-data`` gets them only when the user asks: each of the
860 files is checked against ``datapack.sha256`` (shipped with LoreKit) before
anything is installed, so a changed or truncated file installs nothing.

The pack is looked for, in order, at ``$LOREKIT_TEXTCRAFT_DATAPACK``, in the
user data folder (``$LOREKIT_DATA``, else ``$XDG_DATA_HOME/lorekit``, else
``~/.local/share/lorekit``) and, in a development checkout, in the project's
``shared/data`` folder beside the repository.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import urllib.error
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

PACK_NAME = "textcraft-recipes-1.16.5"
SOURCE = "InventivetalentDev/minecraft-assets, branch 1.16.5, data/minecraft/recipes"
SOURCE_URL = (
    "https://raw.githubusercontent.com/InventivetalentDev/minecraft-assets/1.16.5/"
    "data/minecraft/recipes/"
)
"""Base URL of the recipe files (ADaPT's README links the same folder)."""
URL_ENV_VAR = "LOREKIT_TEXTCRAFT_DATAPACK_URL"
DATAPACK_ENV_VAR = "LOREKIT_TEXTCRAFT_DATAPACK"
CHECKSUMS = Path(__file__).with_name("datapack.sha256")
FETCH_COMMAND = "lorekit textcraft fetch-data"

Progress = Callable[[int, int], None]
"""Called with (files done, files in all) as the pack is fetched or copied."""


class DataPackError(RuntimeError):
    """The pack could not be fetched, or a file did not match its checksum."""


class DownloadError(DataPackError):
    """A file could not be downloaded (no network, a wrong URL): copying the files from a
    folder (``from_path``) is the way round it."""


def user_data_dir() -> Path:
    """LoreKit's folder for data fetched on the user's request."""
    if os.environ.get("LOREKIT_DATA"):
        return Path(os.environ["LOREKIT_DATA"]).expanduser()
    xdg = os.environ.get("XDG_DATA_HOME")
    return (Path(xdg) if xdg else Path.home() / ".local" / "share") / "lorekit"


def default_dest() -> Path:
    """Where ``fetch-data`` installs the pack unless told otherwise."""
    return user_data_dir() / PACK_NAME


def _shared_copy() -> Path:
    # A development checkout: the project's shared/ folder sits beside the repository.
    return Path(__file__).resolve().parents[4] / "shared" / "data" / PACK_NAME


def find_datapack() -> Path:
    """The folder the ``datapack`` source reads: the first candidate that
    exists, else where ``fetch-data`` would put it (so a message can say so)."""
    if os.environ.get(DATAPACK_ENV_VAR):
        return Path(os.environ[DATAPACK_ENV_VAR]).expanduser()
    for candidate in (default_dest(), _shared_copy()):
        if candidate.is_dir():
            return candidate
    return default_dest()


def missing_message(folder: Path) -> str:
    """What to say when the pack is not there: the command, and the source."""
    return (
        f"recipe data pack not found at {folder}: ADaPT's TextCraft plays Minecraft 1.16.5's "
        f"recipe files, which LoreKit does not ship; get them with `{FETCH_COMMAND}` "
        f"(downloads from {SOURCE}, checksummed), or point ${DATAPACK_ENV_VAR} at a copy"
    )


def checksums() -> dict[str, str]:
    """File name -> sha256 of every file of the pack."""
    out: dict[str, str] = {}
    for line in CHECKSUMS.read_text(encoding="utf-8").splitlines():
        if line.strip():
            digest, name = line.split(maxsplit=1)
            out[name.strip()] = digest
    return out


def install(
    dest: Path | None = None,
    *,
    url: str | None = None,
    from_path: Path | None = None,
    progress: Progress | None = None,
    timeout_s: float = 30.0,
) -> Path:
    """Fetch (or copy from ``from_path``) the pack, verify every file, then
    move it into ``dest`` whole; on any failure nothing is installed.

    ``url`` defaults to ``$LOREKIT_TEXTCRAFT_DATAPACK_URL`` or :data:`SOURCE_URL`.
    ``from_path`` may be the recipe folder itself or a clone of the source
    repository (its ``data/minecraft/recipes``).
    """
    dest = (dest or default_dest()).expanduser()
    wanted = checksums()
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}-", dir=dest.parent))
    try:
        read = _reader(url, from_path, timeout_s)
        done = 0

        def one(name: str) -> None:
            data = read(name)
            digest = hashlib.sha256(data).hexdigest()
            if digest != wanted[name]:
                raise DataPackError(
                    f"{name}: checksum mismatch (sha256 {digest}, expected {wanted[name]}); "
                    "nothing installed"
                )
            (staging / name).write_bytes(data)

        with ThreadPoolExecutor(max_workers=1 if from_path else 8) as pool:
            for _ in pool.map(one, sorted(wanted)):
                done += 1
                if progress is not None:
                    progress(done, len(wanted))
        if dest.exists():
            shutil.rmtree(dest)
        staging.rename(dest)
        return dest
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _reader(url: str | None, from_path: Path | None, timeout_s: float) -> Callable[[str], bytes]:
    if from_path is not None:
        folder = from_path.expanduser()
        if (folder / "data" / "minecraft" / "recipes").is_dir():
            folder = folder / "data" / "minecraft" / "recipes"
        if not folder.is_dir():
            raise DataPackError(f"--from: no folder {folder}")

        def read_file(name: str) -> bytes:
            try:
                return (folder / name).read_bytes()
            except OSError as exc:
                raise DataPackError(f"--from {folder}: {name}: {exc.strerror}") from None

        return read_file
    base = url or os.environ.get(URL_ENV_VAR) or SOURCE_URL
    if not base.startswith(("https://", "http://")):
        raise DataPackError(f"expected an http(s) URL for the data pack, got {base!r}")
    base = base if base.endswith("/") else base + "/"

    def fetch(name: str) -> bytes:
        try:
            with urllib.request.urlopen(base + name, timeout=timeout_s) as answer:
                data: bytes = answer.read()
                return data
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise DownloadError(f"could not download {base}{name}: {reason}") from None

    return fetch
