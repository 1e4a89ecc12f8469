"""The operating-system boundary around sandbox workers: bubblewrap and seccomp.

The in-process guard (``guard.py``) is a second layer; CPython cannot be made
a security boundary from the inside. The first layer is the kernel: each
worker is started by bubblewrap (``bwrap``) in its own user, PID, network,
mount, IPC and UTS namespaces, as an unprivileged uid with no capabilities and
``no_new_privs``, seeing only a read-only copy of the Python installation and
of the worker's two scripts, a private ``/proc`` and ``/dev``, and one
writable directory. A seccomp filter built with libseccomp refuses the system
calls an escaped snippet would need to climb further (sockets, ptrace,
namespaces, mounts, keyrings, BPF, signals to other process groups, ...).

Two launch shapes, one result:

* **As root**, an unprivileged user namespace cannot bind a Python that lives
  under ``/root`` (mode 0700), so an outer bwrap (privileged) builds the
  namespaces and the read-only view, ``setpriv`` drops to the sandbox uid with
  an empty bounding set, and an inner, unprivileged bwrap adds the user
  namespace and the seccomp filter. The worker is a real unprivileged kernel
  uid (65534 by default), so it owns nothing of root's.
* **As a normal user**, one unprivileged bwrap does all of it; the worker's
  kernel uid is the user's own, which is all an unprivileged process can do.

Whatever the kernel refuses is reported: :func:`isolation_report` probes the
layers once per process, a refused layer triggers one warning, and
``lorekit doctor`` prints the same report. Each started worker also reports
its own uid, capabilities, ``no_new_privs``, seccomp mode and namespace ids,
and the pool checks them before handing the worker out (:func:`verify`).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import shutil
import sys
import threading
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

IsolationMode = Literal["auto", "required", "off"]
ISOLATION_ENV = "LOREKIT_SANDBOX_ISOLATION"
SANDBOX_UID = 65534  # "nobody" on Debian and most distributions
SANDBOX_GID = 65534
#: Fixed paths inside the sandbox: top-level, so every parent is traversable.
PYTHON_DIR = "/python"
SCRIPTS_DIR = "/lorekit-sandbox"
WORK_DIR = "/work"
NAMESPACES = ("user", "pid", "net", "mnt", "ipc", "uts")

#: System calls an escaped snippet could use to reach beyond its sandbox.
#: Refused with EPERM (so Python raises a readable PermissionError).
DENIED_SYSCALLS: tuple[str, ...] = (
    # networking
    "socket",
    "socketpair",
    "connect",
    "bind",
    "listen",
    "accept",
    "accept4",
    # other processes' memory and state
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "process_madvise",
    "kcmp",
    "pidfd_open",
    "pidfd_getfd",
    "pidfd_send_signal",
    "rt_sigqueueinfo",
    "rt_tgsigqueueinfo",
    # namespaces, mounts, roots
    "setns",
    "unshare",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "open_tree",
    "move_mount",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "open_by_handle_at",
    "name_to_handle_at",
    # kernel facilities with a history of escapes
    "personality",
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "fanotify_init",
    "lookup_dcookie",
    "modify_ldt",
    "iopl",
    "ioperm",
    "vhangup",
    # whole-machine administration (no capabilities anyway; refuse early)
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "reboot",
    "swapon",
    "swapoff",
    "syslog",
    "acct",
    "quotactl",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
)
#: clone(2) flags that create namespaces; refused even though unshare is.
_CLONE_NAMESPACE_FLAGS = (
    0x00000080,  # CLONE_NEWTIME
    0x00020000,  # CLONE_NEWNS
    0x02000000,  # CLONE_NEWCGROUP
    0x04000000,  # CLONE_NEWUTS
    0x08000000,  # CLONE_NEWIPC
    0x10000000,  # CLONE_NEWUSER
    0x20000000,  # CLONE_NEWPID
    0x40000000,  # CLONE_NEWNET
)


class IsolationWarning(RuntimeWarning):
    """A layer of the OS sandbox is unavailable; workers run with less isolation."""


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
        gaps = "; ".join(
            f"{layer.name}: {layer.detail}" + (f" (fix: {layer.fix})" if layer.fix else "")
            for layer in self.missing()
        )
        return f"sandbox OS isolation incomplete: {gaps}"


@dataclass
class Launch:
    """How to start one worker: argv, file descriptors to pass, paths to prepare."""

    argv: list[str]
    pass_fds: tuple[int, ...] = ()
    confined: bool = False
    workdir_inside: str = ""
    close_after_start: list[int] = field(default_factory=list)


def isolation_mode(requested: str | None = None) -> IsolationMode:
    """The mode to use: an explicit request, else ``$LOREKIT_SANDBOX_ISOLATION``, else auto."""
    value = (requested or os.environ.get(ISOLATION_ENV) or "auto").strip().lower()
    if value not in ("auto", "required", "off"):
        raise ValueError(
            f"sandbox isolation must be auto, required or off (got {value!r}; "
            f"set by the caller or ${ISOLATION_ENV})"
        )
    return value  # type: ignore[return-value]


# ---------------------------------------------------------------- seccomp


@functools.cache
def seccomp_program() -> bytes | None:
    """The compiled BPF filter, or None when libseccomp cannot be loaded."""
    try:
        import pyseccomp as seccomp
    except (ImportError, OSError):
        return None
    try:
        program = seccomp.SyscallFilter(seccomp.ALLOW)
        deny = seccomp.ERRNO(errno.EPERM)
        for name in DENIED_SYSCALLS:
            with contextlib.suppress(Exception):  # not every call exists on every arch
                program.add_rule(deny, name)
        # kill(2) only within the worker's own process group (pid 0).
        program.add_rule(deny, "kill", seccomp.Arg(0, seccomp.NE, 0))
        for flag in _CLONE_NAMESPACE_FLAGS:
            program.add_rule(deny, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
        # clone3 passes its flags in memory, out of the filter's sight: make
        # the C library fall back to clone(2), whose flags are checked above.
        program.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
        read_fd, write_fd = os.pipe()
        try:
            with os.fdopen(write_fd, "wb") as sink:
                program.export_bpf(sink)
            chunks = []
            while chunk := os.read(read_fd, 65536):
                chunks.append(chunk)
        finally:
            os.close(read_fd)
        return b"".join(chunks)
    except Exception:
        return None


def _program_fd(program: bytes) -> int:
    """A readable descriptor holding the BPF program (bwrap reads it once)."""
    read_fd, write_fd = os.pipe()
    try:
        os.write(write_fd, program)  # a few hundred bytes: fits the pipe buffer
    finally:
        os.close(write_fd)
    return read_fd


# ---------------------------------------------------------------- launch


def _python_paths() -> tuple[str, str]:
    """The installation prefix to mount and the interpreter's path inside it."""
    prefix = os.path.realpath(sys.base_prefix)
    executable = os.path.realpath(sys.executable)
    if not executable.startswith(prefix + os.sep):
        # A venv whose interpreter is a copy, not a link: use the base one.
        candidate = os.path.join(prefix, "bin", os.path.basename(executable))
        if not os.path.exists(candidate):
            candidate = os.path.join(
                prefix, "bin", f"python{sys.version_info.major}.{sys.version_info.minor}"
            )
        executable = os.path.realpath(candidate)
    if not executable.startswith(prefix + os.sep):
        raise OSError(f"the Python interpreter {executable} is not inside {prefix}")
    return prefix, PYTHON_DIR + executable[len(prefix) :]


