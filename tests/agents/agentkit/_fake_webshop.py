"""A minimal shop on the TextEnv contract, in WebShop's text format, for the
``agentkit-webshop`` tests until the real ``make("webshop")`` is merged.

Pages: search -> results (ids, titles, prices) -> item (option values, Buy Now).
Actions ``search[words]`` and ``click[button]``; ``candidate_actions()`` lists the
page's buttons as ``click[...]`` and, on the search page, a ``search[...]``. The
reward of a purchase is 1.0 for the target with the goal option, 0.5 for the
target without it, else 0.
"""

from __future__ import annotations

import re

from lorekit.envs.base import Observation, Step, Task, TextEnv

SEP = " [SEP] "
PRODUCTS = {
    "B000000001": ("red cotton t-shirt for men", "$12.00", ["small", "large"]),
    "B000000002": ("blue wool sweater", "$40.00", ["medium"]),
    "B000000003": ("green cotton socks, 6 pairs", "$9.50", ["one size"]),
}
_ACTION = re.compile(r"^\s*(search|click)\[(.+)\]\s*$", re.IGNORECASE)


class FakeShop(TextEnv):
    name = "webshop"

    def __init__(self, episodes: int = 20) -> None:
        self._tasks = [
            Task(
                f"test-{i}",
                f"i need a red cotton t-shirt in size {'large' if i % 2 else 'small'}",
                "shirts",
                {"target": "B000000001", "option": "large" if i % 2 else "small"},
            )
            for i in range(episodes)
        ]
        self.page = "search"
        self.item: str | None = None
        self.option: str | None = None
        self.task: Task | None = None
        self.done = False
        self.log: list[str] = []

    def tasks(self, split: str = "test") -> list[Task]:
        return list(self._tasks)

    def splits(self) -> tuple[str, ...]:
        return ("test",)

    def action_forms(self) -> list[str]:
        return ["search[<words>]", "click[<button>]"]

    def manual(self) -> str:
        return "Search, open a product, choose its options, buy."

    def reset(self, task: Task | str | None = None, seed: int | None = None) -> Observation:
        self.task = task if isinstance(task, Task) else self._tasks[0]
        self.page, self.item, self.option, self.done = "search", None, None, False
        return Observation(self._text())

    def buttons(self) -> list[str]:
        if self.page == "results":
            return ["Back to Search", *PRODUCTS]
        if self.page == "item" and self.item is not None:
            return ["Back to Search", "< Prev", *PRODUCTS[self.item][2], "Buy Now"]
        return []

    def candidate_actions(self) -> list[str]:
        out = [f"click[{b}]" for b in self.buttons()]
        return ["search[...]", *out] if self.page == "search" else out

    def _text(self) -> str:
        assert self.task is not None
        head = ["Instruction:", self.task.goal]
        if self.page == "search":
            return SEP.join(["WebShop", *head, "Search"])
        if self.page == "results":
            rows = [x for pid, (title, price, _) in PRODUCTS.items() for x in (pid, title, price)]
            return SEP.join([*head, "Back to Search", "Page 1 (Total results: 3)", *rows])
        assert self.item is not None
        title, price, options = PRODUCTS[self.item]
        return SEP.join(
            [*head, "Back to Search", "< Prev", "size", *options, title, price, "Buy Now"]
        )

    def step(self, action: str) -> Step:
        assert self.task is not None
        self.log.append(action)
        m = _ACTION.match(action)
        if m is None or self.done:
            return Step("Invalid action. " + self._text(), 0.0, self.done, {"valid": False})
        verb, arg = m.group(1).lower(), m.group(2).strip()
        if verb == "search" and self.page == "search":
            self.page = "results"
        elif verb == "click":
            button = next((b for b in self.buttons() if b.lower() == arg.lower()), None)
            if button is None:
                return Step("Invalid action. " + self._text(), 0.0, False, {"valid": False})
            if button == "Back to Search":
                self.page, self.item = "search", None
            elif button in PRODUCTS:
                self.page, self.item = "item", button
            elif button == "< Prev":
                self.page, self.item = "results", None
            elif button == "Buy Now":
                self.done = True
                target = self.item == self.task.data["target"]
                reward = (
                    (1.0 if self.option == self.task.data["option"] else 0.5) if target else 0.0
                )
                info = {"valid": True, "success": reward == 1.0}
                return Step("Thank you for shopping with us!", reward, True, info)
            else:
                self.option = button
        else:
            return Step("Invalid action. " + self._text(), 0.0, False, {"valid": False})
        return Step(self._text(), 0.0, False, {"valid": True})
