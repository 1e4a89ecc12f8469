"""AutoManual's building stage as an agent: plan, then learn, one episode at a time.

Each episode the planner plays the task with the current rules and the most
similar skill (or reflection); its conclusion goes to the skill or reflection
library; the builder turns the trajectory into rule changes; and when the
rules outgrow ``max_rules`` the consolidator merges them. A task type is
retired after ``retire_after`` successes in a row (the paper: three).

Everything the build learns lives in one SQLite file (the run store's, by
default) and every row is tagged with the episode that wrote it. The harness
commits an episode whole; a build killed mid-episode leaves rows of an
episode the store never committed, and :meth:`AutoManualBuildAgent.restore`
drops exactly those before the build resumes, so the resumed build replays
that episode from the same state (with cached or scripted models: the same
answers, hence the same rule history). An episode that ends in an exception
(a model error, a timeout) rolls its own rows back at once.

The ``planner-lib`` variant is the paper's Planner+Lib. baseline: the same
planner and libraries, no builder and no rules. ``learn_rules=False`` is the
library-only pass of the paper's two-step MiniWoB++ build: the planner sees
the rules (inherited from an earlier build, :mod:`.inherit`) but neither the
builder nor the consolidator runs, so only the libraries change.

As in the authors' code, a skill from a direct success is never replaced
(``keep_direct``), the planner sees a similar skill together with its type's
reflection (``retrieval="together"``), and the shown skill's functions are
defined before its code runs (``predefine_skills``); each can be switched off.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from lorekit.agents.automanual.builder import Builder
from lorekit.agents.automanual.consolidator import Consolidator
from lorekit.agents.automanual.core import Outcome, PlannerEpisode
from lorekit.agents.automanual.libraries import Libraries
from lorekit.agents.automanual.planner import Planner, helper_examples
from lorekit.agents.automanual.profiles import EnvProfile, profile_for
from lorekit.agents.automanual.retrieval import make_retriever
from lorekit.agents.automanual.rules import RuleSystem
from lorekit.agents.automanual.store import open_db
from lorekit.agents.automanual.trajectory import render_trajectory
from lorekit.agents.base import Episode, Recorder, Trajectory, model_roles
from lorekit.envs.asyncenv import EnvLike
from lorekit.envs.base import Task
from lorekit.llm.roles import Roles

Variant = Literal["automanual", "planner-lib"]
VARIANTS: tuple[str, ...] = ("automanual", "planner-lib")
Retrieval = Literal["together", "one"]
RETRIEVALS: tuple[str, ...] = ("together", "one")
"""What the planner is shown from the libraries: a similar skill and the type's
reflection together (as published), or one item (the type's skill, else its
reflection, else a similar skill)."""
SEED_RECORD = "Given by the user: derived from the one human example."


@dataclass(frozen=True, slots=True)
class CommittedEpisode:
    """What :meth:`AutoManualBuildAgent.restore` needs of an episode the store holds."""

    key: str
    task_group: str
    status: str  # success, failure or error
    notes: dict[str, Any]


def episode_id(task: Task, seed: int | None) -> str:
    """The run store's key for this episode (``lorekit.eval.runner.plan_episodes``)."""
    return f"{task.id}/{seed}"


