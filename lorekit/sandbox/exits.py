"""Why a worker died without reporting, judged on evidence, never guessed.

A worker that ends without its ``done`` message was killed or crashed. The
exit status alone cannot say by whom: a SIGKILL comes from RLIMIT_CPU's hard
limit, the kernel's OOM killer, or another process alike. So each is named
only with its witness: the CPU time the worker's tree used (``wait4``'s
rusage; RLIMIT_CPU kills only past the limit) or RLIMIT_CPU's SIGXCPU seen by
the worker's C-level signal handler (the PID namespace's init does not pass
rusage on), an OOM-kill count that grew
during the run (the worker's memory cgroup, else the machine's
``/proc/vmstat``), the parent's own kill. The seccomp filter forbids a worker
to send SIGKILL or SIGSTOP even to itself, so a SIGKILL with none of these
witnesses came from outside the sandbox.
"""

from __future__ import annotations

import signal

from lorekit.sandbox.errors import (
    CpuLimitExceeded,
    MemoryLimitExceeded,
    SandboxCrashed,
    SandboxError,
    WorkerKilled,
)

#: Signals the kernel sends a process for its own fault, and what they mean.
CRASHES = {
    signal.SIGSEGV: "segmentation fault (SIGSEGV), e.g. recursion too deep for the C stack",
    signal.SIGBUS: "bus error (SIGBUS)",
    signal.SIGILL: "illegal instruction (SIGILL)",
    signal.SIGFPE: "arithmetic fault (SIGFPE)",
    signal.SIGABRT: "the interpreter aborted (SIGABRT), a fatal error in C code",
    signal.SIGSYS: "a system call the sandbox's seccomp filter forbids (SIGSYS)",
}
#: Tick granularity of CPU accounting: a kill at the limit may read a bit under it.
CPU_SLACK_S = 0.05


def system_oom_kills() -> int | None:
    """The machine's count of OOM kills so far (``/proc/vmstat``), or None."""
    try:
        with open("/proc/vmstat") as vmstat:
            for line in vmstat:
                if line.startswith("oom_kill "):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


def signal_name(signum: int) -> str:
    return signal.Signals(signum).name if signum in signal.valid_signals() else f"signal {signum}"


def exit_error(
    code: int | None,
    *,
    cpu_used: float | None,
    cpu_s: float,
    oom: bool,
    xcpu_seen: bool = False,
) -> SandboxError:
    """The error for a worker that ended with ``code`` (negative: a signal).

    ``cpu_used`` is the CPU time of the worker's whole tree when known (the
    PID namespace's init does not pass it on); ``xcpu_seen`` whether the
    worker's signal handler saw RLIMIT_CPU's SIGXCPU; ``oom`` whether an OOM
    kill was witnessed during the run.
    """
    if code is None:
        return SandboxCrashed("the worker ended and its exit status could not be read")
    if code >= 0:
        return SandboxCrashed(f"the worker exited with status {code} without reporting")
    signum = -code
    over_cpu = xcpu_seen or (cpu_used is not None and cpu_used >= cpu_s - CPU_SLACK_S)
    if not over_cpu and cpu_used is not None and cpu_used < 0.01:
        cpu_used = None  # not passed on through the namespace's init: unknown
    used = f" after {cpu_used:.1f}s of CPU" if cpu_used is not None else ""
    if signum in (signal.SIGKILL, signal.SIGXCPU) and (
        over_cpu or (signum == signal.SIGXCPU and cpu_used is None)
    ):
        return CpuLimitExceeded(
            f"the code used{used or ' more than its'} CPU time, over the {cpu_s}s limit, "
            "and was killed"
        )
    if signum == signal.SIGKILL and oom:
        return MemoryLimitExceeded(
            f"the worker was killed by the kernel's out-of-memory killer{used}: the code "
            "needed more memory than its cgroup or the machine allows"
        )
    if signum in CRASHES:
        return SandboxCrashed(f"the worker crashed: {CRASHES[signal.Signals(signum)]}")
    if signum == signal.SIGKILL:
        return WorkerKilled(
            f"the worker was killed by SIGKILL from outside the sandbox{used} (another "
            "process; not a limit of this run)"
        )
    return WorkerKilled(
        f"the worker was killed by {signal_name(signum)}{used}, sent by the code itself or by "
        "another process (not a limit of this run)"
    )
