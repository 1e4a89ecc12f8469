"""``lorekit serve local``: a real model on this machine, offline, until Ctrl-C.

It starts llama.cpp's OpenAI-compatible server (:mod:`lorekit.llm.local_server`)
with the GGUF file the ``local`` extra bundles (SmolLM2-135M-Instruct) or one
the user names. ``--model local`` in other commands starts the same server on
demand (:mod:`lorekit.cli.local_model`).
"""

from __future__ import annotations

import signal
import threading

import click

from lorekit.cli.console import console, err_console
from lorekit.cli.errors import UserError
from lorekit.llm.local_server import LocalServer, LocalServerError


@click.group("serve")
def serve() -> None:
    """Serve models for agents to use."""


@serve.command("local")
@click.option(
    "--model",
    "model_path",
    default=None,
    type=click.Path(exists=True, dir_okay=False),
    help="A GGUF file (default: the bundled SmolLM2-135M-Instruct).",
)
@click.option("--port", type=click.IntRange(0, 65535), default=0, help="0: any free port.")
@click.option("--n-ctx", type=click.IntRange(min=256), default=8192, show_default=True)
@click.option("--threads", type=click.IntRange(min=1), default=None)
def serve_local(model_path: str | None, port: int, n_ctx: int, threads: int | None) -> None:
    """Start an OpenAI-compatible server on 127.0.0.1 and wait (Ctrl-C stops it)."""
    try:
        server = LocalServer(model_path, port=port, n_ctx=n_ctx, threads=threads)
        err_console.print(f"starting {server.alias} on 127.0.0.1:{server.port} ...")
        base_url = server.start()
    except LocalServerError as exc:
        raise UserError(str(exc)) from None
    console.print(f"--base-url {base_url} --model {server.alias}")
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        while server.running and not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    err_console.print("stopped")