class AutoManualBuildAgent:
    """The building stage; one instance per build, played with concurrency 1."""

    name = "automanual-build"
    runs_model_code = True  # the planner's code: commands check the sandbox's OS layer first

    def __init__(
        self,
        *,
        db_path: str | None,
        build_id: str,
        env_name: str,
        variant: Variant = "automanual",
        max_rules: int = 12,
        retire_after: int = 3,
        max_replans: int | str | None = None,
        planner_role: str = "planner",
        builder_role: str = "builder",
        consolidator_role: str = "consolidator",
        retriever: str | None = None,
        learn_rules: bool = True,
        keep_direct: bool = True,
        retrieval: Retrieval = "together",
        predefine_skills: bool = True,
        examples: int | None = None,
    ) -> None:
        if retrieval not in RETRIEVALS:
            raise ValueError(f"retrieval must be one of {', '.join(RETRIEVALS)}, got {retrieval!r}")
        if variant not in VARIANTS:
            raise ValueError(f"variant must be one of {', '.join(VARIANTS)}, got {variant!r}")
        if max_rules < 1 or retire_after < 1:
            raise ValueError("max_rules and retire_after must be >= 1")
        self.variant = variant
        self.build_id = build_id
        self.retire_after = retire_after
        self.learn_rules = learn_rules
        self.profile: EnvProfile = profile_for(env_name)
        self.db = open_db(db_path)
        self.rules = RuleSystem(self.db, build_id, trajectory=self._trajectory_text)
        self.libraries = Libraries(
            self.db,
            build_id,
            retriever=make_retriever(retriever or self.profile.retriever),
            keep_direct=keep_direct,
            together=retrieval == "together",
        )
        self.planner = Planner(
            self.profile,
            role=planner_role,
            max_replans=max_replans,
            predefine_skills=predefine_skills,
            examples=examples,
        )
        api = self.profile.api_text
        self.builder = Builder(self.profile.title, api, role=builder_role, max_rules=max_rules)
        self.consolidator = Consolidator(
            self.profile.title, api, role=consolidator_role, max_rules=max_rules
        )
        roles = [planner_role]
        if self._builds_rules:
            roles += [builder_role, consolidator_role]
        self.model_roles = model_roles(*roles)
        self.episodes: dict[str, PlannerEpisode] = {}
        self.kept: list[str] = []
        self.streaks: dict[str, int] = {}
        self.retired: set[str] = set()

    @property
    def _builds_rules(self) -> bool:
        return self.variant == "automanual" and self.learn_rules

    # -- state --------------------------------------------------------------------------

    def seed_rules(self) -> int:
        """Write the profile's initial rules (from the human example) into an empty build."""
        if not self._builds_rules or self.rules.version > 0:
            return 0
        self.rules.begin(None, succeeded=None, actor="seed")
        for rule in self.profile.initial_rules:
            self.rules.write_rule(rule["rule"], rule["type"], rule.get("example", ""), SEED_RECORD)
        return len(self.profile.initial_rules)

    def restore(self, committed: Iterable[CommittedEpisode]) -> int:
        """Rebuild the state of the episodes the store committed, in order; drop the rest.

        Errored episodes count as never played (their rows were rolled back
        when they failed). Returns how many rows of uncommitted episodes were dropped.
        """
        self.episodes.clear()
        self.kept.clear()
        self.streaks.clear()
        self.retired.clear()
        for ep in committed:
            if ep.status == "error":
                continue
            self.kept.append(ep.key)
            data = ep.notes.get("automanual")
            if isinstance(data, dict) and "episode_id" in data:
                self.episodes[ep.key] = PlannerEpisode.from_dict(data)
            self._count(ep.task_group, ep.status == "success")
        dropped = self.rules.truncate_to(self.kept) + self.libraries.truncate_to(self.kept)
        self.seed_rules()
        return dropped

    def should_play(self, task: Task) -> bool:
        """False once the task's type is retired (``retire_after`` successes in a row)."""
        return task.group not in self.retired

    def _count(self, task_type: str, success: bool) -> None:
        self.streaks[task_type] = self.streaks.get(task_type, 0) + 1 if success else 0
        if self.streaks[task_type] >= self.retire_after:
            self.retired.add(task_type)

    def _skill_meta(self, played: PlannerEpisode) -> dict[str, Any]:
        """Where the skill's task began, when the profile shows it with the skill
        (ALFWorld's room, as the authors' skill bank keeps ``init_obs``)."""
        if not self.profile.skill_opening:
            return {}
        return {"opening": played.opening.split("\n")[0].strip()}

    def _trajectory_text(self, episode: str) -> str | None:
        found = self.episodes.get(episode)
        return None if found is None else render_trajectory(found)

    def close(self) -> None:
        self.db.close()

    # -- one episode --------------------------------------------------------------------

    async def run(
        self, env: EnvLike, task: Task, roles: Roles, recorder: Recorder, *, seed: int | None = None
    ) -> Trajectory:
        key = episode_id(task, seed)
        try:
            return await self._run(env, task, roles, recorder, seed, key)
        except BaseException:
            self.rules.truncate_to(self.kept)
            self.libraries.truncate_to(self.kept)
            self.episodes.pop(key, None)
            raise

    async def _run(
        self,
        env: EnvLike,
        task: Task,
        roles: Roles,
        recorder: Recorder,
        seed: int | None,
        key: str,
    ) -> Trajectory:
        ep = await Episode.start(env, task, recorder, seed=seed)
        notes = ep.trajectory.notes
        notes["build"] = build_notes = {
            "build_id": self.build_id,
            "variant": self.variant,
            "rules_version_before": self.rules.version,
        }
        if not self.learn_rules:
            build_notes["library_only"] = True
        retrieved = await self.libraries.retrieve_all_async(task.group, task.goal)
        played = await self.planner.play(
            ep,
            roles,
            rules_text=self.rules.render() if self.variant == "automanual" else "",
            rules_heading="Rules",
            retrieved=retrieved,
            episode_id=key,
            task_type=task.group,
            helper_sources=helper_examples(self.rules.rules()),
        )
        self.episodes[key] = played
        if played.outcome.succeeded and played.skill_code.strip():
            self.libraries.add_skill(
                task.group,
                task.goal,
                played.skill_code,
                key,
                direct=played.outcome is Outcome.DIRECT_SUCCESS,
                meta=self._skill_meta(played),
            )
        elif not played.outcome.succeeded:
            self.libraries.add_reflection(
                task.group, task.goal, played.reflection or played.conclusion, key
            )
        if self._builds_rules:
            report = await self.builder.build(roles, self.rules, played)
            build_notes["builder"] = report.to_dict()
            if self.consolidator.needed(self.rules):
                merged = await self.consolidator.consolidate(roles, self.rules, key)
                build_notes["consolidator"] = merged.to_dict()
        build_notes["rules_version_after"] = self.rules.version
        build_notes["rule_count"] = len(self.rules.rules())
        self.kept.append(key)
        self._count(task.group, ep.trajectory.success)
        build_notes["retired"] = sorted(self.retired)
        return ep.stop("done" if ep.done else "budget")
