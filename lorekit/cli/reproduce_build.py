"""The stage before the rows: AutoManual's building and formulating, chained.

An experiment names its builds (``builds:`` in its file: the variant, the split
built on, tasks per type); a row that tests with one names it (``build:``).
``reproduce run`` plays each build its chosen rows need as run
``RUN_ID.build-ID`` through :func:`lorekit.cli.automanual_build.run_build` (so
an existing build of that id is resumed, not replayed), formulates the manual
of an ``automanual`` build once, and hands the rows ``manual=RUN_ID.build-ID``.
With ``--simulate`` the build's four roles are the scripted AutoManual models.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from lorekit.cli.console import err_console, show_progress
from lorekit.cli.errors import RunFailed, UserError
from lorekit.cli.options import HarnessOptions, ModelChoice
from lorekit.cli.prepare import prepare_config, prepare_tasks, with_defaults


def run_builds(
    exp: Any,
    rows: Sequence[Any],
    *,
    models: ModelChoice,
    harness: HarnessOptions,
    env_opt: Sequence[str],
    prefix: str,
    simulate: bool,
) -> dict[str, str]:
    """Build id -> the run id of its finished build, for the builds ``rows`` name."""
    needed = [b for b in exp.builds if any(r.build == b.id for r in rows)]
    if not needed:
        return {}
    from lorekit.agents.automanual.profiles import profile_for
    from lorekit.agents.simulated import simulated_roles
    from lorekit.cli.automanual_build import run_build
    from lorekit.cli.checks import build_models

    cfg, _ = prepare_config(models, cache=harness.cache, store=harness.store)
    try:
        profile = profile_for(exp.env)
    except ValueError as exc:
        raise UserError(f"experiment {exp.id!r}: {exc}") from None
    built: dict[str, str] = {}
    for build in needed:
        rid = f"{prefix}.build-{build.id}"
        per_type = (exp.simulate_per_type if simulate else None) or build.per_type
        err_console.print(
            f"[bold]{exp.id}[/]: build {build.id} ({build.variant}, {per_type} per type "
            f"on {build.split}) as run {rid}"
        )
        options = with_defaults(env_opt, dict(profile.env_options))
        env_kwargs, tasks, provenance = prepare_tasks(exp.env, options, None, build.split)
        roles = (
            simulated_roles(exp.env, env_kwargs, "automanual")
            if simulate
            else build_models(cfg, config_path=models.config_path)
        )
        outcome = asyncio.run(
            run_build(
                cfg.store,
                env_name=exp.env,
                env_kwargs=env_kwargs,
                tasks=tasks,
                roles=roles,
                run_id=rid,
                variant=build.variant,
                per_type=per_type,
                seed=harness.seed,
                config={"experiment": exp.id, "tasks_from": provenance, "simulated": simulate},
                episode_timeout_s=harness.timeout_s,
                retry_errors=harness.retry_errors,
                progress=err_console if show_progress(harness.progress) else False,
            )
        )
        if outcome.errors:
            raise RunFailed(
                f"build {rid}: {outcome.errors} episodes ended in an error; resume it with "
                f"--run-id {prefix} --retry-errors"
            )
        if build.variant == "automanual":
            _formulate(str(cfg.store), rid, roles, cfg.prices(), profile)
        built[build.id] = rid
    return built


def _formulate(store: str, build: str, roles: Any, prices: Any, profile: Any) -> None:
    """The build's manual, unless one is saved already (a resumed reproduction)."""
    from lorekit.agents.automanual.formulator import Formulator, FormulatorError
    from lorekit.agents.automanual.manuals import latest_manual, save_manual
    from lorekit.agents.automanual.rules import RuleSystem
    from lorekit.agents.automanual.store import open_db
    from lorekit.eval.store import RunStore
    from lorekit.llm.accounting import UsageLedger

    db = open_db(store)
    try:
        system = RuleSystem(db, build)
        rules = system.rules()
        if latest_manual(db, build) is not None or not rules:
            return  # formulated before; or no rules, and the rows test with skills alone
        with RunStore(store) as runs:
            metered = roles.metered(
                UsageLedger(prices), lambda record: runs.add_run_llm_call(build, record)
            )
            world = f"{profile.title}. The agent's code calls:\n{profile.api_text}"
            try:
                manual = asyncio.run(
                    Formulator(metered, world=world).formulate(rules, rules_version=system.version)
                )
            except FormulatorError as exc:
                raise RunFailed(
                    f"build {build}: the formulator gave no usable manual: {exc}"
                ) from None
        save_manual(db, build, manual)
    finally:
        db.close()
