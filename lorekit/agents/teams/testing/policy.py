"""The scripted team members' policy: read an hourglass prompt, answer as a careful model.

One :class:`Policy` per role is the memory of a simulated agent (whom it gave
work to, which shelter pieces it knows built); its ``__call__`` is a
``ScriptedLLM`` answer function. See :mod:`lorekit.agents.teams.testing`.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field

from lorekit.llm.base import Message

CHUNK = 10  # the most a leader hands out in one assignment, so it can rebalance later
_CALL = re.compile(r"\b(collect|place)\(([^)]*)\)")
_PIECE = re.compile(r"place\((stone|table),\s*(-?\d+),\s*(-?\d+)\)")
Piece = tuple[int, int, str]  # a shelter cell and the material it is built of


@dataclass
class _Memory:
    """What one simulated agent remembers between its calls (a model's context)."""

    busy: dict[str, str] = field(default_factory=dict)  # subordinate -> task given
    walls: set[Piece] = field(default_factory=set)  # shelter pieces handed out
    built: set[Piece] = field(default_factory=set)  # pieces reported (or seen) built
    seen: set[str] = field(default_factory=set)  # message lines already taken in
    reported: int = 0  # items teammates reported collected


@dataclass
class _Prompt:
    name: str
    goal: str
    subordinates: list[str]
    task: str | None
    assigned: bool
    hands_on: bool
    stage: str  # the task of the last plan (the monitor judges it)
    commands: dict[str, list[str]]  # the team description: who may command whom
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
    subs = subs or _find(r"You may give orders to: (.+?)\.?$", system)
    task = _find(r"(?:Your task at hand|The task you were working on|The task): (.+)", user)
    last = _find(r"Your last plan: (.+)", user) or ""
    stage = json.loads(last).get("task", "") if last.startswith("{") else ""
    commands = {
        who: [x.strip() for x in subs_of.split(",")]
        for who, subs_of in re.findall(r"^- (\S+) \([^)]*\): may command (.+)$", system, re.M)
    }
    if task is not None and task.startswith("("):
        task = None
    inv_line = _find(r"Inventory: (.+?)\.?$", user) or ""
    return _Prompt(
        name=name,
        goal=_find(r"The team's goal: (.+)", system) or "",
        subordinates=[s.strip() for s in subs.split(",")] if subs else [],
        task=re.sub(r" \(given by \S+\)$", "", task) if task else None,
        assigned=task is not None and "(given by " in task,
        hands_on="delegate only" not in user,
        commands=commands,
        stage=str(stage),
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
    if first.startswith("place(table"):  # a table takes 2 wood
        wood = 2 * sum(c.startswith("place(table") for c in calls) - inventory.get("wood", 0)
        return [*([f"collect(wood, {wood})"] if wood > 0 else []), *calls]
    item = first[len("collect(") :].split(",")[0].strip()
    return [*tool_chain(item, inventory), *calls]


def _goal(goal: str) -> tuple[str, int, str] | list[list[Piece]]:
    """("collect", amount, item), or a shelter's stages in order (lists of pieces):
    the staged shelter's as its goal names them, or one stage of eight stone walls."""
    match = re.search(r"collect (\d+) (\w+)", goal)
    if match:
        return ("collect", int(match.group(1)), match.group(2))
    stages = re.findall(r"\w+: (stone|table) at ((?:-?\d+,-?\d+ ?)+)", goal)
    if stages:
        return [
            [(int(x), int(y), item) for x, y in re.findall(r"(-?\d+),(-?\d+)", cells)]
            for item, cells in stages
        ]
    where = re.search(r"(-?\d+)\s*,\s*(-?\d+) on the map", goal)
    if where is None:
        return ("collect", 0, "wood")
    x, y = int(where.group(1)), int(where.group(2))
    return [[(x + dx, y + dy, "stone") for dy in (-1, 0, 1) for dx in (-1, 0, 1) if dx or dy]]


def _remaining(progress: str, amount: int) -> int:
    match = re.match(r"(\d+)\s*/\s*(\d+)", progress)
    return max(0, int(match.group(2)) - int(match.group(1))) if match else amount


class Policy:
    """The answers of every agent sharing one simulated model: the progress
    monitor, the task planner (who does what in this stage, as lines
    ``NAME: TASK`` joined by `` | ``, ``me`` for the agent itself) and the
    action planner (that stage's task into skill calls and ``tell``s)."""

    def __init__(self) -> None:
        self.memory: dict[str, _Memory] = {}

    def __call__(self, messages: tuple[Message, ...]) -> str:
        p = _read(messages)
        mem = self.memory.setdefault(p.name, _Memory())
        user = next((m.content for m in messages if m.role == "user"), "")
        if "Judge it" in user:
            return self._monitor(p, mem)
        if '{"actions"' in user:
            return _json(actions=self._act(p))
        return self._plan(p, mem)

    def _absorb(self, p: _Prompt, mem: _Memory) -> None:
        """Take in teammates' reports once: free the reporter, count what it collected;
        and the shelter pieces its own skills built."""
        for line in p.results:
            call, _, verdict = line.partition(": ")
            if verdict.startswith("succeeded"):
                mem.built |= set(_pieces(call))
        for line in p.messages:
            if line in mem.seen:
                continue
            mem.seen.add(line)
            report = re.search(r"(\S+) -> \S+: REPORT (succeeded|failed): (.*)", line)
            if report and report.group(1) in mem.busy:
                given = mem.busy.pop(report.group(1))
                if report.group(2) == "failed":
                    mem.walls -= set(_pieces(given))  # hand those pieces out again
                else:
                    mem.reported += _task_amount(given)
                    mem.built |= set(_pieces(given))

    def _monitor(self, p: _Prompt, mem: _Memory) -> str:
        self._absorb(p, mem)
        last = p.results[-1] if p.results else ""
        if last.split(": ", 1)[-1].startswith("failed"):
            return _json(status="fail", rationale=last)
        own = _targets(_split(p.stage).get("me", ""))
        done = all(any(r.startswith(f"{t}: succeeded") for r in p.results) for t in own)
        if done and not mem.busy:
            return _json(status="success", rationale="my part is done and every teammate reported")
        return _json(status="ongoing", rationale="work is still under way")

    def _plan(self, p: _Prompt, mem: _Memory) -> str:
        self._absorb(p, mem)
        free = [s for s in p.subordinates if s not in mem.busy]
        hands = 1 if p.hands_on or not p.subordinates else 0
        people = len(free) + hands
        goal = _goal(p.goal)
        shares: list[str] = []
        if people == 0:
            pass
        elif isinstance(goal, list):
            shares = self._walls(p, mem, goal, people)
        else:
            # Each share is weighted by the agents it reaches: in a chain the next
            # link passes on part of what it gets, so it gets their parts too.
            weights = [1] * hands + [_reach(p.commands, s) for s in free]
            if p.assigned:
                cover = _task_amount(p.task or "")
            else:
                _, amount, _ = goal
                outstanding = sum(_task_amount(t) for t in mem.busy.values())
                done = _remaining(p.progress, amount) if p.progress else None
                have = mem.reported + p.inventory.get(goal[2], 0)
                cover = amount - (amount - done if done is not None else have) - outstanding
                if cover <= 0 and not mem.busy:  # the reports add up, but the goal is not met
                    cover = people
                if max(weights) == 1:  # a leader hands out chunks, so it can rebalance
                    cover = min(cover, CHUNK * people)
            shares = _weighted(goal[2], max(cover, 0), weights)
        parts = []
        own = p.task if p.assigned and not p.subordinates else None
        if hands and shares and own is None:
            own = shares.pop(0)
        for sub, share in zip(free, shares, strict=False):
            mem.busy[sub] = share
            parts.append(f"{sub}: {share}")
        if own:
            parts.append(f"me: {own}")
        task = " | ".join(parts) or "wait for the teammates' reports"
        stages = ["get the tools the task needs", "gather and share the work", "finish"]
        return _json(objective=p.goal, plan=stages, task=task)

    def _act(self, p: _Prompt) -> list[str]:
        lines = _split(p.task or "")
        actions = [f"tell {n} to {t}" for n, t in lines.items() if n != "me"]
        own = lines.get("me")
        actions += (["fight(zombie)"] if p.threat <= 3 else []) + _care(p.vitals)
        return actions + (_own_actions(own, p.inventory) if own else [])

    def _walls(self, p: _Prompt, mem: _Memory, stages: list[list[Piece]], people: int) -> list[str]:
        """Shares of the first stage not yet built; nothing of a later stage while a
        piece of an earlier one is still out (a stage stands on the one before)."""
        pool = _pieces(p.task or "") if p.assigned else []
        for stage in stages if not p.assigned else ():
            todo = [c for c in stage if c not in mem.built]
            if todo:
                pool = [c for c in todo if c not in mem.walls]
                break
        if not pool:
            return []
        per = math.ceil(len(pool) / people)
        shares = []
        for i in range(0, len(pool), per):
            part = pool[i : i + per]
            mem.walls |= set(part)
            shares.append("; ".join(f"place({item}, {x}, {y})" for x, y, item in part))
        return shares


def _reach(commands: dict[str, list[str]], name: str) -> int:
    """How many agents ``name`` reaches down its commands (itself included); in
    a graph, where command loops back, only itself."""
    seen, todo = {name}, list(commands.get(name, []))
    while todo:
        who = todo.pop()
        if who in seen:
            return 1  # a loop: peers, not a relay
        seen.add(who)
        todo += commands.get(who, [])
    return len(seen)


def _weighted(item: str, amount: int, weights: list[int]) -> list[str]:
    """``amount`` of ``item`` split by ``weights``, rounding up, dropping empty shares."""
    total = sum(weights)
    if amount <= 0 or total == 0:
        return []
    shares, left = [], amount
    for k, w in enumerate(weights):
        n = left if k == len(weights) - 1 else min(left, math.ceil(amount * w / total))
        shares.append(f"collect({item}, {n})")
        left -= n
    return [x for x in shares if not x.endswith(", 0)")]


def _split(task: str) -> dict[str, str]:
    """``"worker1: X | me: Y"`` -> ``{"worker1": "X", "me": "Y"}``; a task with no
    names is the agent's own."""
    out: dict[str, str] = {}
    for part in task.split(" | "):
        match = re.match(r"^(\w+):\s+(.+)$", part.strip())
        if match:
            out[match.group(1)] = match.group(2)
        elif part.strip() and not part.startswith("wait"):
            out["me"] = part.strip()
    return out


def _care(vitals: dict[str, int]) -> list[str]:
    """Drink, eat and sleep before work when running low, as a sensible player would
    (a player at 0 energy loses health every few ticks until it dies)."""
    care = ["drink()"] if vitals.get("drink", 9) <= 6 else []
    care += ["eat(cow)"] if vitals.get("food", 9) <= 6 else []
    return care + (["sleep()"] if vitals.get("energy", 9) <= 2 else [])


def _targets(task: str) -> list[str]:
    return [f"{name}({args})" for name, args in _CALL.findall(task)]


def _task_amount(task: str) -> int:
    match = re.search(r"collect\(\w+,\s*(\d+)\)", task)
    return int(match.group(1)) if match else 0


def _pieces(task: str) -> list[Piece]:
    return [(int(x), int(y), item) for item, x, y in _PIECE.findall(task)]


def _json(**fields: object) -> str:
    return json.dumps(fields)
