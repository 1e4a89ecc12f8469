"""How the ``lorekit`` command line ends: one line on stderr and an exit code.

Every failure a user can cause ends as ``lorekit: error: WHAT (HOW TO FIX)``
with exit code 2 (bad arguments, config, role, missing key or extra, unusable
path) or 1 (the run itself failed: a model error, errored episodes, an early
stop). Commands raise :class:`UserError` or :class:`RunFailed` for what they
detect themselves; :func:`run_cli` turns the remaining known error types into
the same one line, so a mistake nobody anticipated in a command still reads
well.

Anything else is a bug in LoreKit. It also ends as one line (exit 1), which
names the file its traceback was saved to; ``--debug`` or ``LOREKIT_DEBUG=1``
print the traceback of every error raised as an exception instead (usage
errors detected by the commands stay one line), with the same exit code.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import tempfile
import traceback
from collections.abc import Sequence
from typing import NoReturn

import click

EXIT_RUN_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141

_debug = False

_PATH_ERRORS = (
    FileNotFoundError,
    PermissionError,
    IsADirectoryError,
    NotADirectoryError,
    FileExistsError,
)


class UserError(click.ClickException):
    """An error the user can fix; shown as one line, exit code 2."""

    exit_code = EXIT_USAGE


class RunFailed(click.ClickException):
    """The command ran but its work failed (a model error, errored episodes); exit 1."""

    exit_code = EXIT_RUN_FAILED


class Interrupted(click.ClickException):
    """The user pressed Ctrl-C; the message says how to resume; exit 130."""

    exit_code = EXIT_INTERRUPTED


def set_debug(on: bool) -> None:
    """``lorekit --debug``: print tracebacks instead of one-line errors."""
    global _debug
    _debug = on


def debug_enabled() -> bool:
    return _debug or os.environ.get("LOREKIT_DEBUG", "").strip() not in ("", "0")


def model_error_hint(error: BaseException) -> str:
    """What to check for a model error, in CLI terms (flags, variables)."""
    from lorekit.llm.errors import (
        LLMAuthError,
        LLMConnectionError,
        LLMRateLimitError,
        LLMRequestError,
        LLMResponseError,
        LLMServerError,
        LLMTimeoutError,
    )

    status = getattr(error, "status", None)
    if isinstance(error, LLMAuthError):
        if "key" in str(error).lower():
            return ""  # the model layer's message already says which key to check
        return "check the API key (the api_key_env variable, OPENAI_API_KEY by default)"
    if isinstance(error, LLMConnectionError):
        return "is the server running, and is --base-url right?"
    if isinstance(error, LLMTimeoutError):
        return "the server did not answer in time; is --base-url right, is it overloaded?"
    if isinstance(error, LLMRequestError) and status == 404:
        return "check --model, and that --base-url ends in /v1"
    if isinstance(error, LLMRequestError):
        return "the server refused the request; check --model and the server's log"
    if isinstance(error, LLMRateLimitError):
        return "rate limited or out of quota; check the account, or lower --concurrency"
    if isinstance(error, LLMServerError):
        return "the server failed; check its log"
    if isinstance(error, LLMResponseError):
        return "the answer was not an OpenAI-style completion; is --base-url an OpenAI API?"
    return ""


def with_hint(message: str, hint: str) -> str:
    return f"{message} ({hint})" if hint else message


MAX_LINE = 600
"""Longer messages keep their start and their end (where the status, the
attempt count and the hint are) with the middle elided."""


def _one_line(message: str) -> str:
    """Any message as one line: whitespace runs (newlines of a server's HTML
    error page, say) become single spaces, and the middle of a very long
    message is elided. Control characters (a model's escape sequences quoted in
    a message) are printed as escapes."""
    from lorekit.textsafe import safe_line

    text = safe_line(" ".join(message.split())) or "error"
    if len(text) > MAX_LINE:
        text = f"{text[: MAX_LINE // 2]} ... {text[-(MAX_LINE // 2 - 5) :]}"
    return text


def first_and_count(message: str) -> str:
    """A list of problems (one per line) as its first one and how many more."""
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    if len(lines) <= 1:
        return message
    return f"{lines[0]} (+{len(lines) - 1} more)"


def fail(message: str, code: int) -> NoReturn:
    """Print ``lorekit: error: MESSAGE`` (as one line) and exit with ``code``."""
    print(f"lorekit: error: {_one_line(message)}", file=sys.stderr, flush=True)
    sys.exit(code)


def _known(exc: BaseException) -> tuple[str, int] | None:
    """(message, exit code) for error types a user can cause, else None."""
    from lorekit.config import ConfigError
    from lorekit.eval.store_lock import RunLockedError
    from lorekit.eval.store_schema import StoreCorruptError, StoreError, StoreWriteError
    from lorekit.extras import MissingExtraError
    from lorekit.llm.errors import LLMAuthError, LLMError
    from lorekit.sandbox.errors import SandboxUnavailable

    if isinstance(exc, SandboxUnavailable):  # NoOSSandbox: the OS layer, or the unsafe option
        return exc.message, EXIT_USAGE
    if isinstance(exc, RunLockedError):
        return str(exc), EXIT_USAGE
    if isinstance(exc, StoreWriteError):  # a full disk: the run stopped, resumable
        return str(exc), EXIT_RUN_FAILED
    if isinstance(exc, StoreCorruptError):  # the message names the row to repair
        return str(exc), EXIT_USAGE
    if isinstance(exc, ConfigError):
        return first_and_count(str(exc)), EXIT_USAGE
    if isinstance(exc, MissingExtraError):
        return str(exc), EXIT_USAGE
    if isinstance(exc, StoreError):
        return f"{exc} (choose another file with --store or $LOREKIT_STORE)", EXIT_USAGE
    if isinstance(exc, LLMAuthError):
        return with_hint(str(exc), model_error_hint(exc)), EXIT_USAGE
    if isinstance(exc, LLMError):
        return with_hint(str(exc), model_error_hint(exc)), EXIT_RUN_FAILED
    if isinstance(exc, sqlite3.Error):
        return f"SQLite: {exc}", EXIT_RUN_FAILED
    bad_input = _bad_input(exc)
    if bad_input is not None:
        return bad_input, EXIT_USAGE
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        what = exc.strerror or str(exc) or type(exc).__name__
        code = EXIT_USAGE if isinstance(exc, _PATH_ERRORS) else EXIT_RUN_FAILED
        return f"{where}{what}", code
    return None


def _bad_input(exc: BaseException) -> str | None:
    """The last word on input no reader anticipated: values that Python itself
    refuses, whichever file or option they came from. The readers of LoreKit's own
    files name the file and the field; this keeps anything else to one line, exit 2."""
    import json

    text = str(exc)
    if isinstance(exc, ValueError) and "integer string conversion" in text:
        return (
            "a number in the input has more digits than can be read (at most 4,300); "
            "check the files and values given"
        )
    if isinstance(exc, ValueError) and "null byte" in text:
        return "a file path holds a NUL byte (\\x00), which no path can hold"
    if isinstance(exc, RecursionError):
        return (
            "the input is nested too deeply to read (thousands of levels of [ or {); "
            "check the files given"
        )
    if isinstance(exc, json.JSONDecodeError):
        return f"malformed JSON in the input: {exc}"
    return None


def _nul_argument(argv: Sequence[str]) -> str | None:
    """The option (or argument) of ``argv`` holding a NUL byte, if one does: a shell
    cannot pass one, a script calling :func:`run_cli` can."""
    for i, arg in enumerate(argv):
        if "\x00" in arg:
            before = argv[i - 1] if i and argv[i - 1].startswith("-") else None
            name = arg.partition("=")[0] if arg.startswith("-") else before
            return name or f"argument {i + 1}"
    return None


def _internal(exc: BaseException) -> NoReturn:
    text = "".join(traceback.format_exception(exc))
    try:
        fd, path = tempfile.mkstemp(prefix="lorekit-traceback-", suffix=".txt")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        where = f"traceback in {path}"
    except OSError:
        where = "no traceback file could be written"
    summary = first_and_count(f"{type(exc).__name__}: {exc}")
    fail(
        f"internal error: {summary} [{where}; this is a bug in LoreKit, please report it; "
        "--debug or LOREKIT_DEBUG=1 prints the traceback]",
        EXIT_RUN_FAILED,
    )


def _broken_pipe() -> NoReturn:
    """Output piped to a reader that stopped early (``| head``): leave quietly."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    sys.exit(EXIT_BROKEN_PIPE)


