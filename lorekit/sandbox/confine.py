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

import os
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from lorekit.sandbox.seccomp import program_fd

SANDBOX_UID = 65534  # "nobody" on Debian and most distributions
SANDBOX_GID = 65534
#: Fixed paths inside the sandbox: top-level, so every parent is traversable.
PYTHON_DIR = "/python"
SCRIPTS_DIR = "/lorekit-sandbox"
WORK_DIR = "/work"
#: Files, directories and links the work dir may hold. A tmpfs caps bytes,
#: not inodes, and bwrap cannot set ``nr_inodes``: 254,596 empty files took
#: 252 MB of kernel memory. The launch remounts it with this cap.
WORKDIR_INODES = 4096


@dataclass
class Launch:
    """How to start one worker: its argv and the descriptors it inherits."""

    argv: list[str]
    pass_fds: tuple[int, ...] = ()
    close_after_start: list[int] = field(default_factory=list)


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


def _remount_work(workdir_bytes: int) -> list[str]:
    """A command prefix that caps the work dir's inodes, then execs the rest.

    Runs where the sandbox's mount namespace is still administered (the outer,
    privileged stage), before any capability is dropped; the worker checks the
    result (``statvfs``) and the pool judges it (``isolation.verify``).
    """
    sh, mount = shutil.which("sh"), shutil.which("mount")
    if sh is None or mount is None:
        return []  # the layer is then reported missing, never assumed
    options = f"remount,nosuid,nodev,size={workdir_bytes},nr_inodes={WORKDIR_INODES}"
    return [sh, "-c", f'{mount} -o {options} {WORK_DIR} && exec "$@"', "sh"]


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
    # /dev is a tmpfs bwrap builds as the calling user: without this, /dev and
    # /dev/shm would be writable memory outside every cap. Device nodes keep
    # working on a read-only mount.
    view += ["--remount-ro", "/dev", "--remount-ro", "/"]
    ids = ["--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_GID)]
    fds: list[int] = []
    seccomp_args: list[str] = []
    if program is not None:
        fd = program_fd(program)
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
            "--cap-add",
            "CAP_SYS_ADMIN",  # for the remount only; setpriv drops every capability
            *common,
            "--",
            *_remount_work(workdir_bytes),
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
    return Launch(argv, tuple(fds), close_after_start=fds)


def caps_work_inodes() -> bool:
    """Whether the launch caps the work dir's inodes (the root launch does).

    A normal user's single bwrap cannot: bwrap has no ``nr_inodes`` option,
    and the user namespace that owns the sandbox's mounts is not the one its
    command runs in. There the tmpfs caps bytes only, and a delegated memory
    cgroup (``cgroup.py``) is what bounds the kernel memory of its inodes.
    """
    return os.geteuid() == 0


def interpreter_inside() -> str:
    """The interpreter's path as the sandboxed worker sees it."""
    return _python_paths()[1]


def find_tools() -> tuple[str | None, str | None]:
    """Paths of bwrap and setpriv, or None where missing."""
    return shutil.which("bwrap"), shutil.which("setpriv")
