"""The executor of ADaPT's ``code`` and ``paper`` profiles: the published code's loop.

One growing transcript, one line per model turn, exactly as the authors'
``textcraft_run`` / ``alfworld_run`` played it (see ``profiles.yaml`` for the
numbers per environment):

- the answer is stripped and loses any leading ``>`` and spaces; on ALFWorld a
  ``put X in Y`` becomes ``put X in/on Y``;
- a line starting with the thought prefix is a thought: the env is not
  stepped and the turn's observation is ``OK.`` (the original stepped the env
  with it, which changes nothing there);
- the phrases ``task completed`` / ``task failed`` end the run with that claim
  (TextCraft: in any line; ALFWorld: in thoughts only); the env's success
  (TextCraft: the step that crafts the goal) ends it as a success too;
- ``patience`` stalled turns in a row (an observation the profile names, such
  as ``Could not ...``, or a thought's ``OK.``) end it as a failure, and so
  does running out of turns.

The run's success is the executor's own claim or the env's success, never an
env check of the sub-task: that is the paper's "self-generated success
heuristic". ``reward`` is what the original's run returned (the env's reward
on the step that ended the run, else 0): the published figures are the
reward of the last run of each episode.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from importlib import resources
from typing import Any

from lorekit import yamlio
from lorekit.agents.adapt.common import AdaptContext
from lorekit.agents.adapt.profiles import CodeSettings
from lorekit.agents.base import Episode
from lorekit.agents.prompts import PromptError, render
from lorekit.envs.base import Step
from lorekit.llm.base import Message

_ARRIVAL = re.compile(r"^You arrive at loc [^.]*\. ")


@functools.cache
def code_prompts(env: str) -> dict[str, Any]:
    """``code_prompts.yaml``'s templates and examples for ``env``."""
    text = resources.files("lorekit.agents.adapt").joinpath("code_prompts.yaml").read_text()
    data = yamlio.safe_load(text, source="adapt/code_prompts.yaml")
    entry = data.get(env) if isinstance(data, dict) else None
    if not isinstance(entry, dict):
        raise PromptError(f"adapt/code_prompts.yaml has no prompts for env {env!r}")
    return entry


@dataclass(slots=True)
class CodeRun:
    """One executor run of the original loop: its claim, its end and its transcript.

    ``transcript`` is the text the original kept of the run (``' action\\nobs\\n>'``
    per turn; a run cut off by patience lacks its last turn, as there);
    ``success`` is what the controller acts on; ``reward`` what the run returned.
    """

    task: str
    depth: int
    claimed: bool | None = None
    success: bool = False
    reward: float = 0.0
    stop: str = ""
    turns: int = 0
    actions: list[str] = field(default_factory=list)
    invalid: int = 0
    transcript: str = ""
    lines: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The run for the notes, with the keys the ADaPT view reads."""
        out = asdict(self)
        out.pop("lines")
        out.update(verified=None, overclaimed=False, format_errors=0)
        return out


def arrival(observation: str) -> str:
    """ALFWorld's "You arrive at loc 12. On the ..." as the code showed it."""
    if _ARRIVAL.match(observation):
        return "You arrive at the location. " + observation[observation.find(". ") + 2 :]
    return observation


def clean_action(answer: str, settings: CodeSettings) -> str:
    """The answer as the original used it: stripped, no leading ``>``/spaces, ``in/on``."""
    action = answer.strip().lstrip("> ")
    if settings.rewrite_put and action.startswith("put"):
        action = action.replace(" in ", " in/on ").replace(" on ", " in/on ")
    return action


async def act(ep: Episode, action: str) -> Step:
    """Step the env; after the goal, keep stepping an env that says it plays on.

    The original environment accepted actions after its goal was reached and
    ADaPT's code kept running its plan; LoreKit's TextCraft does the same with
    ``after_goal=continue``, reporting ``accepts_more`` on those steps.
    """
    if not ep.done:
        return await ep.act(action)
    step = await ep.env.step(action)
    ep.record(action, step)
    return step


class TranscriptExecutor:
    """Runs one (sub-)task the way the published code did; see the module docstring."""

    def __init__(
        self,
        settings: CodeSettings,
        *,
        role: str = "executor",
        max_turns: int | None = None,
        temperature: float = 0.0,
        shots: int = 2,
    ) -> None:
        self.settings = settings
        self.role = role
        self.max_turns = max_turns if max_turns is not None else settings.executor_turns
        self.temperature = temperature
        self.shots = shots
        self.prompts = code_prompts(settings.env)

    def prompt(self, observation: str, transcript: str, examples: Sequence[str]) -> list[Message]:
        text = render(
            self.prompts["executor"],
            f"code_prompts.{self.settings.env}.executor",
            examples="\n\n".join(e.strip("\n") for e in examples[: self.shots]),
            observation=observation,
            transcript=transcript,
        )
        # The code ended the prompt with ">" so the model writes the next command.
        if not text.endswith(">"):
            text += "\n>"
        return [Message("system", str(self.prompts["executor_system"])), Message("user", text)]

    def _claim(self, action: str, thought: bool) -> bool | None:
        if not (thought or self.settings.verdict_anywhere):
            return None
        low = action.lower()
        said: bool | None = None
        if self.settings.completed in low:
            said = True
        if self.settings.failed in low:
            said = False
        return said

    def _outcome(self, step: Step) -> tuple[float, bool]:
        """(the step's reward, whether it ends the run) as the original read them:
        TextCraft's env terminated on the step that crafted the goal, with reward 1."""
        if self.settings.goal_step == "crafted_goal":
            hit = bool(step.info.get("crafted_goal"))
            return (1.0 if hit else 0.0), hit
        return step.reward, step.done

    async def run(
        self,
        ctx: AdaptContext,
        task: str,
        observation: str,
        examples: Sequence[str],
        *,
        depth: int = 1,
    ) -> CodeRun:
        """Play ``task`` from ``observation`` (its setting, goal and carried state)."""
        s = self.settings
        run = CodeRun(task, depth)
        streak = 0
        done = False
        for _ in range(self.max_turns):
            answer = await ctx.ask(
                self.role,
                self.prompt(observation, run.transcript, examples),
                temperature=self.temperature,
                max_tokens=s.executor_tokens,
                stop=["\n"],
            )
            run.turns += 1
            action = clean_action(answer, s)
            run.lines.append(action)
            thought = action.startswith(s.thought_prefix)
            reward, done = 0.0, False
            if thought:
                seen = s.thought_reply
            else:
                if ctx.ep.done and not _accepts_more(ctx.ep):
                    run.stop = "env_done"
                    break
                step = await act(ctx.ep, action)
                seen = arrival(step.observation) if s.arrival_rewrite else step.observation
                run.actions.append(action)
                if not step.info.get("valid", True):
                    run.invalid += 1
                reward, done = self._outcome(step)
            said = self._claim(action, thought)
            if said is not None:
                run.claimed, done = said, True
                run.success = said or reward > 0
            if s.stalled(seen):
                streak += 1
                if streak == s.patience:
                    run.stop = "patience"
                    break
            else:
                streak = 0
            run.transcript += f" {action}\n{seen}\n>"
            if reward > 0:
                run.success = True
            if done:
                run.reward = reward
                run.stop = run.stop or (
                    "env_done" if said is None else "completed" if said else "failed"
                )
                return run
        if not done:
            run.success = False
        run.stop = run.stop or "turns"
        return run


def _accepts_more(ep: Episode) -> bool:
    steps = ep.trajectory.steps
    return bool(steps and steps[-1].info.get("accepts_more"))
