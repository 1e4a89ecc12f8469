"""``reproduce run --model local``: rows that fit the bundled model's context, or none.

The bundled small model reads at most ``LOCAL_CONTEXT`` tokens, prompt and answer
together. A ReAct row at the paper's 60 turns outgrows that after a few dozen
turns, and the server's HTTP 400 came 8 minutes into the run. Before anything
starts (the local server included, so this needs no ``local`` extra), each row's
longest prompt is worked out from its cost estimate (its first prompt, what a
turn adds with answers as long as the agent allows, its turn cap:
:func:`lorekit.eval.cost_range.longest_prompt`); a row that does not fit is
refused with the turn cap that would fit (``--agent-opt max_turns=N``, or
``executor_turns`` for ADaPT and its baselines).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from lorekit.cli.errors import UserError

TURN_OPTIONS = ("max_turns", "executor_turns")
"""Agent options that cap the turns of an acting run, in the order they are tried."""
ANSWER_TOKENS = 256
"""Tokens an answer may take where neither the row nor its agent's calls set
``max_tokens`` (the agents' usual default)."""
MARGIN = 1.1
"""The estimate counts about 4 characters a token; the model's tokenizer may count
more, so a prompt must fit in the context divided by this."""


def local_roles(models: Any) -> list[str]:
    """The roles that ``--model local`` (or a config or ``--role`` naming it) gives the
    bundled model, found without starting it."""
    from lorekit.config import RunConfig, apply_overrides, load_config
    from lorekit.llm.local_server import LOCAL_MODEL

    cfg = load_config(models.config_path) if models.config_path else RunConfig()
    cfg = apply_overrides(cfg, model=models.model, base_url=models.base_url, roles=models.roles)
    return [r for r, s in cfg.roles.items() if s.provider == "openai" and s.model == LOCAL_MODEL]


def check_local_fit(exp: Any, rows: Sequence[Any], models: Any, planned: int) -> None:
    """Refuse (one line, exit 2) a row whose prompt would outgrow the bundled model's
    context at its turn cap; see the module docstring."""
    from lorekit.agents import agent_parameters, needs_model
    from lorekit.cli.reproduce_cost import measure_experiment
    from lorekit.cli.reproduce_estimates import load_saved, saved_for
    from lorekit.eval.cost_range import longest_prompt, turns_that_fit
    from lorekit.llm.local_server import LOCAL_CONTEXT

    if not local_roles(models):
        return
    wanting = [r for r in rows if needs_model(r.agent)]
    saved = load_saved().get(exp.id)
    est = None if saved is None else saved_for(exp, wanting, saved.planned)
    if est is None and wanting:
        est = measure_experiment(exp, wanting, planned, exp.split)
    limit = LOCAL_CONTEXT / MARGIN
    misfits: list[str] = []
    caps: dict[str, int] = {}
    for row in wanting:
        span = est.rows.get(row.id) if est is not None else None
        if span is None or not span.context:
            continue
        answer = int(
            row.options.get("max_tokens") or span.context.get("answer_cap") or ANSWER_TOKENS
        )
        cap = next((k for k in TURN_OPTIONS if k in agent_parameters(row.agent)), None)
        turns = row.options.get(cap) if cap is not None else None
        longest = longest_prompt(span.context, answer, turns if isinstance(turns, int) else None)
        if longest <= limit:
            continue
        reached = turns if isinstance(turns, int) else int(span.context.get("turns", 1))
        misfits.append(
            f"{row.id!r} grows to about {longest:,.0f} tokens at {reached} turns "
            f"(answers of up to {answer} tokens)"
        )
        if cap is not None:  # one cap per option, the smallest any row needs
            fits = turns_that_fit(span.context, answer, limit)
            caps[cap] = min(caps.get(cap, fits), fits)
        else:
            misfits[-1] += " (its agent has no turn cap to lower)"
    if not misfits:
        return
    fix = " ".join(f"--agent-opt {k}={v}" for k, v in caps.items())
    subject = (
        f"row {misfits[0].split(' ', 1)[0]} does not fit the bundled model: its prompt "
        + misfits[0].split(" ", 1)[1]
        if len(misfits) == 1
        else "rows do not fit the bundled model: " + "; ".join(misfits)
    )
    raise UserError(
        f"--model local: {subject}, over the model's {LOCAL_CONTEXT:,}-token context "
        "with a margin; "
        + (f"cap the turns with {fix}, or " if fix else "")
        + "use a model with a longer context"
    )


def with_agent_opts(rows: list[Any], agent_opt: tuple[str, ...]) -> list[Any]:
    """The rows with ``--agent-opt`` over the options of each whose agent takes the key;
    a key no chosen row's agent takes is a mistake, not something to ignore."""
    from lorekit.agents import agent_parameters
    from lorekit.cli.prepare import kv

    given = kv(agent_opt, "--agent-opt")
    for key in given:
        if not any(key in agent_parameters(r.agent) for r in rows):
            agents = ", ".join(dict.fromkeys(r.agent for r in rows))
            raise UserError(f"--agent-opt: no chosen row's agent ({agents}) takes {key!r}")
    return [
        replace(
            r,
            options={
                **r.options,
                **{k: v for k, v in given.items() if k in agent_parameters(r.agent)},
            },
        )
        for r in rows
    ]


def option_changes(rows: Sequence[Any], changed: Sequence[Any]) -> list[str]:
    """How ``--agent-opt`` changed each row's options, one phrase each (a run with a
    turn cap the paper did not use is not the experiment's setup: it gets no verdict)."""
    out = []
    for row, new in zip(rows, changed, strict=True):
        for key, value in new.options.items():
            if key not in row.options:
                out.append(f"row {row.id}: {key}={value!r}, the experiment sets none")
            elif row.options[key] != value:
                out.append(f"row {row.id}: {key}={value!r}, the experiment's {row.options[key]!r}")
    return out
