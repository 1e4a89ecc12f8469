"""``--unsafe-no-os-sandbox``: the one way a command runs model-written code without the OS layer.

Commands that may run model-written code (``run`` with AutoManual, ``automanual
build``, ``reproduce run``) refuse, before anything is recorded, where the
sandbox's OS layer (bubblewrap) is missing or cannot start: one line, exit
2, naming ``apt-get install bubblewrap`` and this option
(:func:`lorekit.sandbox.check_os_layer`). With the option the command runs
with ``$LOREKIT_UNSAFE_NO_OS_SANDBOX=1`` set for its duration (so processes
it starts, Ray actors, are told too) and prints the sandbox's warning as
``lorekit: warning: UNSAFE ...`` the moment a pool starts outside the OS
layer.
"""

from __future__ import annotations

import functools
import sys
import warnings
from collections.abc import Callable
from typing import Any, TextIO

import click

UNSAFE_HELP = (
    "Run model-written code (AutoManual's planner) even where the sandbox's OS layer "
    "(bubblewrap) is missing or cannot start, behind the in-process guard alone. UNSAFE: "
    "that guard does not contain fork bombs, signals or files written by code that gets "
    "past it. Without this option such runs are refused; get the OS layer with "
    "`apt-get install bubblewrap` (a pip install cannot bring it; `lorekit doctor` checks)."
)


def unsafe_sandbox_option(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add ``--unsafe-no-os-sandbox`` to a command and apply it while the command runs."""

    @click.option("--unsafe-no-os-sandbox", "unsafe_no_os_sandbox", is_flag=True, help=UNSAFE_HELP)
    @functools.wraps(command)
    def with_option(*args: Any, unsafe_no_os_sandbox: bool, **kwargs: Any) -> Any:
        from lorekit.sandbox.isolation import UnsafeSandboxWarning, unsafe_for_this_command

        with unsafe_for_this_command(unsafe_no_os_sandbox), warnings.catch_warnings():
            warnings.simplefilter("always", UnsafeSandboxWarning)
            warnings.showwarning = _shown_as_cli_line(warnings.showwarning, UnsafeSandboxWarning)
            return command(*args, **kwargs)

    return with_option


def _shown_as_cli_line(shown: Callable[..., None], category: type[Warning]) -> Callable[..., None]:
    """``warnings.showwarning`` that prints ``category`` as one ``lorekit: warning:`` line.

    Once per text: the check before the run and the pool it starts may both say it.
    """
    said: set[str] = set()

    def show(
        message: Warning | str,
        kind: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        if not issubclass(kind, category):
            shown(message, kind, filename, lineno, file, line)
            return
        text = " ".join(str(message).split())
        if text not in said:
            said.add(text)
            print(f"lorekit: warning: {text}", file=file or sys.stderr, flush=True)

    return show
