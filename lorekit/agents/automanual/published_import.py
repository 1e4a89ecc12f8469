"""A published AutoManual run as a LoreKit build, so the testing stage reads it as its own.

:func:`import_tables` writes a :class:`~.published.PublishedRun` into the
AutoManual tables under one build id: the rules with their own ids, texts,
examples and validation records (actor ``published``), each skill (a direct
one, ``success: 1``, marked so) and failure record with the task it came from
and where that task began, and the authors' manual as the build's manual,
verbatim. Then ``--agent-opt manual=BUILD`` tests with it like with any build:
the manual in the prompt, the functions of the rules' examples and of the shown
skill defined first, the skill of the task's type retrieved.

:func:`import_build` does this into the run store as a finished run of its own
(agent ``automanual-build:published``, no episodes) whose config records the
files' digests and what they are; importing the same files again under the same
id changes nothing, other files are refused. :func:`in_memory` does it into a
database of its own, for ``--agent-opt manual=rule_manager.json``.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lorekit.agents.automanual.libraries import Libraries
from lorekit.agents.automanual.manuals import Manual, latest_manual, save_manual
from lorekit.agents.automanual.published import PublishedRun, published_env_options
from lorekit.agents.automanual.rules import RuleSystem
from lorekit.agents.automanual.store import open_db

AGENT = "automanual-build:published"
"""The run store's agent name of an imported build (an AutoManual build, variant published)."""


@dataclass(frozen=True, slots=True)
class Imported:
    """What an import left in the store: the build id, what it is, and its counts."""

    build_id: str
    source: str
    rules: int
    skills: int
    reflections: int
    manual: bool
    already: bool = False


def import_tables(db: sqlite3.Connection, build_id: str, run: PublishedRun) -> Imported:
    """Write ``run`` as build ``build_id``'s rules, libraries and manual (the rules in
    one transaction; a caller that must not keep half an import drops the build)."""
    system = RuleSystem(db, build_id)
    system.begin(None, succeeded=None, actor="published")
    system.import_rules(run.rules)
    libraries = Libraries(db, build_id, keep_direct=True)
    for item in run.items:
        meta: dict[str, Any] = {"published": {"success": item.success}}
        if item.opening:
            meta["opening"] = item.opening
        if item.is_skill:
            libraries.add_skill(
                item.task_type, item.goal, item.text, None, direct=item.success == 1, meta=meta
            )
        else:
            if item.failure_case:
                meta["failure_case"] = item.failure_case
            libraries.add_reflection(item.task_type, item.goal, item.text, None, meta=meta)
    if run.manual:
        manual = Manual(
            markdown=run.manual,
            groups=[],
            rules_version=system.version,
            title="Manual",
            rules=list(run.rules),
            notes=[f"imported verbatim from {run.where}"],
            source=run.describe(),
        )
        save_manual(db, build_id, manual)
    return Imported(
        build_id,
        run.describe(),
        len(run.rules),
        len(run.skills),
        len(run.reflections),
        bool(run.manual),
    )


def in_memory(run: PublishedRun, build_id: str = "published") -> sqlite3.Connection:
    """A database of its own holding ``run`` as build ``build_id`` (nothing on disk)."""
    db = open_db(None)
    import_tables(db, build_id, run)
    return db


def run_config(run: PublishedRun, env: str) -> dict[str, Any]:
    """The run store's record of an imported build: what it is, its files' digests,
    and the env options a test with it gets unless the user sets them."""
    options = published_env_options(run.env) if run.env else {}
    return {
        "automanual": {
            "variant": "published",
            "published": {
                "source": run.describe(),
                "env": run.env,
                "from": run.where,
                "sha256": dict(run.digests),
            },
        },
        "env_kwargs": {},
        "env_defaults": options,
        "tested_on": env,
    }


def import_build(store_path: str | Path, build_id: str, run: PublishedRun, *, env: str) -> Imported:
    """``run`` as the finished build ``build_id`` in the run store at ``store_path``.

    The same files imported again under the same id is a no-op (``already``);
    an id that holds anything else raises ``ValueError`` saying what it holds.
    """
    from lorekit.eval.store import RunStore

    config = run_config(run, env)
    with RunStore(store_path) as store:
        info = store.get_run(build_id)
        if info is not None:
            held = (info.config.get("automanual") or {}).get("published") or {}
            if info.agent == AGENT and info.env == env and held.get("sha256") == run.digests:
                return _existing(store_path, build_id, run)
            raise ValueError(
                f"run {build_id!r} in {store_path} is already a {info.agent!r} run on "
                f"{info.env} with other contents; choose another --run-id"
            )
        store.create_run(build_id, env=env, agent=AGENT, config=config, meta={"episodes": 0})
        db = open_db(store_path)
        try:
            done = import_tables(db, build_id, run)
        except BaseException:
            db.close()
            store.delete_run(build_id)  # its rows in the AutoManual tables go with it
            raise
        db.close()
        store.set_run_status(
            build_id,
            "finished",
            {"imported": done.source, "rules": done.rules, "skills": done.skills},
        )
    return done


def _existing(store_path: str | Path, build_id: str, run: PublishedRun) -> Imported:
    db = open_db(store_path)
    try:
        manual = latest_manual(db, build_id) is not None
    finally:
        db.close()
    return Imported(
        build_id,
        run.describe(),
        len(run.rules),
        len(run.skills),
        len(run.reflections),
        manual,
        already=True,
    )
