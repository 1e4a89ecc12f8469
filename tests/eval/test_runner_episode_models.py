"""Models built per episode by the harness (``run_eval(..., episode_roles=...)``).

Each episode gets models of its own, where it plays (here or on a remote
host), metered into its own call rows and closed when it ends; a run gives
its models one way, the run's or the episode's, never both.
"""

from __future__ import annotations

import functools
import pickle
from pathlib import Path
from typing import Any

import pytest

from lorekit.agents import Episode, Recorder, Trajectory
from lorekit.envs import EnvSpec, Task
from lorekit.envs.asyncenv import EnvLike
from lorekit.eval.backend import EpisodeSpec
from lorekit.eval.remote import EpisodeHost, HostRecipe, replay
from lorekit.eval.runner import plan_episodes, run_eval
from lorekit.eval.store import RunStore
from lorekit.llm import Roles, ScriptedLLM
from lorekit.llm.accounting import UsageLedger

TEXTCRAFT = EnvSpec("textcraft", {})


class AskTwiceThenStop:
    """Asks its ``planner`` twice, acts once, stops: what the model said is its notes."""

    name = "ask-twice"
    model_roles = ("planner",)

    async def run(
        self, env: EnvLike, task: Task, roles: Roles, recorder: Recorder, *, seed: int | None = None
    ) -> Trajectory:
        ep = await Episode.start(env, task, recorder, seed=seed)
        said = [(await roles["planner"].complete(f"{task.id}: go")).text for _ in range(2)]
        ep.trajectory.notes["said"] = said
        await ep.act("inventory")
        return ep.stop("budget")


class Closable(ScriptedLLM):
    """A scripted model that records being closed, as a served model's client is."""

    closed: list[str] = []  # noqa: RUF012  (one log for every instance of a test)

    async def aclose(self) -> None:
        Closable.closed.append(self.model)


class Factory:
    """An episode-model factory that logs what it was asked for."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, int]] = []

    def __call__(self, task: Task, seed: int) -> Roles:
        self.asked.append((task.id, seed))
        return Roles({"planner": Closable(["first", "second"], model=f"m-{task.id}-{seed}")})


async def test_each_episode_plays_with_models_built_for_it(tmp_path: Path) -> None:
    Closable.closed.clear()
    tasks = TEXTCRAFT.make().tasks("test")[:4]
    specs = plan_episodes(tasks, seed=7)
    factory = Factory()
    with RunStore(tmp_path / "r.sqlite3") as db:
        result = await run_eval(
            db, env_factory=TEXTCRAFT, agent=AskTwiceThenStop(), episode_roles=factory,
            episodes=specs, run_id="fresh", concurrency=2,
        )  # fmt: skip
        episodes = {e.task_id: e for e in db.episodes("fresh")}
        calls = {t.id: db.llm_calls("fresh", episodes[t.id].episode_key) for t in tasks}
    assert result.played == 4 and result.errors == 0
    assert sorted(factory.asked) == sorted((s.task.id, s.seed) for s in specs)
    for spec in specs:  # a list script starts over: nothing of another episode is in it
        assert episodes[spec.task.id].info["notes"]["said"] == ["first", "second"]
        rows = calls[spec.task.id]
        assert [(c["role"], c["answer"]) for c in rows] == [
            ("planner", "first"),
            ("planner", "second"),
        ]
        assert {c["model"] for c in rows} == {f"m-{spec.task.id}-{spec.seed}"}
    assert sorted(Closable.closed) == sorted(f"m-{s.task.id}-{s.seed}" for s in specs)


async def test_models_are_closed_when_an_episode_ends_in_an_error(tmp_path: Path) -> None:
    Closable.closed.clear()

    class Breaks(AskTwiceThenStop):
        async def run(self, env: Any, task: Task, roles: Roles, recorder: Any, **kw: Any) -> Any:
            await roles["planner"].complete("one")
            raise RuntimeError("the agent broke")

    with RunStore(tmp_path / "r.sqlite3") as db:
        result = await run_eval(
            db, env_factory=TEXTCRAFT, agent=Breaks(), episode_roles=Factory(),
            episodes=plan_episodes(TEXTCRAFT.make().tasks("test")[:1]), run_id="err",
        )  # fmt: skip
        (episode,) = db.episodes("err")
        assert len(db.llm_calls("err", episode.episode_key)) == 1  # the call before it broke
    assert result.errors == 1 and "the agent broke" in (episode.error or "")
    assert len(Closable.closed) == 1


@pytest.mark.parametrize("both", [True, False])
async def test_a_run_takes_its_models_one_way(tmp_path: Path, both: bool) -> None:
    roles = Roles(ScriptedLLM(default="x")) if both else None
    factory = Factory() if both else None
    with RunStore(tmp_path / "r.sqlite3") as db:
        with pytest.raises(ValueError, match=r"roles.*episode_roles"):
            await run_eval(
                db, env_factory=TEXTCRAFT, agent=AskTwiceThenStop(), roles=roles,
                episode_roles=factory, episodes=plan_episodes(TEXTCRAFT.make().tasks()[:1]),
                run_id="r",
            )  # fmt: skip
        assert db.get_run("r") is None  # refused before anything was stored


def _make_factory(made: list[int]) -> Factory:
    made.append(1)
    return Factory()


async def test_a_remote_host_builds_each_episodes_models_where_it_plays(tmp_path: Path) -> None:
    """The recipe names how to make the factory; the host makes it once and asks it
    per episode, and the calls come back with the episode into the driver's store."""
    made: list[int] = []
    recipe = HostRecipe(
        TEXTCRAFT, AskTwiceThenStop, None, make_episode_roles=functools.partial(_make_factory, made)
    )
    host = EpisodeHost(recipe, "test-host")
    specs = plan_episodes(TEXTCRAFT.make().tasks("test")[:3])

    class Backend:
        name, discarded, stuck_threads = "host", 0, 0

        async def play(
            self, spec: EpisodeSpec, writer: Any, ledger: UsageLedger, timeout_s: float | None
        ) -> Trajectory:
            remote = pickle.loads(pickle.dumps(await host.play(spec, timeout_s)))
            return replay(remote, writer, ledger)

        def close(self) -> None:
            host.close()

    with RunStore(tmp_path / "r.sqlite3") as db:
        result = await run_eval(
            db, env_factory=TEXTCRAFT, agent=AskTwiceThenStop(), episodes=specs,
            run_id="remote", backend=Backend(),
        )  # fmt: skip
        answers = [
            [c["answer"] for c in db.llm_calls("remote", e.episode_key)]
            for e in db.episodes("remote")
        ]
    host.close()
    assert result.played == 3 and made == [1]
    assert answers == [["first", "second"]] * 3


def test_a_host_needs_its_models_one_way() -> None:
    with pytest.raises(ValueError, match="neither"):
        EpisodeHost(HostRecipe(TEXTCRAFT, AskTwiceThenStop, None), "h")
