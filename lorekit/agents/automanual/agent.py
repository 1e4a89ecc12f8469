"""AutoManual's testing stage: the planner with a finished manual (section 3.1).

``lorekit run ENV --agent automanual --agent-opt manual=BUILD`` plays each
task with the planner, the build's Markdown manual in place of the live rules
(rules take priority over skills), and, unless ``skills=false``, the build's
skill or reflection for the task type. Nothing is learned at test time: the
libraries are opened read-only, so test episodes can run concurrently and a
test run never changes the build it reads.

``retriever`` picks the most similar skill when the task's type has none:
``bm25`` (default) or ``embedding:MODEL`` (an OpenAI-compatible embeddings
endpoint the user configures; nothing is downloaded). ``retrieval``:
``together`` (default, as published: that skill and the type's reflection
together) or ``one``; ``predefine_skills`` (default true, as published): the
shown skill's functions are defined before the planner's code runs;
``examples`` (default all): how many of the profile's human examples the
planner is shown, from the first (``examples=1``: MiniWoB++'s search-engine alone).

``manual`` is a build id in the run store (``store``: the run store file;
the CLI passes its own) or a path to a Markdown file (e.g. one written by
``lorekit manual export``). A Planner+Lib. build (no rules) has no manual;
its skills alone are used.
"""

from __future__ import annotations

from pathlib import Path

from lorekit.agents.automanual.build_agent import RETRIEVALS, episode_id
from lorekit.agents.automanual.core import STAGE_ROLES
from lorekit.agents.automanual.libraries import Libraries
from lorekit.agents.automanual.manuals import latest_manual
from lorekit.agents.automanual.planner import Planner, helper_examples
from lorekit.agents.automanual.profiles import profile_for
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
        max_replans: int | None = None,
        role: str = "planner",
        retriever: str = "bm25",
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
        self.max_replans = max_replans
        self.libraries: Libraries | None = None
        self.helpers: list[str] = []
        self.retriever = make_retriever(retriever)
        self.manual_text, self.source = self._load(manual.strip(), store, skills)
        self._planners: dict[str, Planner] = {}

    def _load(self, manual: str, store: str | None, skills: bool) -> tuple[str, str]:
        path = Path(manual)
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
        found = latest_manual(db, manual)
        if skills:
            self.libraries = Libraries(
                db, manual, retriever=self.retriever, readonly=True, together=self.together
            )
        if found is not None:
            self.helpers = helper_examples(RuleSystem(db, manual).rules_at(found.rules_version))
            return (
                found.markdown,
                f"build {manual} (manual version of rules v{found.rules_version})",
            )
        if not RuleSystem(db, manual).rules() and self.libraries and self.libraries.snapshot():
            return NO_MANUAL, f"build {manual} (skills only)"
        raise ManualNotFound(
            f"build {manual!r} in {store} has no manual; run `lorekit automanual formulate "
            f"{manual}` first (or check the build id with `lorekit runs list`)"
        )

    def env_defaults(self, env_name: str) -> dict[str, object]:
        """The env options the planner's prompts are written for (``lorekit run`` adds
        those the user did not set): ALFWorld's ``object_ids`` form, as in the build.

        Raises ``ProfileError`` (a ``ValueError``) for an env without a planner
        profile, so a run on it fails before it starts.
        """
        return dict(profile_for(env_name).env_options)

    def _planner(self, env_name: str) -> Planner:
        if env_name not in self._planners:
            profile = profile_for(env_name)
            replans = profile.test_max_replans if self.max_replans is None else self.max_replans
            self._planners[env_name] = Planner(
                profile,
                role=self.role,
                max_replans=replans,
                predefine_skills=self.predefine_skills,
                examples=self.examples,
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