def _system_binds() -> list[str]:
    """Read-only mounts of the system libraries, keeping merged-/usr symlinks."""
    args = ["--ro-bind", "/usr", "/usr"]
    for top in ("lib", "lib32", "lib64", "libx32", "bin", "sbin"):
        path = Path("/") / top
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    return args


def _namespace_flags(*, user: bool) -> list[str]:
    flags = ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts"]
    flags.append("--unshare-cgroup-try")
    if user:
        flags = ["--unshare-user", "--disable-userns", *flags]
    return flags


def build_launch(
    child_argv: Sequence[str],
    *,
    workdir_bytes: int,
    bwrap: str,
    setpriv: str | None,
    program: bytes | None,
) -> Launch:
    """The bwrap command line that starts ``child_argv`` confined.

    ``workdir_bytes`` caps the worker's writable directory. ``child_argv``
    starts with the interpreter's path *inside* the sandbox (see
    :func:`interpreter_inside`).
    """
    prefix, _ = _python_paths()
    scripts = str(Path(__file__).resolve().parent)
    view = [
        *_system_binds(),
        "--ro-bind",
        prefix,
        PYTHON_DIR,
        "--ro-bind",
        scripts,
        SCRIPTS_DIR,
        # The work dir is a size-capped tmpfs private to this worker: files
        # the code writes cannot fill the host's disk and vanish with it.
        "--perms",
        "0777" if os.geteuid() == 0 else "0700",
        "--size",
        str(workdir_bytes),
        "--tmpfs",
        WORK_DIR,
        "--proc",
        "/proc",
        "--dev",
        "/dev",
    ]
    if os.geteuid() == 0:
        view += ["--tmpfs", "/tmp"]  # the inner bwrap builds its root there; root-owned
    view += ["--remount-ro", "/"]
    ids = ["--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_GID)]
    fds: list[int] = []
    seccomp_args: list[str] = []
    if program is not None:
        fd = _program_fd(program)
        fds.append(fd)
        seccomp_args = ["--seccomp", str(fd)]
    common = ["--die-with-parent", "--clearenv", "--chdir", WORK_DIR]
    if os.geteuid() == 0:
        if setpriv is None:
            raise OSError("setpriv (util-linux) is needed to drop root in the sandbox")
        inner = [
            bwrap,
            "--unshare-user",
            "--disable-userns",
            *ids,
            "--dev-bind",  # the outer layer's /dev is already the minimal one
            "/",
            "/",
            *seccomp_args,
            *common,
            "--",
            *child_argv,
        ]
        drop = [
            setpriv,
            f"--reuid={SANDBOX_UID}",
            f"--regid={SANDBOX_GID}",
            "--clear-groups",
            "--inh-caps=-all",
            "--bounding-set=-all",
            "--no-new-privs",
            "--",
        ]
        argv = [
            bwrap,
            *_namespace_flags(user=False),
            "--new-session",
            *view,
            "--cap-drop",
            "ALL",
            "--cap-add",
            "CAP_SETUID",
            "--cap-add",
            "CAP_SETGID",
            *common,
            "--",
            *drop,
            *inner,
        ]
    else:
        argv = [
            bwrap,
            *_namespace_flags(user=True),
            "--new-session",
            *ids,
            *view,
            *seccomp_args,
            *common,
            "--",
            *child_argv,
        ]
    return Launch(argv, tuple(fds), True, WORK_DIR, close_after_start=fds)


def interpreter_inside() -> str:
    """The interpreter's path as the sandboxed worker sees it."""
    return _python_paths()[1]


def find_tools() -> tuple[str | None, str | None]:
    """Paths of bwrap and setpriv, or None where missing."""
    return shutil.which("bwrap"), shutil.which("setpriv")


# ---------------------------------------------------------------- verification


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
        layers.append(Layer("seccomp filter", filtered, "" if filtered else "no filter loaded"))
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
            Layer(
                "bubblewrap",
                False,
                "bwrap is not installed; workers run with the in-process guard only",
                "apt-get install bubblewrap",
            )
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
