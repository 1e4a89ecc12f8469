"""Isolation modes, the layers a worker runs under, and how gaps are reported.

A layer is never assumed: a started worker reports raw facts (uid,
capabilities, ``no_new_privs``, seccomp mode, namespace ids) and
:func:`verify` judges them against this process. Whatever is missing is said
once per process as an :class:`IsolationWarning` and in ``lorekit doctor``,
never silently.

Fail closed: without the OS layer itself (no bubblewrap, bubblewrap that
cannot start, a worker outside its namespaces or running as root) no worker
starts at all, :class:`~lorekit.sandbox.errors.NoOSSandbox` says why in one
line, unless the caller asked for it by the one name that says it is unsafe:
``unsafe_no_os_sandbox=True`` in Python, ``--unsafe-no-os-sandbox`` on the
commands, ``$LOREKIT_UNSAFE_NO_OS_SANDBOX=1`` for a whole process.
"""

from __future__ import annotations

import contextlib
import os
import threading
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from lorekit.sandbox import confine
from lorekit.sandbox.errors import NoOSSandbox, SandboxUnavailable
from lorekit.sandbox.seccomp import seccomp_program

IsolationMode = Literal["auto", "required", "off"]
ISOLATION_ENV = "LOREKIT_SANDBOX_ISOLATION"
UNSAFE_ENV = "LOREKIT_UNSAFE_NO_OS_SANDBOX"
UNSAFE_OPTION = "--unsafe-no-os-sandbox"
NAMESPACES = ("user", "pid", "net", "mnt", "ipc", "uts")
#: Layers without which a worker counts as running outside the OS layer.
CORE_LAYERS = frozenset(
    {
        "user namespace",
        "pid namespace",
        "net namespace",
        "mnt namespace",
        "unprivileged uid",
        "no capabilities",
    }
)
HOW_TO_GET_IT = "a pip install cannot bring bubblewrap; `lorekit doctor` checks every layer"
HOW_TO_OVERRIDE = (
    f"or pass {UNSAFE_OPTION} (Python: unsafe_no_os_sandbox=True) to run it behind the "
    "in-process guard alone, which does not contain fork bombs, signals or files written by "
    "code that gets past it"
)


class IsolationWarning(RuntimeWarning):
    """A layer of the OS sandbox is unavailable; workers run with less isolation."""


class UnsafeSandboxWarning(IsolationWarning):
    """Model-written code runs without the OS layer, because the caller asked for it."""


def unsafe_allowed(requested: bool | None = None) -> bool:
    """Whether running without the OS layer was asked for: explicitly, else by ``$UNSAFE_ENV``."""
    if requested is not None:
        return bool(requested)
    value = os.environ.get(UNSAFE_ENV, "").strip().lower()
    if value in ("", "0", "false", "no"):
        return False
    if value in ("1", "true", "yes"):
        return True
    raise ValueError(f"${UNSAFE_ENV} must be 1 or 0, got {value!r}")


@contextlib.contextmanager
def unsafe_for_this_command(enabled: bool) -> Iterator[None]:
    """``$LOREKIT_UNSAFE_NO_OS_SANDBOX=1`` while a command runs (``enabled``), then as before.

    The variable, not a flag in this process, so that the processes a run
    starts (a Ray actor's sandbox pool) are told the same.
    """
    if not enabled:
        yield
        return
    before = os.environ.get(UNSAFE_ENV)
    os.environ[UNSAFE_ENV] = "1"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(UNSAFE_ENV, None)
        else:
            os.environ[UNSAFE_ENV] = before


def _gaps(missing: Sequence[Layer], *, fixes: bool = True) -> str:
    return "; ".join(
        f"{layer.name}: {layer.detail}" + (f" (fix: {layer.fix})" if layer.fix and fixes else "")
        for layer in missing
    )


def _fixes(missing: Sequence[Layer]) -> str:
    found = [layer.fix for layer in missing if layer.fix]
    return " and ".join(dict.fromkeys(found)) or "apt-get install bubblewrap"


