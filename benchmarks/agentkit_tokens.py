"""What a run of the AgentKit agents costs in prompt tokens, per step and per node group.

Plays ``agentkit-crafter`` for ``--steps`` graph passes on Crafter (the score
task of seed 0) and, when ``make("webshop")`` is available, ``agentkit-webshop``
on ``--episodes`` WebShop tasks, both with the scripted models of
:mod:`lorekit.agents.agentkit.testing`. It prints the prompt tokens per pass
(estimated at four characters a token, as for any model that reports none),
split by role and by how many passes ran the planner branch and the long-term
reflection.

These are prompt-side figures: the scripted answers are a line or two, while
a real model's answers are longer and are shown again in the prompts of the
nodes that depend on them, so a real run's prompts are larger and its
completion tokens come on top.

    python benchmarks/agentkit_tokens.py [--steps 20] [--episodes 20] [--replan-every 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
from collections import defaultdict
from typing import Any

from lorekit.agents.agentkit import AgentKitCrafterAgent, AgentKitWebShopAgent
from lorekit.agents.agentkit.testing import crafter_model, webshop_model
from lorekit.agents.base import NullRecorder
from lorekit.envs import make
from lorekit.envs.registry import list_envs
from lorekit.llm import Roles, ScriptedLLM


def per_pass(log: dict[str, Any], roles: dict[str, str]) -> tuple[list[int], dict[str, float]]:
    """Prompt tokens of each pass, and the mean per pass of each role."""
    totals = [s["prompt_tokens"] for s in log["steps"] if "prompt_tokens" in s]
    by_role: dict[str, int] = defaultdict(int)
    for step in log["steps"]:
        for node in step.get("nodes", []):
            if node["status"] == "ok":
                by_role[roles[node["key"]]] += node["tokens"]
    n = max(len(totals), 1)
    return totals, {r: t / n for r, t in by_role.items()}


async def crafter(steps: int, replan_every: int = 5) -> None:
    agent = AgentKitCrafterAgent(max_steps=steps)
    env = make("crafter", **agent.env_defaults("crafter"))
    task = next(t for t in env.tasks() if t.data.get("kind") == "score")
    llm = ScriptedLLM(fn=crafter_model(replan_every=replan_every))
    traj = await agent.run(env, task, Roles(llm), NullRecorder(), seed=0)
    log = traj.notes["agentkit"]
    roles = {n.key: n.role for n in agent.spec.nodes}
    totals, by_role = per_pass(log, roles)
    planned = sum(
        any(n["key"] == "subgoals" and n["status"] == "ok" for n in s["nodes"])
        for s in log["steps"]
    )
    print(
        f"agentkit-crafter: {len(totals)} passes, {len(llm.calls)} model calls "
        f"({len(llm.calls) / max(len(totals), 1):.1f} a pass)"
    )
    print(
        f"  prompt tokens per pass: mean {statistics.mean(totals):,.0f}, "
        f"first {totals[0]:,}, last {totals[-1]:,} (history grows to its 25 steps)"
    )
    print(
        "  per role and pass (prompt+completion): "
        + ", ".join(f"{r} {t:,.0f}" for r, t in sorted(by_role.items()))
    )
    print(f"  passes that ran the planner branch: {planned}; long-term reflections: {log['feeds']}")


async def webshop(episodes: int) -> None:
    if episodes < 1:
        return
    if "webshop" not in dict(list_envs()):
        print("agentkit-webshop: make('webshop') is not available here; skipped")
        return
    agent = AgentKitWebShopAgent()
    env = make("webshop")
    llm = ScriptedLLM(fn=webshop_model())
    roles = {n.key: n.role for n in agent.spec.nodes}
    steps: list[int] = []
    for task in env.tasks()[:episodes]:
        traj = await agent.run(env, task, Roles(llm), NullRecorder())
        steps += per_pass(traj.notes["agentkit"], roles)[0]
    print(f"agentkit-webshop: {episodes} episodes, {len(steps)} passes, {len(llm.calls)} calls")
    print(
        f"  prompt tokens per pass: mean {statistics.mean(steps):,.0f}; "
        f"per episode {sum(steps) / episodes:,.0f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--episodes", type=int, default=20)
    parser.add_argument(
        "--replan-every",
        type=int,
        default=5,
        help="the scripted gate asks for a new plan every N passes (1: every pass)",
    )
    args = parser.parse_args()
    asyncio.run(crafter(args.steps, args.replan_every))
    asyncio.run(webshop(args.episodes))


if __name__ == "__main__":
    main()
