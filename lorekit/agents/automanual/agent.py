"""AutoManual's testing stage: the planner with a finished manual (section 3.1).

``lorekit run ENV --agent automanual --agent-opt manual=BUILD`` plays each
task with the planner, the build's Markdown manual in place of the live rules
(rules take priority over skills), and, unless ``skills=false``, the build's
skill or reflection for the task type. Nothing is learned at test time: the
libraries are opened read-only, so test episodes can run concurrently and a
test run never changes the build it reads.

``max_replans`` (default the env profile's, as the authors' code: 5 answers on
ALFWorld, 6 on MiniWoB++) may be ``paper``, the paper's "replan at most N times".

``retriever`` picks the most similar skill when the task's type has none:
``bm25``, ``type`` (none: only the type's own skill, the authors' MiniWoB++
rule) or ``embedding:MODEL`` (an OpenAI-compatible embeddings endpoint the user
configures; nothing is downloaded); by default the env profile's (ALFWorld
``bm25``, MiniWoB++ ``type``). ``retrieval``:
``together`` (default, as published: that skill and the type's reflection
together) or ``one``; ``predefine_skills`` (default true, as published): the
shown skill's functions are defined before the planner's code runs;
``examples`` (default all): how many of the profile's human examples the
planner is shown, from the first (``examples=1``: MiniWoB++'s search-engine alone).

``manual`` is a build id in the run store (``store``: the run store file;
the CLI passes its own; ``lorekit automanual import-published`` makes one of
the authors' published run), a path to a Markdown file (e.g. one written by
``lorekit manual export``), or a run in the authors' own format: its
``rule_manager.json`` (with ``skill_bank.json`` beside it) or the folder of
both, read and checked by :mod:`.published` (a malformed file is refused,
naming the file and the field, never taken as text). A Planner+Lib. build
(no rules) has no manual; its skills alone are used.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from lorekit.agents.automanual.build_agent import RETRIEVALS, episode_id
from lorekit.agents.automanual.core import STAGE_ROLES
from lorekit.agents.automanual.libraries import Libraries
from lorekit.agents.automanual.manuals import latest_manual
from lorekit.agents.automanual.planner import Planner, helper_examples
from lorekit.agents.automanual.profiles import parse_replans, profile_for
from lorekit.agents.automanual.retrieval import make_retriever
from lorekit.agents.automanual.rules import RuleSystem
from lorekit.agents.automanual.store import open_db
from lorekit.agents.base import Episode, Recorder, Trajectory, model_roles
from lorekit.envs.asyncenv import EnvLike
from lorekit.envs.base import Task
from lorekit.llm.roles import Roles

NO_MANUAL = "(no manual: this build learned skills and reflections only)"


class ManualNotFound(LookupError):
    """The ``manual`` option names neither a Markdown file nor a formulated build."""


class AutoManualAgent:
    """The test-time planner: manual + (optionally) the build's skill library."""

    name = "automanual"
    runs_model_code = True  # the planner's code: commands check the sandbox's OS layer first

    def __init__(
        self,
        manual: str | None = None,
        *,
        store: str | None = None,
        skills: bool = True,
        max_replans: int | str | None = None,
        role: str = "planner",
        retriever: str | None = None,
        retrieval: str = "together",
        predefine_skills: bool = True,
        examples: int | None = None,
    ) -> None:
        if retrieval not in RETRIEVALS:
            raise ValueError(f"retrieval must be one of {', '.join(RETRIEVALS)}, got {retrieval!r}")
        self.together = retrieval == "together"
        self.predefine_skills = predefine_skills
        self.examples = examples
        if not isinstance(manual, str) or not manual.strip():
            raise ValueError(
                "needs the manual to test with: --agent-opt manual=BUILD (a build id from "
                "`lorekit automanual build`) or manual=FILE.md"
            )
        self.role = role
        # The build's roles are accepted too (unused here), so the build's config serves.
        self.model_roles = model_roles(role, *STAGE_ROLES)
        self.max_replans = parse_replans(max_replans)
        self.libraries: Libraries | None = None
        self.helpers: list[str] = []
        self.build_env_options: dict[str, Any] = {}
        """Env options the manual's build asks for (a published run's), under the user's."""
        self._db: sqlite3.Connection | None = None
        self.retriever_spec = retriever  # None: the env profile's, once the env is known
        self.retriever = make_retriever(retriever or "bm25")
        self.manual_text, self.source = self._load(manual.strip(), store, skills)
        self._planners: dict[str, Planner] = {}

    def _load(self, manual: str, store: str | None, skills: bool) -> tuple[str, str]:
        path = Path(manual)
        if path.is_dir() or path.suffix.lower() == ".json" or _holds_json(path):
            return self._load_published(path, skills)
        if path.suffix.lower() in {".md", ".markdown"} or path.is_file():
            if not path.is_file():
                raise ManualNotFound(f"manual file {manual!r} does not exist")
            return path.read_text(encoding="utf-8"), str(path)
        if store is None or not Path(store).is_file():
            raise ManualNotFound(
                f"manual {manual!r} is not a file, and there is no run store to look it up in "
                f"({store or 'none given'}); pass --store or a Markdown file"
            )
        db = open_db(store)
        self._db = db
        self.build_env_options = _recorded_env_defaults(store, manual)
        return self._from_build(db, manual, skills, f"build {manual}")

    def _load_published(self, path: Path, skills: bool) -> tuple[str, str]:
        """A run in the authors' format, read into a database of its own."""
        from lorekit.agents.automanual.published import (
            published_env_options,
            read_published,
            run_files,
        )
        from lorekit.agents.automanual.published_import import in_memory

        run = read_published(*run_files(path))
        self._db = in_memory(run, "published")
        if run.env:
            self.build_env_options = published_env_options(run.env)
        if not run.manual:  # as the authors' testing stage: the rules themselves
            if skills:
                self._open_libraries(self._db, "published")
            self.helpers = helper_examples(run.rules)
            rules = RuleSystem(self._db, "published").render()
            return rules, f"{run.describe()} (its rules: it has no manual)"
        return self._from_build(self._db, "published", skills, run.describe())

    def _open_libraries(self, db: sqlite3.Connection, build: str) -> None:
        self.libraries = Libraries(
            db, build, retriever=self.retriever, readonly=True, together=self.together
        )

    def _from_build(
        self, db: sqlite3.Connection, build: str, skills: bool, what: str
    ) -> tuple[str, str]:
        """The manual, skills and rule helpers of build ``build`` in ``db``."""
        found = latest_manual(db, build)
        if skills:
            self._open_libraries(db, build)
        if found is not None:
            self.helpers = helper_examples(RuleSystem(db, build).rules_at(found.rules_version))
            if found.source:
                return found.markdown, f"{what}: {found.source}"
            return found.markdown, f"{what} (manual version of rules v{found.rules_version})"
        if not RuleSystem(db, build).rules() and self.libraries and self.libraries.snapshot():
            return NO_MANUAL, f"{what} (skills only)"
        raise ManualNotFound(
            f"{what} has no manual; run `lorekit automanual formulate {build}` first "
            "(or check the build id with `lorekit runs list`)"
        )

    def env_defaults(self, env_name: str) -> dict[str, object]:
        """The env options the planner's prompts are written for (``lorekit run`` adds
        those the user did not set): ALFWorld's ``object_ids`` form, as in the build.

        A published run's build adds what its skills were written against
        (``published.yaml``); the user's own options win over both.
        Raises ``ProfileError`` (a ``ValueError``) for an env without a planner
        profile, so a run on it fails before it starts.
        """
        return {**profile_for(env_name).env_options, **self.build_env_options}

    def _planner(self, env_name: str) -> Planner:
        if env_name not in self._planners:
            if self.libraries is not None and self.retriever_spec is None:
                self.libraries.retriever = make_retriever(profile_for(env_name).retriever)
            self._planners[env_name] = Planner(
                profile_for(env_name),
                role=self.role,
                max_replans=self.max_replans,
                predefine_skills=self.predefine_skills,
                examples=self.examples,
                build=False,
            )
        return self._planners[env_name]

    async def run(
        self, env: EnvLike, task: Task, roles: Roles, recorder: Recorder, *, seed: int | None = None
    ) -> Trajectory:
        ep = await Episode.start(env, task, recorder, seed=seed)
        ep.trajectory.notes["manual"] = self.source
        retrieved = (
            await self.libraries.retrieve_all_async(task.group, task.goal)
            if self.libraries is not None
            else None
        )
        await self._planner(ep.env.name).play(
            ep,
            roles,
            rules_text=self.manual_text,
            rules_heading="Manual",
            retrieved=retrieved,
            episode_id=episode_id(task, seed),
            task_type=task.group,
            helper_sources=self.helpers,
            conclude=False,  # the testing stage stores no skill or reflection
        )
        return ep.stop("done" if ep.done else "budget")


def _holds_json(path: Path) -> bool:
    """Whether ``path`` is a file whose text is a JSON object (a run, not a manual)."""
    if not path.is_file():
        return False
    with path.open("rb") as f:
        return f.read(64).lstrip().startswith(b"{")


def _recorded_env_defaults(store: str, build: str) -> dict[str, Any]:
    """The env options build ``build`` recorded for its tests (an imported published run)."""
    from lorekit.eval.store import RunStore

    with RunStore(store) as runs:
        info = runs.get_run(build)
    found = info.config.get("env_defaults") if info is not None else None
    return dict(found) if isinstance(found, dict) else {}
