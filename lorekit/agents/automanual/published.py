"""The runs AutoManual's authors published, read and checked field by field.

The authors ship, for ALFWorld and MiniWoB++, what their GPT-4 build left
behind for the testing stage: ``rule_manager.json`` (the rules, each with its
type, example and validation record, and the formulated manual under
``manual``) and ``skill_bank.json`` (one entry per task type: a skill, or with
``success: -1`` a failure record). :func:`read_published` turns the pair into a
:class:`PublishedRun`; a file that is not of that form is refused with one line
naming the file and the field (``rule_manager.json: all_rules.rule_3.type:
...``), never taken as text. :mod:`.published_import` puts a run into a build.

``published.yaml`` records which files are *the* published ones (their sha256,
the repository and commit they come from): :func:`identify` tells a copy of
them from any other run in the same format (a user's own run of the authors'
code is read the same way, and said to be something else). LoreKit never
ships the files: :func:`locate` finds a copy (``--from PATH``, LoreKit's data
folder, or a development checkout's ``shared/data``) and
:func:`fetch_published` downloads them from the repository, checked.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from lorekit import yamlio
from lorekit.agents.automanual.core import Rule, RuleType

RULES_FILE = "rule_manager.json"
SKILLS_FILE = "skill_bank.json"
URL_ENV_VAR = "LOREKIT_AUTOMANUAL_PUBLISHED_URL"
"""A base address to fetch the files from instead of the repository's (a mirror)."""
_RULE_ID = re.compile(r"rule_(\d+)")
_MAX_BYTES = 4 << 20  # the published files are 15-40 kB


class PublishedError(ValueError):
    """A published run's file is missing, malformed or not what it claims; one line."""


@dataclass(frozen=True, slots=True)
class LibraryItem:
    """One entry of ``skill_bank.json``: a skill (``success`` 1 direct, 0 after errors)
    or, with ``success`` -1, a failure record of its task type."""

    task_type: str
    goal: str
    opening: str
    text: str
    success: int
    failure_case: str = ""

    @property
    def is_skill(self) -> bool:
        return self.success >= 0


@dataclass(frozen=True, slots=True)
class PublishedRun:
    """Both files of one run, checked: rules, the manual (None if never formulated),
    skills and failure records; ``digests`` are the files' sha256, ``env`` the env
    whose published run they are (None: another run in the same format)."""

    rules: tuple[Rule, ...]
    manual: str | None
    items: tuple[LibraryItem, ...]
    digests: dict[str, str] = field(default_factory=dict)
    env: str | None = None
    where: str = ""

    @property
    def skills(self) -> tuple[LibraryItem, ...]:
        return tuple(i for i in self.items if i.is_skill)

    @property
    def reflections(self) -> tuple[LibraryItem, ...]:
        return tuple(i for i in self.items if not i.is_skill)

    def describe(self) -> str:
        """What this run is, for a run's notes and the commands' output."""
        what = (
            published_title(self.env)
            if self.env
            else f"a run in AutoManual's format ({self.where})"
        )
        counts = f"{len(self.rules)} rules, {len(self.skills)} skills"
        if self.reflections:
            counts += f", {len(self.reflections)} failure records"
        shown = f"manual of {len(self.manual):,} characters" if self.manual else "no manual"
        return f"{what}: {shown}, {counts}"


@cache
def manifest() -> dict[str, Any]:
    """``published.yaml``: the repository, commit, and each env's files and digests."""
    source = resources.files("lorekit.agents.automanual").joinpath("published.yaml")
    data = yamlio.safe_load(source.read_text(encoding="utf-8"), source="published.yaml")
    if not isinstance(data, dict) or not isinstance(data.get("runs"), dict):
        raise PublishedError("published.yaml: runs: expected a mapping of env: run")
    return data


def envs() -> list[str]:
    """The envs the authors published a run for."""
    return sorted(manifest()["runs"])


def _spec(env: str) -> dict[str, Any]:
    runs = manifest()["runs"]
    if env not in runs:
        raise PublishedError(
            f"the AutoManual authors published no run for env {env!r}; they did for "
            f"{', '.join(sorted(runs))}"
        )
    return dict(runs[env])


