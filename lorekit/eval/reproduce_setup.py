"""What a reproduction's row ran with, and whether that is what the experiment measured.

A figure is only comparable with the paper's when it was measured the same way:
the same split, the same env options, the same agent options. ``--split dev
--env-opt max_steps=5`` plays, but its figures are not set beside the paper's
as if they were, and the saved comparison says what was run instead of the
experiment's name alone. A run id that resumes a row must also resume the same
setup: its stored setup is checked before anything plays, so that episodes of
two setups never end up counted together.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

SETUP_KEY = "reproduce"
"""Where a row's setup is kept in its run's stored config."""


@dataclass(frozen=True, slots=True)
class Setup:
    """One row's setup: the fields that must agree for two runs to be one measurement."""

    experiment: str
    row: str
    agent: str
    split: str
    env_options: Mapping[str, Any] = field(default_factory=dict)
    options: Mapping[str, Any] = field(default_factory=dict)
    simulate: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "experiment": self.experiment,
            "row": self.row,
            "agent": self.agent,
            "split": self.split,
            "env_options": _plain(self.env_options),
            "options": _plain(self.options),
            "simulate": self.simulate,
        }


def _plain(values: Mapping[str, Any]) -> dict[str, Any]:
    """Values as JSON reads them back, so that a stored setup compares equal to a new one."""
    out: dict[str, Any] = json.loads(json.dumps(dict(values), sort_keys=True, default=str))
    return out


def _text(value: Any) -> str:
    return json.dumps(value, default=str) if not isinstance(value, str) else value


def from_experiment(
    split: str,
    env_options: Mapping[str, Any],
    given_split: str | None,
    given_env: Mapping[str, Any],
    env_default: Callable[[str], Any],
) -> list[str]:
    """How a command line's ``--split`` and ``--env-opt`` change the experiment's setup,
    one phrase each (empty when they do not). An option the experiment does not set
    changes nothing when it is given the env's own default (``env_default(key)``, which
    returns :data:`inspect.Parameter.empty` for none)."""
    out = []
    if given_split is not None and given_split != split:
        out.append(f"split {given_split}, the experiment's {split}")
    theirs = _plain(env_options)
    for key, value in changed_options(env_options, given_env, env_default).items():
        was = (
            f"the experiment's {_text(theirs[key])}"
            if key in theirs
            else "the experiment sets none"
        )
        out.append(f"env option {key}={_text(value)}, {was}")
    return out


def changed_options(
    env_options: Mapping[str, Any],
    given_env: Mapping[str, Any],
    env_default: Callable[[str], Any],
) -> dict[str, Any]:
    """The options of ``given_env`` that change ``env_options``: another value, or one
    the experiment leaves to the env given another value than the env's default."""
    theirs = _plain(env_options)
    out = {}
    for key, value in _plain(given_env).items():
        if key in theirs:
            if theirs[key] != value:
                out[key] = value
            continue
        default = env_default(key)
        if default is inspect.Parameter.empty or _plain({"v": default})["v"] != value:
            out[key] = value
    return out


def differences(stored: Mapping[str, Any], now: Setup) -> list[str]:
    """What differs between a row's run as stored (its config) and the setup about to
    play it. A run stored before setups were recorded is checked on what its config
    holds: its split and the env options both name."""
    mine = now.to_dict()
    setup = stored.get(SETUP_KEY)
    if not isinstance(setup, Mapping):
        kwargs = stored.get("env_kwargs")
        kwargs = _plain(kwargs) if isinstance(kwargs, Mapping) else {}
        setup = {"env_options": {k: v for k, v in kwargs.items() if k in mine["env_options"]}}
        if isinstance(stored.get("split"), str):
            setup["split"] = stored["split"]
        mine = {**mine, "env_options": {k: mine["env_options"][k] for k in setup["env_options"]}}
    out = []
    for key in ("agent", "split", "simulate"):
        if key in setup and setup[key] != mine[key]:
            out.append(f"{key} was {_text(setup[key])}, now {_text(mine[key])}")
    for key in ("env_options", "options"):
        if key not in setup or not isinstance(setup[key], Mapping):
            continue
        was, new = dict(setup[key]), mine[key]
        label = "env option" if key == "env_options" else "option"
        for name in sorted(set(was) | set(new)):
            if name not in was or name not in new or was[name] != new[name]:
                old = _text(was[name]) if name in was else "unset"
                cur = _text(new[name]) if name in new else "unset"
                out.append(f"{label} {name} was {old}, now {cur}")
    return out
