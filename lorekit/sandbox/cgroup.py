"""An optional memory cgroup per sandbox worker, where the machine delegates one.

RLIMIT_AS bounds what a worker maps, not what the kernel holds for it (tmpfs
pages, pipe buffers, inodes, page tables). A memory cgroup counts all of it
and lets the kernel's OOM killer end the worker at ``memory.max``, with a
count in ``memory.events`` that tells an OOM kill from any other SIGKILL.

A cgroup is used only where one is delegated to LoreKit: a cgroup v2
directory named by ``$LOREKIT_SANDBOX_CGROUP`` with the memory controller
enabled for its children (``systemd-run --user -p Delegate=yes --scope ...``
or a container's own cgroup). LoreKit never creates groups elsewhere in the
machine's hierarchy: it belongs to whoever runs the machine. Without one, the
seccomp filter, the rlimits and the work dir's caps are the bounds, and
``lorekit doctor`` says which applies.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

CGROUP_ENV = "LOREKIT_SANDBOX_CGROUP"
#: Headroom for the kernel's own objects (page tables, socket-less pipes, ...).
KERNEL_SLACK_BYTES = 16 << 20


@dataclass(frozen=True)
class WorkerCgroup:
    """One worker's cgroup: joined at start, limited per job, removed after."""

    path: Path

    def wrap(self, argv: list[str]) -> list[str]:
        """``argv`` started inside this group (the shell joins it, then execs)."""
        sh = shutil.which("sh") or "/bin/sh"
        join = 'echo $$ > "$0/cgroup.procs" && exec "$@"'
        return [sh, "-c", join, str(self.path), *argv]

    def limit(self, extra_bytes: int) -> None:
        """Allow ``extra_bytes`` on top of what the started worker holds now."""
        current = int((self.path / "memory.current").read_text().split()[0])
        (self.path / "memory.max").write_text(str(current + extra_bytes))
        with contextlib.suppress(OSError):  # no swap accounting: nothing to cap
            (self.path / "memory.swap.max").write_text("0")

    def oom_killed(self) -> bool:
        """Whether the kernel's OOM killer ended a process of this group."""
        try:
            lines = (self.path / "memory.events").read_text().splitlines()
        except OSError:
            return False
        counts = dict(line.split(None, 1) for line in lines if " " in line)
        return int(counts.get("oom_kill", "0")) > 0

    def remove(self) -> None:
        with contextlib.suppress(OSError):
            self.path.rmdir()


@dataclass(frozen=True)
class MemoryCgroup:
    """Whether workers get a memory cgroup here, and why (not)."""

    usable: bool
    path: Path | None
    detail: str

    def summary(self) -> str:
        """One line for ``lorekit doctor``."""
        if self.usable:
            return f"memory cgroup: used ({self.path}: one group per worker, memory.max per run)"
        return f"memory cgroup: not used ({self.detail})"

    def new_group(self, name: str) -> WorkerCgroup | None:
        """A fresh child group for one worker, or None if it cannot be made."""
        if not self.usable or self.path is None:
            return None
        path = self.path / name
        try:
            path.mkdir()
        except OSError:
            return None
        return WorkerCgroup(path)


def _machine_controller() -> str:
    """Where this machine has a memory controller, if anywhere (for the report)."""
    for root in (Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/unified")):
        with contextlib.suppress(OSError):
            if "memory" in (root / "cgroup.controllers").read_text().split():
                return f"cgroup v2 at {root}"
    if Path("/sys/fs/cgroup/memory/memory.limit_in_bytes").exists():
        return "cgroup v1 at /sys/fs/cgroup/memory"
    return ""


def memory_cgroup() -> MemoryCgroup:
    """Probe ``$LOREKIT_SANDBOX_CGROUP``: usable when it can hold worker groups."""
    named = os.environ.get(CGROUP_ENV, "").strip()
    if not named:
        where = _machine_controller()
        if not where:
            return MemoryCgroup(False, None, "this machine offers no memory controller")
        return MemoryCgroup(
            False,
            None,
            f"a memory controller exists ({where}) but no cgroup v2 directory is delegated to "
            f"LoreKit; set ${CGROUP_ENV} to one with the memory controller enabled",
        )
    path = Path(named)
    try:
        controllers = (path / "cgroup.controllers").read_text().split()
        if "memory" not in controllers:
            return MemoryCgroup(False, path, f"{named} has no memory controller")
        subtree = (path / "cgroup.subtree_control").read_text().split()
    except OSError as exc:
        return MemoryCgroup(False, path, f"${CGROUP_ENV}={named} is not a cgroup v2 dir: {exc}")
    if "memory" not in subtree:
        with contextlib.suppress(OSError):
            (path / "cgroup.subtree_control").write_text("+memory")
            subtree = (path / "cgroup.subtree_control").read_text().split()
    if "memory" not in subtree:
        return MemoryCgroup(
            False,
            path,
            f"enable the memory controller: echo +memory > {named}/cgroup.subtree_control",
        )
    if not os.access(path, os.W_OK):
        return MemoryCgroup(False, path, f"{named} is not writable by this user")
    return MemoryCgroup(True, path, "")