def refusal(missing: Sequence[Layer]) -> NoOSSandbox:
    """The one-line refusal to start a worker outside the OS layer."""
    what = _gaps(missing, fixes=False)
    return NoOSSandbox(
        f"model-written code is not run without the sandbox's OS layer ({what}); get it "
        f"with {_fixes(missing)} ({HOW_TO_GET_IT}), {HOW_TO_OVERRIDE}"
    )


def warn_unsafe(missing: Sequence[Layer]) -> None:
    """The loud warning of a pool that runs code outside the OS layer, as asked."""
    warnings.warn(
        f"UNSAFE ({UNSAFE_OPTION}): model-written code runs WITHOUT the sandbox's OS layer "
        f"({_gaps(missing, fixes=False)}), behind the in-process guard alone, which does not "
        "contain fork bombs, signals or files written by code that gets past it; get the OS "
        f"layer with {_fixes(missing)} ({HOW_TO_GET_IT})",
        UnsafeSandboxWarning,
        stacklevel=3,
    )


def outside_os_layer(layers: Sequence[Layer]) -> list[Layer]:
    """The missing layers of a started worker that mean it is not under the OS layer."""
    return [layer for layer in layers if not layer.active and layer.name in CORE_LAYERS]


@dataclass(frozen=True)
class Layer:
    """One isolation layer: whether it is active, and if not why and how to fix it."""

    name: str
    active: bool
    detail: str = ""
    fix: str = ""


@dataclass(frozen=True)
class IsolationReport:
    """What the kernel grants sandbox workers on this machine."""

    layers: tuple[Layer, ...]
    bwrap: str | None = None
    seccomp: bool = False

    @property
    def confined(self) -> bool:
        """True when workers start under bubblewrap at all."""
        return self.bwrap is not None

    @property
    def complete(self) -> bool:
        return all(layer.active for layer in self.layers)

    def missing(self) -> list[Layer]:
        return [layer for layer in self.layers if not layer.active]

    def summary(self) -> str:
        if self.complete:
            return "sandbox OS isolation: every layer active"
        return f"sandbox OS isolation incomplete: {_gaps(self.missing())}"


def isolation_mode(requested: str | None = None) -> IsolationMode:
    """The mode to use: an explicit request, else ``$LOREKIT_SANDBOX_ISOLATION``, else auto."""
    value = (requested or os.environ.get(ISOLATION_ENV) or "auto").strip().lower()
    if value not in ("auto", "required", "off"):
        raise ValueError(
            f"sandbox isolation must be auto, required or off (got {value!r}; "
            f"set by the caller or ${ISOLATION_ENV})"
        )
    return value  # type: ignore[return-value]


def own_namespaces() -> dict[str, str]:
    """This process's namespace ids, to compare a worker's against."""
    ids = {}
    for name in NAMESPACES:
        with contextlib.suppress(OSError):
            ids[name] = os.readlink(f"/proc/self/ns/{name}")
    return ids


