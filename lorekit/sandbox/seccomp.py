"""The seccomp filter of sandbox workers, built with libseccomp.

A denylist, not an allowlist: CPython and the C library use a wide, version-
dependent set of system calls, and an allowlist that misses one breaks the
worker in ways that look like bugs. What is refused is what an escaped snippet
needs to climb further; everything else it could do is already confined by
the namespaces and the unprivileged uid (``confine.py``). libseccomp compiles
the rules to BPF for this machine's architecture; calls from any other ABI
(x32, i386) kill the worker.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os

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
    "tkill",  # obsolete; tgkill is confined to the worker itself (child_os.py)
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
    # kernel objects that hold memory outside the address space and its
    # RLIMIT_AS: SysV and POSIX IPC, memfd, inotify watches, POSIX timers,
    # extended attributes (kernel memory per file)
    "shmget",
    "shmat",
    "shmdt",
    "shmctl",
    "semget",
    "semop",
    "semtimedop",
    "semctl",
    "msgget",
    "msgsnd",
    "msgrcv",
    "msgctl",
    "ipc",
    "mq_open",
    "mq_unlink",
    "mq_timedsend",
    "mq_timedreceive",
    "mq_notify",
    "mq_getsetattr",
    "memfd_create",
    "memfd_secret",
    "inotify_init",
    "inotify_init1",
    "inotify_add_watch",
    "timer_create",
    "setxattr",
    "lsetxattr",
    "fsetxattr",
    "setxattrat",
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
#: Signals a worker may never send, not even to itself: a SIGKILL the parent
#: did not send then always comes from outside (a limit or another process),
#: and a stopped worker cannot pass for a slow one.
_UNSENDABLE_SIGNALS = (9, 19)  # SIGKILL, SIGSTOP
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
        for signum in _UNSENDABLE_SIGNALS:
            program.add_rule(deny, "kill", seccomp.Arg(1, seccomp.EQ, signum))
            program.add_rule(deny, "tgkill", seccomp.Arg(2, seccomp.EQ, signum))
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


@functools.cache
def signal_filter_spec() -> dict[str, int] | None:
    """What the worker needs to confine tgkill(2) to itself (see ``child_os``).

    tgkill's target is only known inside the worker (its pid in the new PID
    namespace), so the worker stacks a second, tiny filter with its own pid;
    this gives it the audit arch and the system call's number from libseccomp.
    """
    try:
        import pyseccomp as seccomp

        arch = int(seccomp.system_arch())
        number = seccomp.resolve_syscall(seccomp.Arch.NATIVE, "tgkill")
    except Exception:
        return None
    return {"arch": arch, "tgkill": int(number)} if isinstance(number, int) else None


def program_fd(program: bytes) -> int:
    """A readable descriptor holding the BPF program (bwrap reads it once)."""
    read_fd, write_fd = os.pipe()
    try:
        os.write(write_fd, program)  # a few hundred bytes: fits the pipe buffer
    finally:
        os.close(write_fd)
    return read_fd
