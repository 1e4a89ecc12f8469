"""``--model local``: a real model on this machine, offline, started on demand.

Any command that takes model options starts llama.cpp's OpenAI-compatible
server (:mod:`lorekit.llm.local_server`) with the GGUF file the ``local``
extra bundles when a role names the model ``local``, and stops it when the
command exits. ``lorekit serve local`` (:mod:`lorekit.cli.serve`) starts one
and waits.
"""

from __future__ import annotations

import atexit
import threading
from typing import Any

from lorekit.cli.console import err_console
from lorekit.cli.errors import UserError

_started: dict[str, Any] = {}
_lock = threading.Lock()


def use_local_model(cfg: Any) -> Any:
    """``cfg`` with every role whose model is ``local`` pointed at a started local server.

    The server starts once per process and stops at exit. A role that names
    ``local`` with its own ``base_url`` is refused: the name means "start it here".
    """
    from lorekit.llm.local_server import LOCAL_MODEL

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
    from lorekit.llm.local_server import LOCAL_MODEL, LocalServer, LocalServerError

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


def served_here(base_url: str | None) -> bool:
    """Whether ``base_url`` is the bundled model's server this process started, so a
    summary can say a tiny local model answered, not the model a paper used."""
    from lorekit.llm.local_server import LOCAL_MODEL

    server = _started.get(LOCAL_MODEL)
    return base_url is not None and server is not None and server.base_url == base_url
