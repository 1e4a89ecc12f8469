"""Scripted models that answer the hourglass prompts sensibly, for studies.

No LLM runs here. :func:`simulated_roles` gives ``leader`` and ``worker``
models whose answers are computed from the prompt the way a careful model
would: read the goal, the team progress, the inventory, the reports and the
skill results; plan the tool chain an item needs (table, wood pickaxe, stone
pickaxe); split a collection or the eight walls of a shelter between the
agent and the subordinates that are free; reassign after a failure report.
Latencies are seeded log-normal draws (leaders think longer than workers)
slept on the world's clock, so a study on a virtual clock is deterministic.

The models are deliberately simple and identical across organizations and
modes, so a study compares team shapes and schedules, not prompt luck.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from lorekit.llm.base import Message
from lorekit.llm.roles import Roles
from lorekit.llm.scripted import Latency, ScriptedLLM

Sleep = Callable[[float], Awaitable[None]]

CHUNK = 10  # the most a leader hands out in one assignment, so it can rebalance later
_CALL = re.compile(r"\b(collect|place)\(([^)]*)\)")


@dataclass
class _Memory:
    """What one simulated agent remembers between its calls (a model's context)."""

    busy: dict[str, str] = field(default_factory=dict)  # subordinate -> task given
    walls: set[tuple[int, int]] = field(default_factory=set)  # shelter cells handed out


@dataclass
class _Prompt:
    name: str
    goal: str
    subordinates: list[str]
    task: str | None
    assigned: bool
    inventory: dict[str, int]
    vitals: dict[str, int]
    threat: int  # steps to the nearest zombie in view (99: none)
    progress: str
    messages: list[str]
    results: list[str]


def _read(messages: tuple[Message, ...]) -> _Prompt:
    system = next((m.content for m in messages if m.role == "system"), "")
    user = next((m.content for m in messages if m.role == "user"), "")
    name = _find(r"You are (\S+?),", system) or "agent"
    subs = _find(rf"- {re.escape(name)} \([^)]*\): may command (.+)", system)
    task = _find(r"(?:Your task at hand|The task you were working on): (.+)", user)
    if task is not None and task.startswith("("):
        task = None
    inv_line = _find(r"Inventory: (.+?)\.?$", user) or ""
    return _Prompt(
        name=name,
        goal=_find(r"The team's goal: (.+)", system) or "",
        subordinates=[s.strip() for s in subs.split(",")] if subs else [],
        task=re.sub(r" \(given by \S+\)$", "", task) if task else None,
        assigned=task is not None and "(given by " in task,
        inventory={k: int(v) for k, v in re.findall(r"([a-z_]+) (\d+)", inv_line)},
        vitals={k: int(v) for k, v in re.findall(r"(food|drink|energy) (\d+)/", user)},
        threat=int(_find(r"zombie: .*\((\d+) steps?\)", user) or 99),
        progress=_find(r"Team progress: (.+?)\.$", user) or "",
        messages=_section(user, "Messages since your last plan"),
        results=_section(user, "Results of your own recent actions"),
    )


def _find(pattern: str, text: str) -> str | None:
    match = re.search(pattern, text, re.MULTILINE)
    return match.group(1).strip() if match else None


def _section(text: str, title: str) -> list[str]:
    """The ``- `` lines under a heading of the perception block."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.startswith(title):
            out = []
            for row in lines[i + 1 :]:
                if not row.startswith("- "):
                    break
                out.append(row[2:].strip())
            return out
    return []


def tool_chain(item: str, inventory: dict[str, int]) -> list[str]:
    """The skill calls that must come before collecting ``item``."""
    need = {"stone": "wood_pickaxe", "coal": "wood_pickaxe", "iron": "stone_pickaxe"}.get(item)
    if need is None or inventory.get(need, 0) > 0:
        return []
    # A table takes 2 wood, each pickaxe 1 more (stone: 1 stone too); the one
    # table serves both pickaxes when they are made in one go.
    wood = 3 if need == "wood_pickaxe" else 4
    chain = []
    if inventory.get("wood_pickaxe", 0) == 0:
        chain += [f"collect(wood, {wood})", "place(table)", "craft(wood_pickaxe)"]
    elif need == "stone_pickaxe":
        chain += ["collect(wood, 3)", "place(table)"]
    if need == "stone_pickaxe":
        chain += ["collect(stone, 1)", "craft(stone_pickaxe)"]
    return chain


def _own_actions(task: str, inventory: dict[str, int]) -> list[str]:
    """A task's calls with the tools they need in front."""
    calls = [f"{name}({args})" for name, args in _CALL.findall(task)]
    if not calls:
        return []
    first = calls[0]
    if first.startswith("place(stone"):
        walls = sum(c.startswith("place(stone") for c in calls)
        have = inventory.get("stone", 0)
        extra = [f"collect(stone, {walls - have})"] if walls > have else []
        return [*tool_chain("stone", inventory), *extra, *calls]
    item = first[len("collect(") :].split(",")[0].strip()
    return [*tool_chain(item, inventory), *calls]


def _goal(goal: str) -> tuple[str, int, str] | list[tuple[int, int]]:
    """("collect", amount, item), or the eight wall cells of a shelter."""
    match = re.search(r"collect (\d+) (\w+)", goal)
    if match:
        return ("collect", int(match.group(1)), match.group(2))
    where = re.search(r"(-?\d+)\s*,\s*(-?\d+) on the map", goal)
    if where is None:
        return ("collect", 0, "wood")
    x, y = int(where.group(1)), int(where.group(2))
    return [(x + dx, y + dy) for dy in (-1, 0, 1) for dx in (-1, 0, 1) if dx or dy]


def _remaining(progress: str, amount: int) -> int:
    match = re.match(r"(\d+)\s*/\s*(\d+)", progress)
    return max(0, int(match.group(2)) - int(match.group(1))) if match else amount


class _Policy:
    """The answers of every agent sharing one simulated model."""

    def __init__(self) -> None:
        self.memory: dict[str, _Memory] = {}

    def __call__(self, messages: tuple[Message, ...]) -> str:
        p = _read(messages)
        mem = self.memory.setdefault(p.name, _Memory())
        if any(m.role == "user" and "Judge it" in m.content for m in messages):
            return self._monitor(p)
        return self._plan(p, mem)

    def _monitor(self, p: _Prompt) -> str:
        last = p.results[-1] if p.results else ""
        if last.split(": ", 1)[-1].startswith("failed"):
            return _json(status="fail", rationale=last)
        targets = _targets(p.task or "")
        if targets and all(
            any(r.startswith(f"{t}: succeeded") for r in p.results) for t in targets
        ):
            return _json(status="success", rationale=f"done: {last}")
        return _json(status="ongoing", rationale="the task's calls have not all run yet")

    def _plan(self, p: _Prompt, mem: _Memory) -> str:
        for line in p.messages:
            report = re.search(r"(\S+) -> \S+: REPORT (succeeded|failed): (.*)", line)
            if report and report.group(1) in mem.busy:
                given = mem.busy.pop(report.group(1))
                if report.group(2) == "failed":
                    mem.walls -= set(_cells(given))  # hand those walls out again
        free = [s for s in p.subordinates if s not in mem.busy]
        goal = _goal(p.goal)
        if isinstance(goal, list):
            shares = self._walls(p, mem, goal, len(free) + 1)
        else:
            _, amount, item = goal
            cover = _task_amount(p.task or "") if p.assigned else _remaining(p.progress, amount)
            cap = cover if p.assigned else min(cover, CHUNK * (len(free) + 1))
            each = math.ceil(cap / (len(free) + 1)) if cap > 0 else 0
            shares = [f"collect({item}, {each})"] * (len(free) + 1) if each else []
        actions: list[str] = []
        for sub, share in zip(free, shares[1:], strict=False):
            mem.busy[sub] = share
            actions.append(f"tell {sub} to {share}")
        own = p.task if p.assigned and not p.subordinates else (shares[0] if shares else None)
        if own:
            fight = ["fight(zombie)"] if p.threat <= 3 else []
            actions += fight + _care(p.vitals) + _own_actions(own, p.inventory)
        stages = ["get the tools the task needs", "gather and share the work", "finish"]
        return _json(objective=p.goal, plan=stages, task=own or "wait", actions=actions)

    def _walls(
        self, p: _Prompt, mem: _Memory, cells: list[tuple[int, int]], people: int
    ) -> list[str]:
        pool = _cells(p.task or "") if p.assigned else [c for c in cells if c not in mem.walls]
        if not pool:
            return []
        per = math.ceil(len(pool) / people)
        shares = []
        for i in range(0, len(pool), per):
            part = pool[i : i + per]
            mem.walls |= set(part)
            shares.append("; ".join(f"place(stone, {x}, {y})" for x, y in part))
        return shares


def _care(vitals: dict[str, int]) -> list[str]:
    """Drink, eat and sleep before work when running low, as a sensible player would
    (a player at 0 energy loses health every few ticks until it dies)."""
    care = ["drink()"] if vitals.get("drink", 9) <= 4 else []
    care += ["eat(cow)"] if vitals.get("food", 9) <= 4 else []
    return care + (["sleep()"] if vitals.get("energy", 9) <= 2 else [])


def _targets(task: str) -> list[str]:
    return [f"{name}({args})" for name, args in _CALL.findall(task)]


def _task_amount(task: str) -> int:
    match = re.search(r"collect\(\w+,\s*(\d+)\)", task)
    return int(match.group(1)) if match else 0


def _cells(task: str) -> list[tuple[int, int]]:
    return [(int(x), int(y)) for x, y in re.findall(r"place\(stone,\s*(-?\d+),\s*(-?\d+)\)", task)]


def _json(**fields: object) -> str:
    return json.dumps(fields)


def simulated_roles(
    sleep: Sleep,
    *,
    seed: int = 0,
    leader_median_s: float = 8.0,
    worker_median_s: float = 4.0,
    sigma: float = 0.5,
) -> Roles:
    """``leader`` and ``worker`` scripted models with log-normal latency on ``sleep``."""
    return Roles(
        {
            "leader": ScriptedLLM(
                fn=_Policy(),
                latency=Latency.lognormal(leader_median_s, sigma),
                seed=seed * 2 + 1,
                sleep=sleep,
                model="simulated-leader",
            ),
            "worker": ScriptedLLM(
                fn=_Policy(),
                latency=Latency.lognormal(worker_median_s, sigma),
                seed=seed * 2 + 2,
                sleep=sleep,
                model="simulated-worker",
            ),
        }
    )
