"""S-Agents' rows in ``lorekit reproduce``: each row is one ``team run``.

A team is not an agent the harness can give one set of models: each episode
needs its own models (its members keep state between calls), its own clock,
and the env played inline, tick by tick. So the ``team`` agent's registration
names this function as its row player (``play=`` in
:func:`lorekit.agents.teams.plugin.register`), and ``lorekit reproduce`` hands
it the row instead of playing the row itself. The row's options are ``team
run``'s (``org``, ``leaves``, ``size``, ``mode``, ``clock``, ``max_time_s``,
``cutoff_s``, ``seconds_per_tick``, ``working_root``); ``--simulate`` plays the
team study's scripted models on the virtual clock, anything else the command's
models on the wall clock.
"""

from __future__ import annotations

from typing import Any

from lorekit.agents.teams.commands.options import OrgChoice
from lorekit.agents.teams.commands.team import play_team
from lorekit.cli.options import HarnessOptions, ModelChoice, TaskChoice


def play_row(
    exp: Any,
    row: Any,
    *,
    run_id: str,
    models: ModelChoice,
    harness: HarnessOptions,
    tasks: TaskChoice,
    simulate: bool,
) -> Any:
    """Play (or resume) ``row`` of ``exp`` as team run ``run_id``; returns what
    :func:`lorekit.cli.run.play` returns (:class:`~lorekit.cli.run.Played`)."""
    from dataclasses import replace

    from lorekit.cli.run import Played

    options = dict(row.options)
    clock = "virtual" if simulate else str(options.pop("clock", None) or "wall")
    options.pop("clock", None)
    choice = OrgChoice(clock=clock, **options)
    ids = [t for t in (tasks.tasks or "").split(",") if t]
    rid, count, errored, _ = play_team(
        choice,
        ids,
        tasks.split,
        tasks.episodes,
        models,
        simulate,
        tasks.env_opt,
        replace(harness, run_id=run_id),
    )
    first = errored[0] if errored else None
    return Played(
        rid,
        count,
        len(errored),
        None if first is None else first.error,
        None if first is None else first.episode_key,
    )


def scripted_team(env_kwargs: Any) -> Any:
    """The team study's scripted models (:func:`lorekit.agents.teams.testing.simulated_roles`),
    as the scripted-models registry names them for ``--simulate``; a team row plays its
    own per-episode set through :func:`play_row`, so this one only describes them."""
    from lorekit.agents.teams.testing import simulated_roles

    return simulated_roles()
