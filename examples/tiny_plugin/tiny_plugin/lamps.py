"""A row of lamps; a task names the ones to switch on. The env writes only its
own dynamics: LoreKit's core adds the step cap and what happens after the end."""

from itertools import combinations

from lorekit.envs import Observation, Step, Task, TextEnv


class LampsEnv(TextEnv):
    name = "lamps"
    execution = "inline"  # each call takes microseconds

    def __init__(self, lamps: int = 4) -> None:
        if not isinstance(lamps, int) or not 1 <= lamps <= 9:
            raise ValueError(f"lamps must be a whole number from 1 to 9, got {lamps!r}")
        self.lamps = lamps
        self.on: set[int] = set()
        self.goal: frozenset[int] = frozenset()
        picks = [c for k in range(1, lamps + 1) for c in combinations(range(1, lamps + 1), k)]
        self._tasks = [
            Task("lamps-" + "-".join(map(str, c)), "switch on lamps " + " and ".join(map(str, c)),
                 f"{len(c)}-lamps", {"on": list(c)})
            for c in picks
        ]  # fmt: skip

    def splits(self) -> tuple[str, ...]:
        return ("test", "dev")

    def tasks(self, split: str = "test") -> list[Task]:
        if split not in self.splits():
            raise KeyError(f"unknown split {split!r}; splits: test, dev")
        return self._tasks[1::2] if split == "test" else self._tasks[::2]

    def reset(self, task: Task | str | None = None, seed: int | None = None) -> Observation:
        if task is None:
            task = self._tasks[(seed or 0) % len(self._tasks)]
        if isinstance(task, str):
            task = next((t for t in self._tasks if t.id == task), None) or _unknown(task)
        self.on, self.goal = set(), frozenset(task.data["on"])
        return Observation(f"{self.lamps} lamps, all off. Your task: {task.goal}.")

    def step(self, action: str) -> Step:
        verb, _, arg = action.strip().partition(" ")
        if verb == "look":
            return Step(self._shown(), 0.0, False, {"valid": True, "success": False})
        if verb != "toggle" or not arg.isdigit() or not 1 <= int(arg) <= self.lamps:
            text = f"Nothing happens: say 'toggle N' for a lamp from 1 to {self.lamps}, or 'look'."
            return Step(text, 0.0, False, {"valid": False, "success": False})
        self.on ^= {int(arg)}
        won = self.on == self.goal
        return Step(self._shown(), 1.0 if won else 0.0, won, {"valid": True, "success": won})

    def _shown(self) -> str:
        return "Lamps on: " + (", ".join(map(str, sorted(self.on))) or "none") + "."

    def action_forms(self) -> list[str]:
        return ["toggle <lamp>", "look"]

    def manual(self) -> str:
        return "Toggle lamps until exactly the ones your task names are on."

    def expert_action(self) -> str | None:
        wrong = sorted(self.on ^ self.goal)
        return f"toggle {wrong[0]}" if wrong else None

    def candidate_actions(self) -> list[str]:
        return [f"toggle {n}" for n in range(1, self.lamps + 1)] + ["look"]


def _unknown(task: str) -> Task:
    raise KeyError(f"unknown lamps task {task!r}; ids look like 'lamps-1-3'")
