"""MiniWoB++'s own summary of a recorded run: which pages and actions it played,
and its success under both rules.

A MiniWoB++ number means little without what was played: the same agent
scores differently on the Farama pages and on AutoManual's copies (the
checkbox pages alone score all or nothing there), and under the plain or the
published action semantics. Every step's info names both (``pages``,
``actions``; :class:`~lorekit.envs.miniwob.env.MiniWoBEnv`), so the summary
reads them from the run itself; a run recorded before steps named them played
the Farama pages with the run config's actions. The final step's info holds
the page's verdict under both success rules (``success_strict``,
``success_partial``), so both rates are given whichever rule the run used.

:func:`run_summary` is the env's hook (:mod:`lorekit.envs.summaries`): the
line under ``lorekit run`` / ``lorekit runs show`` and a section of the HTML
report.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lorekit.envs.crafter.runs import RunSource
    from lorekit.envs.summaries import RunSummary

_DEFAULTS = {"pages": "farama", "actions": "plain"}
"""What a run whose steps do not name them played: the env's defaults."""


def played(store: RunSource, run_id: str) -> dict[str, Any]:
    """The run's page sets and action semantics (each a sorted list, usually of
    one) and its finished episodes' success counts under both rules."""
    run = store.get_run(run_id)
    if run is None:
        raise ValueError(f"no run {run_id!r}")
    config = getattr(run, "config", None) or {}
    given = (config.get("env_kwargs") or {}) if isinstance(config, Mapping) else {}
    seen: dict[str, set[str]] = {"pages": set(), "actions": set()}
    episodes = strict = partial = 0
    for episode in store.episodes(run_id):
        infos = [s.info for s in store.steps(run_id, episode.episode_key) if s.info]
        for key, values in seen.items():
            values.update(str(i[key]) for i in infos if key in i)
        if episode.status == "error":
            continue
        episodes += 1
        last = infos[-1] if infos else {}
        strict += bool(last.get("success_strict"))
        partial += bool(last.get("success_partial"))
    for key, values in seen.items():
        if not values:
            values.add(str(given.get(key, _DEFAULTS[key])))
    return {
        "pages": sorted(seen["pages"]),
        "actions": sorted(seen["actions"]),
        "episodes": episodes,
        "strict": strict,
        "partial": partial,
    }


def _named(values: Iterable[str]) -> str:
    return ", ".join(values)


def run_summary(store: RunSource, run_id: str, notes: list[str]) -> RunSummary | None:
    """The MiniWoB++ section of one run (see :mod:`lorekit.envs.summaries`)."""
    try:
        p = played(store, run_id)
    except ValueError as exc:
        notes.append(f"MiniWoB++: {exc}")
        return None
    n = p["episodes"]
    rates = {"strict": p["strict"] / n, "partial": p["partial"] / n} if n else {}
    return {
        "section": "miniwob",
        "title": "MiniWoB++: pages, actions and success by rule",
        "columns": ["MiniWoB++ pages", "actions", "strict success", "partial success"],
        "cells": [
            _named(p["pages"]),
            _named(p["actions"]),
            f"{p['strict']}/{n}",
            f"{p['partial']}/{n}",
        ],
        "chart": "MiniWoB++ success by rule (strict: raw reward 1; partial: reward above 0)",
        "rates": rates,
        "figures": p,
    }