def verify(facts: Mapping[str, Any], program: bool) -> list[Layer]:
    """Each layer a started worker says it is under, checked against this process.

    ``facts`` is what the worker read from its own ``/proc/self`` (see
    ``child.py``); a worker is never trusted to *decide* it is confined, only
    to report raw values that the parent compares with its own.
    """
    parent = own_namespaces()
    theirs = facts.get("ns") if isinstance(facts.get("ns"), dict) else {}
    assert isinstance(theirs, dict)
    layers = []
    for name in NAMESPACES:
        mine, other = parent.get(name), theirs.get(name)
        separate = mine is not None and other is not None and mine != other
        layers.append(
            Layer(
                f"{name} namespace",
                separate,
                "" if separate else "the worker shares this process's namespace",
            )
        )
    uid = facts.get("uid")
    layers.append(
        Layer(
            "unprivileged uid",
            isinstance(uid, int) and uid != 0,
            "" if isinstance(uid, int) and uid != 0 else f"the worker runs as uid {uid}",
        )
    )
    caps = facts.get("cap_eff")
    no_caps = isinstance(caps, str) and int(caps or "1", 16) == 0
    layers.append(Layer("no capabilities", no_caps, "" if no_caps else f"CapEff={caps}"))
    nnp = facts.get("no_new_privs") == 1
    layers.append(Layer("no_new_privs", nnp, "" if nnp else "not set"))
    filtered = facts.get("seccomp") == 2
    if program:
        signals = facts.get("signal_filter") is True
        detail = "" if filtered and signals else "no filter loaded"
        if filtered and not signals:
            detail = "tgkill is not confined to the worker (its own filter did not load)"
        layers.append(Layer("seccomp filter", filtered and signals, detail))
    if confine.caps_work_inodes():
        inodes = facts.get("work_inodes")
        capped = isinstance(inodes, int) and 0 < inodes <= confine.WORKDIR_INODES
        detail = "" if capped else f"/work allows {inodes} files (cap {confine.WORKDIR_INODES})"
        layers.append(Layer("work dir inode cap", capped, detail))
    return layers


# ---------------------------------------------------------------- report


_warned = False
_warn_lock = threading.Lock()


def warn_once(report: IsolationReport) -> None:
    """One warning per process when a layer is missing; never silent, never noisy."""
    global _warned
    if report.complete:
        return
    with _warn_lock:
        if _warned:
            return
        _warned = True
    warnings.warn(report.summary() + " (details: lorekit doctor)", IsolationWarning, stacklevel=3)


def static_layers(bwrap: str | None, setpriv: str | None, program: bytes | None) -> list[Layer]:
    """The layers that can be judged without starting a worker."""
    layers = []
    if bwrap is None:
        layers.append(
            Layer("bubblewrap", False, "bwrap is not installed", "apt-get install bubblewrap")
        )
    if os.geteuid() == 0 and setpriv is None:
        layers.append(
            Layer(
                "setpriv",
                False,
                "setpriv is missing, so root cannot drop to an unprivileged uid",
                "apt-get install util-linux",
            )
        )
    if program is None:
        layers.append(
            Layer(
                "seccomp filter",
                False,
                "libseccomp could not be loaded (pyseccomp + libseccomp2)",
                "apt-get install libseccomp2; pip install pyseccomp",
            )
        )
    return layers


def bwrap_failure_fix(stderr: str) -> str:
    """A hint for the usual reasons bwrap cannot create namespaces."""
    if "No permissions to create new namespace" in stderr or "Operation not permitted" in stderr:
        return (
            "the kernel refuses unprivileged user namespaces: sysctl -w "
            "kernel.unprivileged_userns_clone=1 (Debian) or "
            "kernel.apparmor_restrict_unprivileged_userns=0 (Ubuntu), or run in a container "
            "that allows them"
        )
    return "run `lorekit doctor` for details"


@dataclass(frozen=True)
class Plan:
    """How this pool starts workers: with which tools, under which layers."""

    mode: IsolationMode
    bwrap: str | None = None
    setpriv: str | None = None
    program: bytes | None = None
    gaps: tuple[Layer, ...] = ()

    @property
    def confined(self) -> bool:
        return self.bwrap is not None


def make_plan(mode: IsolationMode) -> Plan:
    """Find the tools for ``mode``; ``required`` refuses any missing layer."""
    if mode == "off":
        return Plan(mode)
    bwrap, setpriv = confine.find_tools()
    program = seccomp_program()
    gaps = tuple(static_layers(bwrap, setpriv, program))
    if mode == "required" and gaps:
        report = IsolationReport(gaps)
        raise SandboxUnavailable(f"{report.summary()}; isolation is required")
    if bwrap is None or (os.geteuid() == 0 and setpriv is None):
        bwrap = None
    return Plan(mode, bwrap, setpriv, program, gaps)
