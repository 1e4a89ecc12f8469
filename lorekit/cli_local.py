"""``lorekit serve local`` and ``--model local``: a real model on this machine, offline.

Both start llama.cpp's OpenAI-compatible server (:mod:`lorekit.llm.local_server`)
with the GGUF file the ``local`` extra bundles (SmolLM2-135M-Instruct) or one
the user names. ``--model local`` in any command that takes model options
starts it on demand and stops it when the command exits.
"""

from __future__ import annotations

import atexit
import signal
import threading
from typing import Any

import click

from lorekit.cli_errors import UserError
from lorekit.llm.local_server import LOCAL_MODEL, LocalServer, LocalServerError

_started: dict[str, LocalServer] = {}
_lock = threading.Lock()


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
    from lorekit.cli import console, err_console

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


def use_local_model(cfg: Any) -> Any:
    """``cfg`` with every role whose model is ``local`` pointed at a started local server.

    The server starts once per process and stops at exit. A role that names
    ``local`` with its own ``base_url`` is refused: the name means "start it here".
    """
    wanted = [r for r, s in cfg.roles.items() if s.provider == "openai" and s.model == LOCAL_MODEL]
    if not wanted:
        return cfg
    for role in wanted:
        if cfg.roles[role].base_url is not None:
            raise UserError(
                f"role {role}: model 'local' starts a server on this machine; drop --base-url "
                "(or name the served model to use a server you started yourself)"
            )
    alias, base_url = local_server_url()
    data = cfg.model_dump()
    for role in wanted:
        data["roles"][role].update(model=alias, base_url=base_url)
    return type(cfg).model_validate(data)


def local_server_url() -> tuple[str, str]:
    """The bundled model's alias and base URL, starting its server once per process."""
    from lorekit.cli import err_console

    with _lock:
        server = _started.get(LOCAL_MODEL)
        if server is None or not server.running:
            try:
                server = LocalServer()
                err_console.print(f"starting the local model {server.alias} ...")
                server.start()
            except LocalServerError as exc:
                raise UserError(str(exc)) from None
            atexit.register(server.stop)
            _started[LOCAL_MODEL] = server
    return server.alias, server.base_url
