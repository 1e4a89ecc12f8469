"""Replay ADaPT's published WebShop run (``ADaPT_maxd3_webshop_*.json``) as far as it goes.

What the file holds, per goal ``fixed_<i>`` (the original's instruction i):
the instruction, the score and success of its purchase, and the
``action_history``: the actions of the sub-tasks that succeeded (searches,
product and option clicks, the DetailMatch module's ``think[...]`` notes),
in order. It holds no model output at all: not the planner's plans (the
published WebShop ADaPT plans over Search, SimpleMatch, DetailMatch and Buy
modules), not the modules' answers, not the actions of failed sub-tasks. So
this replay cannot test LoreKit's ADaPT; what it can test is whether the
recorded purchase replays to its recorded score on LoreKit's shop.

It plays each goal's recorded actions, in order, on LoreKit's WebShop (thoughts
are not env actions there and are skipped, as the original's env answered
them ``OK.``), with a model-free agent that takes each action from the record.
It goes only as far as the shop allows: a goal whose instruction is not the
shop's (LoreKit's generated catalogue has none of the original's instructions
or products) is not played, and an action the shop refuses (a product id not
in this catalogue) ends the episode; both are ``unplayable`` divergences
naming the cause. With WebShop's own files (``WEBSHOP_DATA``, instructions
in the original's order) every step can play and the score is compared.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lorekit.agents.base import Episode, Recorder, Trajectory
from lorekit.envs.asyncenv import AsyncEnv, EnvLike
from lorekit.envs.base import Task, TextEnv
from lorekit.eval.replay import Divergence, ReplayError
from lorekit.llm.base import Message
from lorekit.llm.roles import Roles

END = "(end of the record)"
_ASIN = re.compile(r"^B[0-9A-Z]{9}$")
_BUTTONS = frozenset(
    {
        "Buy Now",
        "Back to Search",
        "< Prev",
        "Next >",
        "Description",
        "Features",
        "Reviews",
        "Attributes",
    }
)
ROLE = "actor"


@dataclass(frozen=True, slots=True)
class WebShopRecord:
    key: str
    instruction: str
    score: float
    success: bool
    actions: tuple[str, ...]


def _instruction(text: str) -> str:
    return " ".join(text.removeprefix("I am looking to buy a product.").split()).lower()


class RecordedActionsAgent:
    """Plays the actions its model gives, one per call, until the model says the record ended
    or the env refuses one. The replay model answers from the record: no decisions here."""

    name = "recorded-actions"
    model_roles = (ROLE,)

    async def run(
        self, env: EnvLike, task: Task, roles: Roles, recorder: Recorder, *, seed: int | None = None
    ) -> Trajectory:
        ep = await Episode.start(env, task, recorder, seed)
        while not ep.done:
            action = (await roles[ROLE].complete([Message("user", ep.observation)])).text
            if action == END:
                break
            step = await ep.act(action)
            if not step.info.get("valid", True):
                return ep.stop("refused")
        return ep.stop("record_ended")


@dataclass(slots=True)
class WebShopCursor:
    record: WebShopRecord
    playable: bool
    reason: str = ""
    given: int = 0
    calls: int = 0
    divergences: list[Divergence] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.playable:
            self.divergences.append(
                Divergence("unplayable", 0, "-", self.record.instruction, self.reason)
            )

    def bind(self, env: AsyncEnv) -> None:
        return None  # the record's actions need nothing of the env

    async def answer(self, role: str, messages: Sequence[Message]) -> str:
        self.calls += 1
        moves = [a for a in self.record.actions if not a.startswith("think[")]
        if not self.playable or self.given >= len(moves):
            return END
        self.given += 1
        return moves[self.given - 1]

    def finish(self, trajectory: Trajectory) -> dict[str, Any]:
        refused = next((s for s in trajectory.steps if not s.info.get("valid", True)), None)
        if refused is not None:
            why = refused.observation.split(". ")[0]
            self.divergences.append(
                Divergence("unplayable", self.calls, "env", refused.action, why)
            )
        moves = sum(1 for a in self.record.actions if not a.startswith("think["))
        played = len(trajectory.steps) - (refused is not None)
        complete = self.playable and refused is None and played == moves
        replayed = float(trajectory.success) if complete else None
        if complete and replayed != float(self.record.success):
            self.divergences.append(
                Divergence("reward", 0, "-", str(self.record.score), str(trajectory.reward))
            )
        return {
            "record": self.record.key,
            "published": float(self.record.success),
            "published_score": self.record.score,
            "replayed": replayed,
            "replayed_score": trajectory.reward if complete else None,
            "decided": complete,
            "actions": moves,
            "played": played,
            "thoughts": len(self.record.actions) - moves,
            "divergences": [d.to_dict() for d in self.divergences],
        }


@dataclass(slots=True)
class WebShopReplay:
    path: Path
    records: Mapping[str, WebShopRecord]
    env_options: Mapping[str, Any] = field(default_factory=lambda: {"max_steps": None})
    title: str = "ADaPT on WebShop (published run, gpt-3.5-turbo): the recorded purchases"
    roles: tuple[str, ...] = (ROLE,)
    limits: tuple[str, ...] = ()
    _tasks: dict[str, Task] = field(default_factory=dict)

    def make_env(self) -> TextEnv:
        from lorekit.envs.webshop.env import WebShopEnv

        return WebShopEnv(**dict(self.env_options))

    def make_agent(self) -> RecordedActionsAgent:
        return RecordedActionsAgent()

    def tasks(self) -> list[Task]:
        env = self.make_env()
        try:
            shop = env.tasks("test")
            described = env.describe_split("test") if hasattr(env, "describe_split") else ""
            stocked = {p.asin for p in getattr(env, "products", ())}
        finally:
            env.close()
        out = []
        for key in self.records:
            index = int(key.split("_")[1])
            if index < len(shop):
                # One group: the shop's task groups belong to its own goals, not the record's.
                task = dataclasses.replace(shop[index], group="recorded goals")
                self._tasks[key] = task
                out.append(task)
        same = sum(self._same(k) for k in self._tasks)
        shop_is = f"; the shop: {described}" if described else ""
        self.limits = (
            *self.limits,
            f"{same} of {len(self.records)} recorded instructions are this shop's (its test "
            f"goal of the same index){shop_is}",
            self._inventory_of_actions(stocked),
        )
        return out

    def _inventory_of_actions(self, stocked: set[str]) -> str:
        """What the recorded actions are, and how many of their products this shop has."""
        kinds: dict[str, int] = {}
        products: set[str] = set()
        for record in self.records.values():
            for action in record.actions:
                verb, _, rest = action.partition("[")
                argument = rest[:-1]
                if verb == "click" and _ASIN.match(argument):
                    products.add(argument)
                    verb = "product click"
                elif verb == "click":
                    verb = "button click" if argument in _BUTTONS else "option click"
                kinds[verb] = kinds.get(verb, 0) + 1
        listed = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items(), key=lambda kv: -kv[1]))
        held = len(products & stocked)
        return (
            f"the recorded actions: {listed}; the product clicks name {len(products)} products, "
            f"{held} of them in this shop"
        )

    def _same(self, key: str) -> bool:
        return _instruction(self.records[key].instruction) == _instruction(self._tasks[key].goal)

    def seed(self, task: Task) -> int:
        return 0

    def cursor(self, task: Task) -> WebShopCursor:
        key = next(k for k, t in self._tasks.items() if t.id == task.id)
        record = self.records[key]
        if self._same(key):
            return WebShopCursor(record, True)
        reason = f"not this shop's instruction (its {task.id} asks: {task.goal!r})"
        return WebShopCursor(record, False, reason)

    def describe(self) -> dict[str, Any]:
        return {
            "reader": READER.name,
            "file": str(self.path),
            "episodes": len(self.records),
            "agent": RecordedActionsAgent.name,
            "env": "webshop",
            "env_options": dict(self.env_options),
        }


class WebShopReader:
    """Recognises ADaPT's WebShop result files (``fixed_<i>`` with an action history)."""

    name = "adapt-webshop"

    def claims(self, data: object) -> bool:
        if not isinstance(data, Mapping):
            return False
        first = next((v for k, v in data.items() if str(k).startswith("fixed_")), None)
        return isinstance(first, Mapping) and {"problem", "score", "action_history"} <= set(first)

    def open(self, path: Path, **options: Any) -> WebShopReplay:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not self.claims(data):
            raise ReplayError(f"{path}: not an ADaPT WebShop result file")
        records = {}
        for key, entry in data.items():
            if not key.startswith("fixed_"):
                continue
            history = entry.get("action_history")
            if not isinstance(history, list):
                raise ReplayError(f"{path}: {key}.action_history: expected a list")
            records[key] = WebShopRecord(
                key, str(entry.get("problem", "")), float(entry.get("score") or 0.0),
                bool(entry.get("success")), tuple(str(a) for a in history),
            )  # fmt: skip
        thoughts = sum(1 for r in records.values() for a in r.actions if a.startswith("think["))
        limits = (
            "the file holds no model output (no plans, no module answers, no failed sub-task's "
            "actions): only the recorded purchases are replayed, not ADaPT's decisions",
            f"{thoughts} recorded think[...] notes are skipped (not env actions; the original's "
            "env answered them OK.)",
            "the original played on WebShop's 1.18M-product catalogue; a product not in this "
            "shop ends its episode (an unplayable divergence naming the action)",
        )
        env_options = {"max_steps": None, **dict(options.get("env_options") or {})}
        return WebShopReplay(path, records, env_options, limits=limits)


READER = WebShopReader()
