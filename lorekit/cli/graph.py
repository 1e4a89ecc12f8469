"""``lorekit graph``: look at a graph spec, or run one pass of it.

``show`` prints Mermaid (and writes an image when Graphviz is installed);
``run`` builds the models from the flags or a run config, evaluates one pass
and prints each node's output in evaluation order. Mistakes the user can fix
(a bad spec, a missing ``--set`` value, a bad flag) exit with code 2 and one
line that says what to fix; a node that fails for good exits with 1.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
import yaml

from lorekit import yamlio
from lorekit.cli.errors import first_and_count
from lorekit.cli.options import ModelChoice, model_options
from lorekit.graph.errors import GraphError, NodeFailedError
from lorekit.graph.node import NodeFailure
from lorekit.graph.render import GraphvizMissing, to_mermaid, write_image
from lorekit.graph.spec import GraphSpec, load_spec
from lorekit.textsafe import safe_json, safe_text


class GraphUsageError(click.ClickException):
    """A mistake in the spec or the arguments; exit code 2."""

    exit_code = 2


def _spec(
    path: str, all_errors: bool = False, *, allow: Sequence[str] = (), load: bool = True
) -> GraphSpec:
    try:
        return load_spec(path, allow_hooks=allow, load_hooks=load)
    except GraphError as exc:
        raise GraphUsageError(_report(str(exc), all_errors)) from None


def _report(message: str, all_errors: bool) -> str:
    """The first problem and how many more (with a hint at the flag); with
    ``--all-errors``, every problem on its own line of stderr first."""
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    if len(lines) <= 1:
        return message
    if all_errors:
        for line in lines:
            click.echo(line, err=True)
        return f"{len(lines)} problems (listed above)"
    return f"{first_and_count(message)}; --all-errors lists them all"


all_errors_option = click.option(
    "--all-errors",
    "-A",
    "all_errors",
    is_flag=True,
    help="Print every problem of a bad spec, not only the first.",
)


def _values(items: Sequence[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise GraphUsageError(f"--set: expected KEY=VALUE, got {item!r}")
        try:
            out[key] = yamlio.safe_load(value) if value else ""
        except yaml.YAMLError:
            out[key] = value
        if not isinstance(out[key], str | list | dict | int | float | bool):
            out[key] = value  # dates and the like: keep what the user typed
    return out


@click.group("graph")
def graph() -> None:
    """Agent graphs (AgentKit): show or run a YAML graph spec."""


@graph.command("show")
@click.argument("spec_path", metavar="SPEC", type=click.Path(dir_okay=False))
@click.option(
    "--image",
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    help="Also write an image (format from the suffix: .png, .svg, .pdf); needs Graphviz.",
)
@all_errors_option
def show(spec_path: str, image: str | None, all_errors: bool) -> None:
    """Print the graph of SPEC as Mermaid text.

    Only draws: the spec's hooks are checked but never imported."""
    graph_ = _spec(spec_path, all_errors, load=False).build()
    if image is not None and not Path(image).resolve().parent.is_dir():
        raise GraphUsageError(f"--image: no folder {Path(image).parent} to write {image} into")
    click.echo(to_mermaid(graph_), nl=False)
    if image is not None:
        try:
            write_image(graph_, image)
        except GraphvizMissing as exc:
            raise click.ClickException(str(exc)) from None
        except OSError as exc:
            raise GraphUsageError(f"--image: cannot write {image}: {exc.strerror or exc}") from None
        except (RuntimeError, subprocess.SubprocessError) as exc:
            raise click.ClickException(f"--image: {exc}") from None
        click.echo(f"wrote {image}", err=True)


@graph.command("run")
@click.argument("spec_path", metavar="SPEC", type=click.Path(dir_okay=False))
@model_options
@click.option("--set", "sets", multiple=True, help="KEY=VALUE database value, repeatable.")
@click.option("--sequential", is_flag=True, help="Evaluate one node at a time.")
@click.option("--json", "as_json", is_flag=True, help="Print results, database and traces as JSON.")
@click.option(
    "--allow-hooks",
    "allow_hooks",
    multiple=True,
    metavar="DIR|PACKAGE",
    help="Also load hooks from this folder or package (default: only the spec's folder "
    "and LoreKit); repeatable.",
)
@all_errors_option
def run(
    spec_path: str,
    models: ModelChoice,
    sets: tuple[str, ...],
    sequential: bool,
    as_json: bool,
    allow_hooks: tuple[str, ...],
    all_errors: bool,
) -> None:
    """Run one pass of SPEC and print each node's output.

    Hooks load only from the spec's folder, LoreKit, and --allow-hooks."""
    from lorekit.cli.checks import (
        build_models,
        check_models,
    )
    from lorekit.config import ConfigError, RunConfig, apply_overrides, load_config

    config_path = models.config_path
    if models.model is None and config_path is None and not models.roles:
        raise GraphUsageError("graph run needs a model: pass --model (and --base-url) or --config")
    spec = _spec(spec_path, all_errors, allow=allow_hooks)
    try:
        db = spec.initial_db(_values(sets))
        cfg = load_config(config_path) if config_path else RunConfig()
        cfg = apply_overrides(
            cfg,
            model=models.model,
            base_url=models.base_url,
            roles=models.roles,
            request_timeout=models.request_timeout,
        )
    except (GraphError, ConfigError) as exc:
        raise GraphUsageError(_report(str(exc), all_errors)) from None
    check_models(cfg, {node.role for node in spec.nodes}, owner=f"graph {spec.name}", models=models)
    graph_ = spec.build(build_models(cfg, config_path=config_path))
    try:
        results = asyncio.run(graph_.evaluate(db, sequential=sequential))
        failed: NodeFailedError | None = None
    except NodeFailedError as exc:
        results, failed = exc.results, exc
    except GraphError as exc:  # a missing value, an edit a hook was not allowed to make
        raise GraphUsageError(_report(str(exc), all_errors)) from None
    report = graph_.last_report
    if as_json:
        payload = {
            "results": {k: _plain(v) for k, v in results.items()},
            "database": db,
            "trace": report.to_dict() if report else None,
        }
        click.echo(safe_json(json.dumps(payload, ensure_ascii=False, indent=2, default=str)))
    elif report is not None:
        for trace in report.traces:
            value = results.get(trace.key)
            shown = _plain(value) if value is not None else None
            text = shown if isinstance(shown, str) else json.dumps(shown, ensure_ascii=False)
            note = {"skipped": " (skipped: last result)", "blocked": " (blocked)"}.get(
                trace.status, f" (retries: {trace.retries})" if trace.retries else ""
            )
            if trace.status in ("failed", "blocked"):
                text = f"{trace.status.upper()}: {trace.error}"
            click.echo(safe_text(f"[{trace.key}]{note}\n{text}\n"))
    if failed is not None:
        raise click.ClickException(str(failed))


def _plain(value: Any) -> Any:
    return value.to_dict() if isinstance(value, NodeFailure) else value
