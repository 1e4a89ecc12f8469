"""``lorekit laws extract``: experience from interaction records with a model.

Models are chosen as for ``lorekit run`` (``--model``/``--base-url``,
``--role extractor=MODEL``, ``--config``); the role that answers is
``extractor`` (or the default role). Every call goes through the model cache
(read-write unless the config or ``--cache`` says otherwise), and progress is
saved next to the output after every step
(:func:`lorekit.laws.extract_progress.progress_path`), so after a kill or a
model error the same command continues where it stopped and, with the cache,
ends with the result an uninterrupted run gives.

``--simulate careful`` (or ``careless``) answers with a scripted extractor
(:mod:`lorekit.laws.testing`) instead of a model: no server, no cache, no
cost. It checks the pipeline and shows what one-record-at-a-time revision
reaches; it measures no model.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import click

from lorekit.cli.console import console
from lorekit.cli.errors import Interrupted, RunFailed, UserError
from lorekit.cli.options import ModelChoice, cache_option, model_options
from lorekit.cli.prepare import prepare_config
from lorekit.cli.stores import hold_output


def _read(records_path: str) -> list[Any]:
    from lorekit.laws.record_format import NoRecords, read_nonempty_records

    try:
        return list(read_nonempty_records(records_path))
    except NoRecords as exc:
        raise UserError(str(exc)) from None
    except (ValueError, KeyError, TypeError) as exc:
        raise UserError(
            f"{records_path}: not a file of law records ({type(exc).__name__}: {exc}); "
            "make one with `lorekit laws collect`"
        ) from None


def _achievements(value: str | None) -> list[str] | None:
    if value is None:
        return None
    names = [n.strip() for n in value.split(",") if n.strip()]
    if not names:
        raise UserError("--achievements: expected names separated by commas, e.g. collect_wood")
    return names


@click.command("extract")
@click.argument("records_path", metavar="RECORDS", type=click.Path(dir_okay=False, exists=True))
@click.option(
    "--out",
    "-o",
    "out",
    required=True,
    type=click.Path(dir_okay=False),
    help="Where to write the experience (JSON).",
)
@model_options
@cache_option
@click.option(
    "--achievements",
    default=None,
    metavar="A,B,...",
    help="Only these achievements (default: every one the records cover).",
)
@click.option(
    "--max-attempts",
    type=click.IntRange(1, 20),
    default=3,
    show_default=True,
    help="Answers per step before an achievement is recorded as failed.",
)
@click.option(
    "--jobs",
    type=click.IntRange(1, 64),
    default=4,
    show_default=True,
    help="Achievements worked on at once.",
)
@click.option("--fresh", is_flag=True, help="Discard saved progress and start over.")
@click.option(
    "--simulate",
    type=click.Choice(["careful", "careless"]),
    default=None,
    help="Answer with a scripted extractor instead of a model (no server): careful, or "
    "careless (a seeded wrong answer in five). A check of the pipeline, not of a model.",
)
def extract(
    records_path: str,
    out: str,
    models: ModelChoice,
    cache: str | None,
    achievements: str | None,
    max_attempts: int,
    jobs: int,
    fresh: bool,
    simulate: str | None,
) -> None:
    """Mine experience (costs, gains, preconditions per action) from RECORDS with a model."""
    from lorekit.cli.checks import build_models, check_models
    from lorekit.laws.commands.scripted import refuse_simulate
    from lorekit.laws.extract import ROLE, ExtractError, Extractor
    from lorekit.laws.extract_progress import ProgressMismatch, progress_path
    from lorekit.llm.accounting import UsageLedger
    from lorekit.llm.errors import LLMError

    if simulate is not None and (models.given or models.base_url or cache is not None):
        raise UserError(
            "--simulate answers with a scripted extractor: drop --model/--base-url/--role/"
            "--config/--cache"
        )
    if simulate is None and not models.given:
        raise UserError(
            "extraction needs a model: pass --model (and --base-url) or --config "
            "(or --simulate careful for the scripted extractor)"
        )
    config_path = models.config_path
    cfg: Any = None
    if simulate is None:
        if cache is None and config_path is None:
            cache = "read-write"
        cfg, _store_setting = prepare_config(models, cache=cache)
        refuse_simulate(
            cfg, ROLE, "the laws' scripted extractors are chosen with --simulate careful "
            "(or careless), without --model",
        )  # fmt: skip
        check_models(cfg, {ROLE, cfg.default_role}, owner="laws extract", models=models)
    with hold_output(out, "-o"):  # a second extraction into it would pay twice
        records = _read(records_path)
        sidecar = progress_path(out)
        if fresh:
            sidecar.unlink(missing_ok=True)
        if simulate is not None:
            from lorekit.laws.testing import simulated_roles

            ledger = UsageLedger({})
            roles = simulated_roles(simulate).metered(ledger)
        else:
            ledger = UsageLedger(cfg.prices())
            roles = build_models(cfg, config_path=config_path).metered(ledger)
        try:
            extractor = Extractor(roles, max_attempts=max_attempts, jobs=jobs, progress=sidecar)
            experience = asyncio.run(extractor.extract(records, _achievements(achievements)))
        except (ExtractError, ProgressMismatch) as exc:
            raise UserError(str(exc)) from None
        except LLMError as exc:
            raise RunFailed(
                f"the extraction stopped: {exc}; progress is saved in {sidecar}: "
                "rerun the same command to continue"
            ) from None
        except KeyboardInterrupt:
            raise Interrupted(
                f"interrupted; progress is saved in {sidecar}: rerun the same command to continue"
            ) from None
        experience.meta["records"] = str(records_path)
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        experience.save(out)
    meta = experience.meta
    failures: dict[str, Any] = meta["failures"]
    for name, law in experience.laws.items():
        console.print(
            f"{name}: requires {law.requires} nearby {law.nearby} faced {law.faced} "
            f"costs {law.costs} gains {law.gains}",
            markup=False,
            highlight=False,
        )
    console.print(
        f"wrote {out}: {len(experience.laws)} laws from {meta['calls']} model calls "
        f"({meta['retries']} retried answers), source {experience.source}",
        markup=False,
        highlight=False,
    )
    spent = ledger.total()
    console.print(
        f"this run: {spent.calls} model calls ({spent.cache_hits} from the cache), "
        f"{spent.tokens_text} tokens, ${spent.cost_usd:.4f}",
        markup=False,
        highlight=False,
    )
    if failures:
        detail = "; ".join(
            f"{name} at {f['step']}: {f['problems'][0] if f['problems'] else '?'}"
            for name, f in failures.items()
        )
        raise RunFailed(
            f"{len(failures)} achievement(s) gave no usable answer within {max_attempts} "
            f"attempts ({detail}); details in {out} under meta.failures; rerun with a larger "
            "--max-attempts to ask their failed steps again (finished ones are kept)"
        )
