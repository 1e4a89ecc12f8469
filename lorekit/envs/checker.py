"""``check_env``: verify that an environment keeps the TextEnv contract.

Agents and the evaluation runner trust every env to return well-typed results,
to answer garbage with an observation rather than an exception, and to be
reproducible from (task, seed, actions). This checker tests exactly those
promises, in the spirit of gymnasium's env checker, so a new env that passes it
can be dropped into any agent.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, TypeVar

from lorekit.envs.base import Observation, Step, Task, TextEnv

T = TypeVar("T")

GARBAGE_ACTIONS: tuple[str, ...] = (
    "",
    "   ",
    "\n\t",
    "asdf qwer zxcv",
    "get",
    "craft",
    "get -3 nothing",
    "craft 1 using ,,,",
    "✨ crafté 💎 ünïcödé",
    "\x00\x01\x7f",
    "x" * 10_000,
    "inventory " * 500,
)


class EnvCheckError(AssertionError):
    """An environment broke the TextEnv contract; the message says how."""


def _call(what: str, fn: Callable[[], T]) -> T:
    try:
        return fn()
    except EnvCheckError:
        raise
    except Exception as error:  # the point is to catch anything the env raises
        raise EnvCheckError(f"{what} raised {type(error).__name__}: {error}") from error


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise EnvCheckError(message)


def _check_step(result: Any, action: str) -> Step:
    shown = action if len(action) <= 40 else action[:40] + "..."
    _require(isinstance(result, Step), f"step({shown!r}) returned {type(result).__name__}")
    step: Step = result
    _require(isinstance(step.observation, str), f"step({shown!r}).observation is not a str")
    _require(step.observation.strip() != "", f"step({shown!r}) gave an empty observation")
    _require(isinstance(step.reward, (int, float)), f"step({shown!r}).reward is not a number")
    _require(isinstance(step.done, bool), f"step({shown!r}).done is not a bool")
    _require(isinstance(step.info, Mapping), f"step({shown!r}).info is not a mapping")
    _require(isinstance(step.info.get("valid"), bool), f"step({shown!r}).info lacks bool 'valid'")
    if step.done:
        _require("success" in step.info, f"step({shown!r}) ended the episode without 'success'")
    return step


def _reset(env: TextEnv, task: Task | str | None, seed: int | None) -> Observation:
    result = _call(f"reset({task!r}, seed={seed})", lambda: env.reset(task, seed=seed))
    _require(isinstance(result, Observation), f"reset returned {type(result).__name__}")
    _require(isinstance(result.text, str) and result.text.strip() != "", "reset gave no text")
    _require(isinstance(result.info, Mapping), "reset().info is not a mapping")
    return result


def _expert(env: TextEnv) -> str | None:
    action = _call("expert_action()", env.expert_action)
    _require(action is None or isinstance(action, str), "expert_action() returned a non-str")
    return action


def _check_catalogue(env: TextEnv) -> dict[str, list[Task]]:
    _require(isinstance(env.name, str) and env.name != "", "env.name must be a non-empty str")
    _require(isinstance(env.max_steps, int) and env.max_steps >= 1, "max_steps must be an int >= 1")
    splits = _call("splits()", env.splits)
    _require(isinstance(splits, tuple) and len(splits) > 0, "splits() must be a non-empty tuple")
    catalogue: dict[str, list[Task]] = {}
    for split in splits:
        tasks = _call(f"tasks({split!r})", partial(env.tasks, split))
        _require(isinstance(tasks, list) and len(tasks) > 0, f"tasks({split!r}) is empty")
        _require(all(isinstance(t, Task) for t in tasks), f"tasks({split!r}) has non-Task items")
        ids = [t.id for t in tasks]
        _require(len(set(ids)) == len(ids), f"tasks({split!r}) has duplicate ids")
        _require(all(isinstance(t.group, str) for t in tasks), f"tasks({split!r}): bad group")
        catalogue[split] = tasks
    forms = _call("action_forms()", env.action_forms)
    _require(isinstance(forms, list) and len(forms) > 0, "action_forms() must be a non-empty list")
    _require(all(isinstance(f, str) and f for f in forms), "action_forms() has empty entries")
    manual = _call("manual()", env.manual)
    _require(isinstance(manual, str) and manual.strip() != "", "manual() must be non-empty")
    return catalogue


def _random_action(rng: random.Random, forms: list[str], words: list[str]) -> str:
    roll = rng.random()
    if roll < 0.15:
        return rng.choice(GARBAGE_ACTIONS[:10])
    if roll < 0.3:
        return "".join(rng.choice(string.printable) for _ in range(rng.randint(1, 30)))
    form = rng.choice(forms)
    filled = []
    for token in form.split():
        if token.startswith("<count>"):
            filled.append(str(rng.randint(0, 12)) + token[len("<count>") :])
        elif token.startswith("<"):
            filled.append(rng.choice(words) + token[token.find(">") + 1 :])
        else:
            filled.append(token)
    return " ".join(filled)


def _run_episode(
    env: TextEnv, task: Task, seed: int, actions: list[str | None], max_actions: int
) -> tuple[list[str | None], list[tuple[str, float, bool]]]:
    """Play ``actions`` (None = ask the expert); returns actions taken and the trace."""
    opening = _reset(env, task, seed)
    taken: list[str | None] = []
    trace: list[tuple[str, float, bool]] = [(opening.text, 0.0, False)]
    for planned in actions[:max_actions]:
        action = planned if planned is not None else _expert(env)
        if action is None:
            action = "inventory"
        taken.append(action)
        step = _check_step(_call(f"step({action[:40]!r})", partial(env.step, action)), action)
        trace.append((step.observation, float(step.reward), step.done))
        if step.done:
            break
    return taken, trace


def check_env(env: TextEnv, *, episodes: int = 3, max_actions: int = 30, seed: int = 0) -> None:
    """Raise :class:`EnvCheckError` if ``env`` breaks the TextEnv contract.

    Checks types, the task catalogue, reset by task object and by id, that
    garbage actions and steps outside an episode yield observations, and that
    replaying a seeded mix of random, garbage and expert actions reproduces
    every observation, reward and done flag.
    """
    _require(isinstance(env, TextEnv), f"{type(env).__name__} is not a TextEnv")
    # Before any reset of ours: a fresh env must answer with an observation.
    # (On an env someone already reset this is just one more harmless step.)
    _check_step(_call("step before reset", lambda: env.step("inventory")), "inventory")
    catalogue = _check_catalogue(env)
    rng = random.Random(seed)
    forms = _call("action_forms()", env.action_forms)
    first_split = next(iter(catalogue))
    tasks = catalogue[first_split]
    task = tasks[0]

    by_object = _reset(env, task, seed)
    by_id = _reset(env, task.id, seed)
    _require(by_object.text == by_id.text, "reset by task object and by id differ")
    _reset(env, None, seed)

    for action in GARBAGE_ACTIONS:
        _reset(env, task, seed)
        step = _check_step(_call(f"step({action[:40]!r})", partial(env.step, action)), action)
        _require(step.reward == 0 or step.done, f"garbage action {action[:40]!r} was rewarded")

    words = sorted({w for t in tasks[:50] for w in t.goal.split()}) or ["thing"]
    _reset(env, task, seed)
    has_expert = _expert(env) is not None
    for index in range(episodes):
        chosen = tasks[rng.randrange(len(tasks))] if index else task
        episode_seed = rng.randrange(2**31)
        plan: list[str | None] = []
        for _ in range(max_actions):
            use_expert = has_expert and rng.random() < 0.6
            plan.append(None if use_expert else _random_action(rng, forms, words))
        taken, first = _run_episode(env, chosen, episode_seed, plan, max_actions)
        replay: list[str | None] = list(taken)
        again, second = _run_episode(env, chosen, episode_seed, replay, max_actions)
        _require(again == taken, f"task {chosen.id!r}: replay took different actions")
        for n, (a, b) in enumerate(zip(first, second, strict=True)):
            where = f"task {chosen.id!r}, seed {episode_seed}, step {n}"
            _require(a == b, f"{where}: replay differs: {a} != {b}")
        if has_expert:
            expert_first = [_reset(env, chosen, episode_seed).text, _expert(env)]
            expert_second = [_reset(env, chosen, episode_seed).text, _expert(env)]
            _require(expert_first == expert_second, f"task {chosen.id!r}: expert not deterministic")
        _check_after_done(env, chosen, episode_seed)


def _check_after_done(env: TextEnv, task: Task, seed: int) -> None:
    """Finish an episode (expert, else the step limit) and step past the end."""
    _reset(env, task, seed)
    for _ in range(env.max_steps + 5):
        action = _expert(env) or "inventory"
        step = _check_step(_call("step", partial(env.step, action)), action)
        if step.done:
            break
    else:
        raise EnvCheckError(f"task {task.id!r}: no done after max_steps={env.max_steps} steps")
    for action in ("inventory", "", "x" * 1000):
        after = _check_step(_call("step after done", partial(env.step, action)), action)
        _require(after.done, "a step after the episode ended reported done=False")
        _require(after.reward == 0, "a step after the episode ended gave a reward")
