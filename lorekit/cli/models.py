"""``lorekit models check``: one request to a model endpoint, to see that it answers.

Reports the answer, latency and tokens, or the model error as one line with
what to check (exit 1); a bad URL or a missing key is a usage error (exit 2).
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

import click
from rich.table import Table

from lorekit.cli.console import console
from lorekit.cli.errors import RunFailed, UserError, model_error_hint, with_hint
from lorekit.cli.options import positive_seconds
from lorekit.llm.base import RequestParams


@click.group()
def models() -> None:
    """Check model endpoints."""


@models.command("check")
@click.option("--model", "-m", required=True, help="Model name as the server knows it.")
@click.option(
    "--base-url", default=None, help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1."
)
@click.option("--api-key-env", default="OPENAI_API_KEY", show_default=True)
@click.option("--prompt", default="Reply with the single word: pong", show_default=True)
@click.option(
    "--timeout",
    "--request-timeout",
    "timeout_s",
    type=float,
    callback=positive_seconds,
    default=30.0,
    show_default=True,
)
@click.option("--attempts", type=click.IntRange(min=1, max=20), default=2, show_default=True)
def models_check(
    model: str,
    base_url: str | None,
    api_key_env: str,
    prompt: str,
    timeout_s: float,
    attempts: int,
) -> None:
    """Send one request and print the answer, latency and tokens."""
    from lorekit.llm import LLMError
    from lorekit.llm.openai_compat import DEFAULT_BASE_URL, OpenAICompatLLM, is_local_url
    from lorekit.llm.retry import RetryPolicy

    if base_url is not None and not base_url.startswith(("http://", "https://")):
        raise UserError(f"--base-url: expected an http:// or https:// URL, got {base_url!r}")
    if model == "local" and base_url is None:  # start the bundled model for this check
        from lorekit.cli.local_model import local_server_url

        model, base_url = local_server_url()
    url = base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
    if not is_local_url(url) and not (
        os.environ.get(api_key_env) or os.environ.get("OPENAI_API_KEY")
    ):
        raise UserError(
            f"model {model!r} at {url} needs an API key: set the {api_key_env} environment "
            "variable (or name another one with --api-key-env); servers on localhost need no key"
        )
    try:
        llm = OpenAICompatLLM(
            model,
            base_url=base_url,
            api_key=os.environ.get(api_key_env),
            timeout_s=timeout_s,
            retry=RetryPolicy(max_attempts=attempts, base_delay_s=0.5),
        )
    except (LLMError, ValueError) as exc:
        raise UserError(str(exc)) from None

    async def one() -> Any:
        try:
            return await llm.complete(prompt, RequestParams(max_tokens=64))
        finally:
            await llm.aclose()

    try:
        out = asyncio.run(one())
    except LLMError as exc:
        raise RunFailed(with_hint(str(exc), model_error_hint(exc))) from None
    table = Table(show_header=False, box=None)
    table.add_row("endpoint", llm.endpoint)
    table.add_row("model", out.model)
    table.add_row("answer", repr(out.text))
    table.add_row("latency", f"{out.latency_s * 1000:.0f} ms")
    u = out.usage
    guess = "  (~ estimated: the server sent no usage)" if u.estimated else ""
    table.add_row("tokens", f"{u.prompt_tokens} prompt + {u.completion_tokens} completion{guess}")
    console.print(table)
