"""ReAct: reason, then act, one environment action per model turn.

Each turn the model sees the task, the history of its thoughts, actions and
observations, and answers ``Thought: ... / Action: ...``. An answer without a
usable action does not reach the environment: the agent tells the model what
was wrong and asks again, and that costs a turn, so a model that keeps
answering off-grammar fails cleanly at its budget instead of looping.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from lorekit.agents.base import Episode, Recorder, Trajectory
from lorekit.agents.prompts import load_prompts, render
from lorekit.envs.asyncenv import EnvLike
from lorekit.envs.base import Task
from lorekit.llm.base import Message
from lorekit.llm.roles import Roles

_ACTION = re.compile(r"^\s*\**\s*action\s*\**\s*[:：]\s*\**\s*(.*)$", re.IGNORECASE | re.MULTILINE)
_THOUGHT = re.compile(r"^\s*thought\s*:\s*(.*)$", re.IGNORECASE | re.MULTILINE)
_PROMPT_LIKE = re.compile(r"^\s*>\s*(.+)$", re.MULTILINE)


def parse_react(answer: str) -> tuple[str | None, str | None, str | None]:
    """Split an answer into (thought, action, problem).

    The last ``Action:`` line wins (models sometimes restate). A bare
    one-line answer, or a ``> action`` line, is taken as the action, because
    small models often drop the labels. ``problem`` explains a failure.
    """
    text = answer.strip()
    if not text:
        return None, None, "the answer was empty"
    thought_m = _THOUGHT.search(text)
    thought = thought_m.group(1).strip() if thought_m else None
    actions = [a.strip().strip("`*").strip() for a in _ACTION.findall(text)]
    actions = [a for a in actions if a]
    if actions:
        return thought, actions[-1], None
    if _ACTION.search(text):
        return thought, None, "the 'Action:' line was empty"
    prompt_like = _PROMPT_LIKE.findall(text)
    if prompt_like:
        return thought, prompt_like[-1].strip(), None
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) == 1 and thought is None:
        return None, lines[0].strip(), None
    return thought, None, "no line starting with 'Action:' was found"


@dataclass(frozen=True, slots=True)
class ReActTurn:
    """One model turn: what the model said and what came of it."""

    answer: str
    thought: str | None
    action: str | None
    observation: str | None
    problem: str | None


class ReActAgent:
    """Reason-then-act agent with a turn budget.

    ``max_turns`` bounds model calls (an off-grammar answer costs one);
    the environment's own step limit bounds actions. ``history_turns`` keeps
    the prompt short on long episodes by sending only the latest turns.
    """

    name = "react"

    def __init__(
        self,
        *,
        role: str = "executor",
        max_turns: int = 40,
        history_turns: int | None = None,
        temperature: float = 0.0,
        max_tokens: int | None = 256,
        prompts: str = "react",
    ) -> None:
        if max_turns < 1:
            raise ValueError(f"max_turns must be >= 1, got {max_turns}")
        self.role = role
        self.model_roles: tuple[str, ...] = (role,)
        self.max_turns = max_turns
        self.history_turns = history_turns
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.prompts = load_prompts(prompts)

    def _messages(self, system: str, first: str, history: list[Message]) -> list[Message]:
        if self.history_turns is not None and len(history) > 2 * self.history_turns:
            history = history[-2 * self.history_turns :]
        return [Message("system", system), Message("user", first), *history]

    async def run(
        self, env: EnvLike, task: Task, roles: Roles, recorder: Recorder, *, seed: int | None = None
    ) -> Trajectory:
        ep = await Episode.start(env, task, recorder, seed)
        llm = roles[self.role]
        p = self.prompts
        system = render(
            p["system"],
            "react.system",
            manual=await ep.env.manual(),
            action_forms="\n".join(f"- {f}" for f in await ep.env.action_forms()),
        )
        first = render(p["task"], "react.task", observation=ep.observation)
        history: list[Message] = []
        turns: list[ReActTurn] = []
        for _ in range(self.max_turns):
            out = await llm.complete(
                self._messages(system, first, history),
                temperature=self.temperature,
                max_tokens=self.max_tokens,
                stop=["\nObservation:"],
            )
            thought, action, problem = parse_react(out.text)
            history.append(Message("assistant", out.text.strip() or "(empty)"))
            if action is None:
                feedback = render(p["format_error"], "react.format_error", problem=problem)
                history.append(Message("user", feedback))
                turns.append(ReActTurn(out.text, thought, None, None, problem))
                continue
            step = await ep.act(action)
            turns.append(ReActTurn(out.text, thought, action, step.observation, None))
            if step.done:
                return _finish(ep, turns, "done")
            history.append(
                Message(
                    "user",
                    render(p["observation"], "react.observation", observation=step.observation),
                )
            )
        return _finish(ep, turns, "budget")


def _finish(ep: Episode, turns: list[ReActTurn], reason: str) -> Trajectory:
    """Keep the turns as plain data (they go to the store) and stop."""
    ep.trajectory.notes["turns"] = [asdict(t) for t in turns]
    ep.trajectory.notes["format_errors"] = sum(t.problem is not None for t in turns)
    return ep.stop(reason)
