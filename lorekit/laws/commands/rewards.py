"""``lorekit laws rewards``: turn an experience into reward predicates.

Either the laws themselves become code (``--from-laws``: no model), or the
``rewarder`` role writes each predicate from the law's text: by default the
paper's Algorithm 1 (``--loop paper``: refined without outside feedback, the
last version kept), or our extension ``--loop checked`` (checked and refined
on the records, the most accurate kept). The result is a JSON
predicate set (source code and accuracy per achievement) that
``lorekit.laws.wrapper.make_reward_env(..., predicates=PredicateSet.load(FILE))``
and the RL trainer read. A killed model run resumes through the model cache.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import click

from lorekit.cli.console import console
from lorekit.cli.errors import UserError
from lorekit.cli.options import ModelChoice, cache_option, model_options
from lorekit.cli.prepare import prepare_config
from lorekit.cli.stores import hold_output


@click.command("rewards")
@click.argument("experience_spec", metavar="EXPERIENCE")
@click.option("--out", "-o", required=True, type=click.Path(dir_okay=False), help="JSON to write.")
@click.option(
    "--records", type=click.Path(dir_okay=False), default=None, help="Records JSONL to check on."
)
@click.option("--from-laws", is_flag=True, help="Compile the laws as they are (no model).")
@click.option("--refinements", type=click.IntRange(0, 20), default=3, show_default=True)
@click.option(
    "--loop",
    type=click.Choice(["paper", "checked"]),
    default="paper",
    show_default=True,
    help="paper: Algorithm 1 as published; checked: our loop with feedback on --records.",
)
@click.option("--only", multiple=True, help="Achievement to do (repeatable; default all).")
@click.option("--concurrency", type=click.IntRange(1, 64), default=4, show_default=True)
@cache_option
@model_options
def rewards_cmd(
    experience_spec: str,
    out: str,
    records: str | None,
    from_laws: bool,
    refinements: int,
    loop: str,
    only: tuple[str, ...],
    concurrency: int,
    cache: str | None,
    models: ModelChoice,
) -> None:
    """Reward predicates from EXPERIENCE (a saved experience JSON, or 'oracle')."""
    with hold_output(out, "-o"):  # two writers of one predicate file waste a run
        _write_rewards(experience_spec, out, records, from_laws, refinements, loop, only,
                       concurrency, cache, models)  # fmt: skip


def _write_rewards(
    experience_spec: str,
    out: str,
    records: str | None,
    from_laws: bool,
    refinements: int,
    loop: str,
    only: tuple[str, ...],
    concurrency: int,
    cache: str | None,
    models: ModelChoice,
) -> None:
    from lorekit.cli.checks import build_models, check_api_keys, check_cache
    from lorekit.laws.commands.scripted import refuse_simulate
    from lorekit.laws.experience import experience_named
    from lorekit.laws.records import read_records
    from lorekit.laws.rewarder import write_predicates
    from lorekit.laws.rewards import PredicateSet, predicates_from_experience

    try:
        experience = experience_named(experience_spec)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UserError(f"cannot read experience {experience_spec}: {exc} (give a saved "
                        "experience JSON, or 'oracle')") from None  # fmt: skip
    unknown = [a for a in only if a not in experience.laws]
    if unknown:
        raise UserError(f"--only: the experience has no law for {', '.join(unknown)}")
    if only:
        experience = experience.only(only)
    loaded = []
    if records is not None:
        try:
            loaded = read_records(records)
        except (OSError, ValueError, KeyError) as exc:
            raise UserError(f"--records: cannot read {records}: {exc}") from None
    if from_laws:
        pset: PredicateSet = predicates_from_experience(
            experience, loaded if records is not None else None
        )
    else:
        if not models.given:
            raise UserError("writing predicates needs a model: pass --model (and --base-url), "
                            "--config, or --from-laws")  # fmt: skip
        if records is None and loop == "checked":
            raise UserError("the rewarder checks its predicates on records: pass --records FILE")
        cfg, _ = prepare_config(models, cache=cache)
        refuse_simulate(
            cfg, "rewarder", "the laws have no scripted rewarder; compile the laws as they "
            "are with --from-laws (no model), or script its answers with --model scripted:FILE",
        )  # fmt: skip
        check_api_keys(cfg, config_path=models.config_path)
        check_cache(cfg, config_path=models.config_path)
        llm = build_models(cfg, config_path=models.config_path)["rewarder"]
        pset = asyncio.run(
            write_predicates(
                llm,
                experience,
                loaded,
                refinements=refinements,
                concurrency=concurrency,
                loop=loop,
            )
        )
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    pset.save(out)
    for row in pset.summary():
        accuracy = "-" if row["accuracy"] is None else f"{row['accuracy']:.0%}"
        console.print(
            f"{row['achievement']:<20} {row['origin']:<18} accuracy {accuracy:>5} "
            f"on {row['checked']:>3} records, {row['attempts']} attempts"
        )
    console.print(f"saved {len(pset.entries)} predicates to {out}")