def published_title(env: str) -> str:
    """``AutoManual's published ALFWorld run (minghchen/automanual@aeb17e4, gpt-4-...)``."""
    data = manifest()
    where = f"{data['repository']}@{str(data['commit'])[:7]}"
    return f"{_spec(env)['title']} ({where}, {data['model']})"


def published_env_options(env: str) -> dict[str, Any]:
    """Env options a test with ``env``'s published run gets unless the user sets them."""
    return dict(_spec(env).get("env_options") or {})


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 16), b""):
            digest.update(chunk)
    return digest.hexdigest()


def identify(digests: dict[str, str]) -> str | None:
    """The env whose published run these files are (both digests match), else None."""
    for env, spec in manifest()["runs"].items():
        if dict(spec["files"]) == digests:
            return str(env)
    return None


# -- reading ---------------------------------------------------------------------------


def _load_json(path: Path) -> Any:
    try:
        if path.stat().st_size > _MAX_BYTES:
            raise PublishedError(f"{path}: more than {_MAX_BYTES >> 20} MB; not a published run")
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PublishedError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PublishedError(f"{path}: cannot be read: {exc}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise PublishedError(f"{path}: not JSON (line {exc.lineno}: {exc.msg})") from None


def _text(path: Path, data: dict[str, Any], key: str, at: str, *, required: bool = True) -> str:
    value = data.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        what = "nothing (missing)" if key not in data else _json_kind(value)
        raise PublishedError(f"{path}: {at}{key}: expected text, got {what}")
    return value


def _mapping(path: Path, value: Any, at: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise PublishedError(f"{path}: {at}: expected a JSON object, got {_json_kind(value)}")
    return value


def _json_kind(value: Any) -> str:
    """What a JSON value is, in the words of the file's format (``a list``, ``3``)."""
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "a JSON object"
    if isinstance(value, list):
        return "a list"
    shown = json.dumps(value)
    return shown if len(shown) <= 40 else f"{shown[:37]}..."


def read_rules(path: Path) -> tuple[tuple[Rule, ...], str | None]:
    """The rules of ``rule_manager.json`` (by id number; deleted ones left out, as the
    authors' rule manager drops them) and its manual (None when there is none)."""
    top = _mapping(path, _load_json(path), "the file")
    rules = _mapping(path, top.get("all_rules"), "all_rules")
    out: list[Rule] = []
    for rule_id, value in rules.items():
        at = f"all_rules.{rule_id}"
        if not isinstance(rule_id, str) or not _RULE_ID.fullmatch(rule_id):
            raise PublishedError(f"{path}: {at}: expected an id like rule_0")
        entry = _mapping(path, value, at)
        content = _text(path, entry, "rule", at + ".").strip()
        if content == "delete":
            continue
        if not content:
            raise PublishedError(f"{path}: {at}.rule: empty")
        kind = _text(path, entry, "type", at + ".")
        try:
            rtype = RuleType.parse(kind)
        except ValueError as exc:
            raise PublishedError(f"{path}: {at}.type: {exc}") from None
        example = _text(path, entry, "example", at + ".", required=False)
        record = _text(path, entry, "validation_record", at + ".", required=False)
        logs = [r.strip() for r in record.split(" | ") if r.strip()]
        out.append(Rule(rule_id, rtype, content, example, logs))
    out.sort(key=lambda r: int(r.rule_id.split("_")[1]))
    manual = top.get("manual")
    if manual is not None and (not isinstance(manual, str) or not manual.strip()):
        raise PublishedError(f"{path}: manual: expected the manual's Markdown text")
    epoch = top.get("cur_epoch")
    if epoch is not None and (isinstance(epoch, bool) or not isinstance(epoch, int)):
        raise PublishedError(f"{path}: cur_epoch: expected a whole number, got {epoch!r}")
    return tuple(out), manual


def read_items(path: Path) -> tuple[LibraryItem, ...]:
    """The entries of ``skill_bank.json``, in the file's order."""
    top = _mapping(path, _load_json(path), "the file")
    out: list[LibraryItem] = []
    for task_type, value in top.items():
        at = str(task_type)
        entry = _mapping(path, value, at)
        success = entry.get("success")
        if isinstance(success, bool) or success not in (-1, 0, 1):
            raise PublishedError(
                f"{path}: {at}.success: expected 1 (direct success), 0 (success after "
                f"errors) or -1 (a failure record), got {success!r}"
            )
        text = _text(path, entry, "skill_code", at + ".")
        if not text.strip():
            raise PublishedError(f"{path}: {at}.skill_code: empty")
        out.append(
            LibraryItem(
                task_type=at,
                goal=_text(path, entry, "task_name", at + ".").strip(),
                opening=_text(path, entry, "init_obs", at + ".", required=False).strip(),
                text=text,
                success=int(success),
                failure_case=_text(path, entry, "failure_case", at + ".", required=False),
            )
        )
    return tuple(out)


def read_published(rules_file: Path, skills_file: Path | None = None) -> PublishedRun:
    """Both files of a run, checked (``skills_file`` defaults to ``skill_bank.json``
    beside the rules); a missing or malformed one raises :class:`PublishedError`."""
    rules_file = Path(rules_file)
    skills_file = (
        Path(skills_file) if skills_file is not None else rules_file.with_name(SKILLS_FILE)
    )
    rules, manual = read_rules(rules_file)
    items = read_items(skills_file)
    digests = {RULES_FILE: sha256(rules_file), SKILLS_FILE: sha256(skills_file)}
    return PublishedRun(rules, manual, items, digests, identify(digests), str(rules_file.parent))


def run_files(path: Path) -> tuple[Path, Path]:
    """``(rule_manager.json, skill_bank.json)`` of ``path``: a folder holding both, or
    either file (the other beside it)."""
    path = Path(path).expanduser()
    if path.is_dir():
        return path / RULES_FILE, path / SKILLS_FILE
    if path.name == SKILLS_FILE:
        return path.with_name(RULES_FILE), path
    return path, path.with_name(SKILLS_FILE)


# -- finding and fetching --------------------------------------------------------------


def data_home(env: str) -> Path:
    """Where :func:`fetch_published` keeps ``env``'s files (LoreKit's data folder)."""
    from lorekit.envs.alfworld.variants import user_data_dir

    return user_data_dir() / "automanual-published" / env


def shared_copy(env: str) -> Path:
    """A development checkout's copy: ``shared/data/published-runs`` beside the repository."""
    return (
        Path(__file__).resolve().parents[4]
        / "shared"
        / "data"
        / "published-runs"
        / "automanual"
        / env
    )


def locate(env: str) -> Path | None:
    """A folder holding ``env``'s published files with the recorded digests, if any."""
    spec = _spec(env)
    for folder in (data_home(env), shared_copy(env)):
        files = [folder / name for name in spec["files"]]
        if all(f.is_file() for f in files) and all(
            sha256(f) == spec["files"][f.name] for f in files
        ):
            return folder
    return None


def fetch_published(env: str, *, timeout_s: float = 60.0) -> Path:
    """Download ``env``'s published files into :func:`data_home`, each checked against
    its recorded sha256 before anything is kept; the folder. Nothing changes on failure."""
    spec = _spec(env)
    data = manifest()
    base = (os.environ.get(URL_ENV_VAR) or str(data["base_url"])).rstrip("/")
    dest = data_home(env)
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{env}-", dir=dest.parent))
    try:
        for name, digest in spec["files"].items():
            url = f"{base}/{spec['folder']}/{name}"
            target = staging / name
            try:
                with urllib.request.urlopen(url, timeout=timeout_s) as reply:
                    body = reply.read(_MAX_BYTES + 1)
            except (urllib.error.URLError, OSError, ValueError) as exc:
                raise PublishedError(f"cannot fetch {url}: {exc}") from None
            target.write_bytes(body)
            got = sha256(target)
            if got != digest:
                raise PublishedError(
                    f"{url}: sha256 {got} is not the recorded {digest}; nothing was kept"
                )
        if dest.exists():
            shutil.rmtree(dest)
        staging.rename(dest)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return dest