def run_cli(group: click.Group, argv: Sequence[str] | None) -> None:
    """Run ``group`` as ``lorekit`` and end every failure as one line and a code."""
    nul = _nul_argument(argv or ())
    if nul is not None:
        fail(f"{nul}: a value cannot hold a NUL byte (\\x00)", EXIT_USAGE)
    try:
        group.main(
            args=list(argv) if argv is not None else None,
            prog_name="lorekit",
            standalone_mode=False,
        )
    except click.exceptions.NoArgsIsHelpError as exc:
        click.echo(exc.ctx.get_help() if exc.ctx else "", err=True)
        sys.exit(EXIT_USAGE)
    except click.UsageError as exc:
        cmd = exc.ctx.command_path if exc.ctx is not None else "lorekit"
        fail(f"{cmd}: {exc.format_message()}", EXIT_USAGE)
    except click.ClickException as exc:
        fail(exc.format_message(), exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except (click.exceptions.Abort, KeyboardInterrupt):
        fail("interrupted", EXIT_INTERRUPTED)
    except BrokenPipeError:
        _broken_pipe()
    except Exception as exc:
        known = _known(exc)
        if debug_enabled():
            # The traceback replaces the line, not the exit code: a script sees
            # the same code with and without --debug (2 for a path error).
            traceback.print_exception(exc, file=sys.stderr)
            sys.exit(known[1] if known is not None else EXIT_RUN_FAILED)
        if known is None:
            _internal(exc)
        fail(*known)
