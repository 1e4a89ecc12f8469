"""Run stores for the report tests, made by playing real TextCraft episodes with scripted models.

``textcraft_runs`` records two runs on the same tasks (ReAct and ADaPT, whose
executor can plan only one crafting level ahead), with a simulated long-tailed
latency, one task whose model calls fail, and answers that carry hostile HTML.
``team_run`` records episodes whose notes carry a team's timeline.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from lorekit.agents import AdaptAgent, OracleAgent, ReActAgent, Recorder, Trajectory
from lorekit.agents.adapt.testing.textcraft import textcraft_executor, textcraft_planner
from lorekit.envs import Task, TextEnv
from lorekit.envs.textcraft import TextCraftEnv
from lorekit.eval.runner import plan_episodes, run_eval
from lorekit.eval.store import RunStore
from lorekit.llm import Message, Roles, ScriptedLLM
from lorekit.llm.scripted import Latency

#: Text a model might answer, meant to break out of the page if it were not escaped.
HOSTILE = '</script><script>window.__pwned = 1</script><img src=x onerror="window.__pwned=2">'
#: The task whose executor calls raise (an error episode, model-call errors).
BROKEN_TASK = "birch_door"


def tasks(env: TextCraftEnv, per_group: int = 3) -> list[Task]:
    """A few tasks of each depth, so success differs by task group."""
    chosen: list[Task] = []
    every = env.tasks("all")
    for group in ("depth-1", "depth-2", "depth-3"):
        chosen += [t for t in every if t.group == group and t.id != BROKEN_TASK][:per_group]
    chosen += [t for t in every if t.id == BROKEN_TASK]
    return chosen


def _executor(env: TextCraftEnv) -> Callable[[tuple[Message, ...]], str]:
    inner = textcraft_executor(env.book, capability=1, noise=0.2)

    def answer(messages: tuple[Message, ...]) -> str:
        if BROKEN_TASK.replace("_", " ") in messages[1].content.split("Goal:")[-1]:
            raise RuntimeError("the scripted server is down for this task")
        text = inner(messages)
        # a thought with hostile markup; the action line after it still parses
        return text.replace("Thought: ", f"Thought: {HOSTILE} ", 1)

    return answer


def _roles(env: TextCraftEnv) -> Roles:
    latency = Latency.lognormal(0.002, 0.6)
    return Roles(
        {
            "executor": ScriptedLLM(fn=_executor(env), latency=latency, seed=1),
            "planner": ScriptedLLM(fn=textcraft_planner(env.book), latency=latency, seed=2),
        }
    )


async def textcraft_runs(path: Path) -> list[str]:
    """Two runs in the store at ``path``: ``react`` and ``adapt``; returns their ids."""
    env = TextCraftEnv()
    chosen = tasks(env)
    with RunStore(path) as store:
        for run_id, agent in (("react", ReActAgent()), ("adapt", AdaptAgent(d_max=3))):
            await run_eval(
                store,
                env_factory=TextCraftEnv,
                agent=agent,
                roles=_roles(env),
                episodes=plan_episodes(chosen),
                run_id=run_id,
                env_name="textcraft",
                config={
                    "run": {
                        "roles": {
                            "executor": {
                                "model": "scripted",
                                "price": {"prompt": 1.0, "completion": 2.0},
                            }
                        }
                    }
                },
                concurrency=4,
            )
    return ["react", "adapt"]


class TeamOracle:
    """Plays TextCraft's expert plan and leaves the notes a team of agents would:
    events ``{"time", "tick", "agent", "kind", ...}`` under ``notes["team"]["events"]``."""

    name = "team-oracle"

    async def run(
        self, env: TextEnv, task: Task, roles: Roles, recorder: Recorder, *, seed: int | None = None
    ) -> Trajectory:
        traj = await OracleAgent().run(env, task, roles, recorder, seed=seed)
        events: list[dict[str, Any]] = [
            {"time": 0.0, "tick": 0, "agent": "leader", "kind": "plan", "text": f"split {task.id}"}
        ]
        for i, action in enumerate(traj.actions):
            worker = f"worker-{i % 2}"
            events.append(
                {"time": 1.0 + i, "tick": i + 1, "agent": worker, "kind": "act", "action": action}
            )
        events.append(
            {
                "time": 1.5 + len(traj.actions),
                "tick": len(traj.actions) + 1,
                "agent": "leader",
                "kind": "done",
                "text": HOSTILE,
            }
        )
        traj.notes["team"] = {"events": events}
        return traj


async def team_run(path: Path, n: int = 2) -> str:
    env = TextCraftEnv()
    with RunStore(path) as store:
        await run_eval(
            store,
            env_factory=TextCraftEnv,
            agent=TeamOracle(),
            roles=Roles(ScriptedLLM(default="unused")),
            episodes=plan_episodes([t for t in env.tasks("dev") if t.group == "depth-2"][:n]),
            run_id="team",
            env_name="textcraft",
        )
    return "team"


async def spring_run(path: Path) -> str:
    """One short SPRING episode on Crafter (its notes hold a graph pass per step)."""
    from lorekit.agents import make_agent
    from lorekit.agents.spring.testing import spring_model
    from lorekit.envs import make

    env = make("crafter")
    with RunStore(path) as store:
        await run_eval(
            store,
            env_factory=lambda: make("crafter"),
            agent=make_agent("spring", context="paper", max_steps=10),
            roles=Roles(ScriptedLLM(fn=spring_model(seek="tree"))),
            episodes=plan_episodes(env.tasks("test")[:1]),
            run_id="spring",
            env_name="crafter",
        )
    return "spring"


def automanual_notes() -> dict[str, Any]:
    """Notes in the shapes AutoManual's build agent leaves (its own dataclasses, as data)."""
    from lorekit.agents.automanual.builder import BuildReport
    from lorekit.agents.automanual.core import Outcome, PlannerEpisode, PlannerTurn
    from lorekit.agents.automanual.dialogue import CallResult, DialogueLog

    played = PlannerEpisode(
        "ep0",
        "put",
        "put a mug in the cabinet",
        "You are in a kitchen.",
        turns=[
            PlannerTurn(
                "a1",
                analysis="The mug is on the counter.",
                code="go_to('counter 1')",
                feedback="You arrive at counter 1.",
                actions=1,
            ),
            PlannerTurn(
                "a2",
                analysis="Take it.",
                related_rules=["rule_1"],
                code="take('mug 1', 'counter 1')\nput('mug 1', 'cabinet 1')",
                feedback="AssertionFailed: the cabinet is closed",
                error="AssertionFailed",
                actions=2,
            ),
        ],
        outcome=Outcome.FAILURE,
        conclusion=f"Open receptacles first. {HOSTILE}",
    )
    dialogue = DialogueLog(
        answers=1,
        calls=[
            CallResult(
                "write_rule(rule='Open a closed cabinet before putting into it')",
                result="rule_2 written",
            ),
            CallResult("delete_rule(rule_id='rule_9')", error="no rule rule_9"),
        ],
    )
    builder = BuildReport(
        diagnosis="imperfect rules",
        case="failure",
        dialogue=dialogue,
        version_before=1,
        version_after=2,
    )
    return {
        "automanual": played.to_dict(),
        "build": {
            "build_id": "b1",
            "variant": "automanual",
            "rules_version_before": 1,
            "builder": builder.to_dict(),
            "rules_version_after": 2,
            "rule_count": 2,
        },
    }


def automanual_run(path: Path) -> str:
    """A run with one episode whose notes are an AutoManual build episode's."""
    with RunStore(path) as store:
        rid = store.create_run("automanual", env="alfworld", agent="automanual-build", config={})
        with store.episode(rid, "put/0", index=0, task_id="put-0", task_group="put") as ep:
            ep.add_step("You arrive at counter 1.", "go to counter 1")
            ep.finish(success=False, reward=0.0, info={"notes": automanual_notes()})
    return rid
