"""Page sets: which version of the MiniWoB++ task pages an episode plays.

- ``farama`` (the default): the Farama ``miniwob`` package's pages as installed.
- ``automanual``: the pages as AutoManual ran them. Its code bundles older
  copies (``computergym``) that differ from miniwob 1.1.0 on 13 of its 53 task
  pages: the checkbox pages score all or nothing, email-inbox and social-media
  show fewer items, simple-algebra shows "+" for a minus problem, terminal
  takes ``ls -l`` and ``rm -f x``, choose-list names its options in a ``class``
  attribute; and its core script writes what is typed into each field's
  ``value`` attribute. ``pagesets.yaml`` states each difference as a change
  to the installed page, and this module writes the changed pages once per
  process into a folder of their own (the rest of the package's files linked,
  not copied), from which the browser loads them. Every episode of this set
  loads its page afresh, as AutoManual started a new browser per episode.

A change whose text is not found exactly once in the installed page raises
:class:`PageSetError`: the set is written against miniwob 1.1.0, and a page
that changed under it must not be played as if it were AutoManual's.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from lorekit import yamlio

PageSet = Literal["farama", "automanual"]
PAGE_SETS: tuple[PageSet, ...] = ("farama", "automanual")
PATCHES_FILE = Path(__file__).with_name("pagesets.yaml")


class PageSetError(ValueError):
    """A page set's change does not fit the installed page (another miniwob version)."""


@dataclass(frozen=True)
class Change:
    """Replace ``find`` (present exactly once) with ``put``; ``why`` says what it changes."""

    why: str
    find: str
    put: str


@dataclass(frozen=True)
class PageSetSpec:
    """A set's changes to the core script and to task pages, by page name, and
    its pages' own time limits (ms; ``"default"`` for a page that sets none)."""

    name: str
    core: tuple[Change, ...]
    pages: Mapping[str, tuple[Change, ...]]
    time_limits_ms: Mapping[str, int]


def check_page_set(pages: object) -> PageSet:
    if pages not in PAGE_SETS:
        raise ValueError(f"pages must be one of {', '.join(PAGE_SETS)}, got {pages!r}")
    return pages


@functools.cache
def html_root() -> Path:
    """The installed package's ``html`` folder (``core``, ``common``, ``miniwob``, ...)."""
    import miniwob

    return Path(miniwob.__file__).parent / "html"


@functools.cache
def spec(name: PageSet) -> PageSetSpec:
    """The changes ``pagesets.yaml`` lists for a set (none for ``farama``)."""
    text = PATCHES_FILE.read_text(encoding="utf-8")
    data: dict[str, Any] = yamlio.safe_load(text, source=str(PATCHES_FILE))
    entry = data.get(name) or {}

    def changes(items: Sequence[Mapping[str, Any]]) -> tuple[Change, ...]:
        return tuple(Change(str(c["why"]), str(c["find"]), str(c["put"])) for c in items)

    return PageSetSpec(
        name,
        changes(entry.get("core") or ()),
        {str(page): changes(items) for page, items in (entry.get("pages") or {}).items()},
        {str(p): int(s) * 1000 for p, s in (entry.get("time_limits_s") or {}).items()},
    )


def own_time_limit_ms(name: PageSet, task: str) -> int | None:
    """The time limit a set's version of ``task`` sets itself; None where the set
    keeps the installed page's own (``farama``), which the page applies at load."""
    limits = spec(name).time_limits_ms
    return limits.get(task, limits.get("default"))


def changed_pages(name: PageSet) -> tuple[str, ...]:
    """The task pages a set plays differently from the installed package."""
    return tuple(sorted(spec(name).pages))


def apply_changes(text: str, changes: Sequence[Change], where: str) -> str:
    """``text`` with each change made; :class:`PageSetError` when one does not fit."""
    for change in changes:
        found = text.count(change.find)
        if found != 1:
            raise PageSetError(
                f"{where}: the change '{change.why}' expects {change.find!r} once, found it "
                f"{found} times; the page set is written for miniwob 1.1.0"
            )
        text = text.replace(change.find, change.put)
    return text


_BUILD_LOCK = threading.Lock()


@functools.cache
def pages_root(name: PageSet) -> Path:
    """The ``html`` folder a set's pages load from: the package's own for
    ``farama``; for another set, a folder written once (per set, package and
    changes) under the temp directory, reused by later processes."""
    root = html_root()
    if name == "farama":
        return root
    wanted = spec(name)
    version = _miniwob_version()
    digest = hashlib.sha256(
        f"{root}\n{version}\n{PATCHES_FILE.read_text(encoding='utf-8')}".encode()
    ).hexdigest()[:16]
    base = Path(tempfile.gettempdir()) / f"lorekit-miniwob-pages-{os.getuid()}"
    target = base / f"{name}-{digest}"
    with _BUILD_LOCK:
        if (target / ".complete").exists():
            return target
        base.mkdir(mode=0o700, parents=True, exist_ok=True)
        partial = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=base))
        try:
            _write_set(root, partial, wanted)
            (partial / ".complete").write_text(f"miniwob {version}\n")
            try:  # atomic: a folder at ``target`` is always a complete one
                os.replace(partial, target)
            except OSError:  # another process wrote it first (a non-empty target)
                if not (target / ".complete").exists():
                    raise
        finally:
            shutil.rmtree(partial, ignore_errors=True)
    return target


def _write_set(root: Path, out: Path, wanted: PageSetSpec) -> None:
    """The package's ``html`` folder in ``out``: changed files written, the rest linked."""
    unknown = sorted(p for p in wanted.pages if not (root / "miniwob" / f"{p}.html").exists())
    if unknown:
        raise PageSetError(f"page set {wanted.name}: no such page(s) {', '.join(unknown)}")
    for entry in root.iterdir():
        if entry.name not in ("core", "miniwob"):
            (out / entry.name).symlink_to(entry)
    for folder, changes in (
        ("core", {"core.js": wanted.core}),
        ("miniwob", {f"{p}.html": c for p, c in wanted.pages.items()}),
    ):
        (out / folder).mkdir()
        for entry in (root / folder).iterdir():
            made = changes.get(entry.name)
            if made:
                text = entry.read_text(encoding="utf-8")
                where = f"page set {wanted.name}, {folder}/{entry.name}"
                (out / folder / entry.name).write_text(
                    apply_changes(text, made, where), encoding="utf-8"
                )
            else:
                (out / folder / entry.name).symlink_to(entry)


def page_url(task: str, name: PageSet) -> str:
    """The ``file://`` address of a task page in a set."""
    return (pages_root(name) / "miniwob" / f"{task}.html").as_uri()


def loads_afresh(name: PageSet) -> bool:
    """Whether every episode loads its page anew (AutoManual's new browser per episode)
    rather than restarting it in place (LoreKit's cheaper reset)."""
    return name != "farama"


def _miniwob_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("miniwob")
    except PackageNotFoundError:
        return "unknown"
