"""Every resource a worker can take stays within a cap, and every death is named.

Kernel objects that live outside the address space (SysV IPC, memfd, inotify
watches, POSIX timers, tmpfs inodes, queued signals) are either refused by the
seccomp filter or capped; signals go only to the worker itself; and a worker
that dies without reporting is reported by the real cause: the CPU limit, the
kernel's OOM killer, a signal from another process, or a crash. The escape
attempts run in the ``unguarded`` test hook, so the OS layer alone stops them.
"""

from __future__ import annotations

import os
import signal
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from _procs import process_tree
from test_sandbox_os import needs_isolation

from lorekit.sandbox import (
    CpuLimitExceeded,
    Limits,
    MemoryLimitExceeded,
    SandboxCrashed,
    WorkerPool,
    exits,
    run_code,
)
from lorekit.sandbox.confine import WORKDIR_INODES
from lorekit.sandbox.worker import Worker

LIMITS = Limits(wall_s=4.0, cpu_s=4.0, memory_mb=256, max_output_chars=4_000, grace_s=0.5)


@pytest.fixture(scope="module")
def unguarded() -> Iterator[WorkerPool]:
    with WorkerPool(size=1, isolation="required", unguarded_for_tests=True) as pool:
        yield pool


@pytest.fixture(scope="module")
def guarded() -> Iterator[WorkerPool]:
    with WorkerPool(size=1, isolation="required") as pool:
        yield pool


class OnePool:
    """Hands out one given worker, so a test can watch it from outside."""

    unguarded_for_tests = False

    def __init__(self, worker: Worker, *, unguarded: bool = False) -> None:
        self.worker = worker
        self.unguarded_for_tests = unguarded

    def acquire(self) -> Worker:
        return self.worker


def unguarded_run(pool: WorkerPool, code: str, limits: Limits = LIMITS) -> str:
    result = run_code(textwrap.dedent(code), pool=pool, limits=limits)
    assert result.error is None, result.feedback()
    return result.output


def results(output: str) -> dict[str, str]:
    return dict(line.split(" ", 1) for line in output.strip().splitlines())


SYSCALLS = """
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
def outcome(value):
    return 'ok' if value >= 0 else errno.errorcode[ctypes.get_errno()]
"""


@needs_isolation
def test_sysv_and_other_shared_memory_are_refused(unguarded: WorkerPool) -> None:
    """Six 64 MiB SysV segments with memory_mb=256 held memory outside every cap."""
    code = SYSCALLS + textwrap.dedent("""
    import mmap
    IPC_CREAT = 0o1000
    made = [libc.shmget(0, 64 << 20, IPC_CREAT | 0o600) for _ in range(6)]
    print('shmget', outcome(min(made)))
    print('semget', outcome(libc.semget(0, 4, IPC_CREAT | 0o600)))
    print('msgget', outcome(libc.msgget(0, IPC_CREAT | 0o600)))
    print('mq_open', outcome(libc.syscall(240, b'/q', os.O_CREAT | os.O_RDWR, 0o600, None)))
    print('memfd_create', outcome(libc.memfd_create(b'x', 0)))
    try:
        open('/dev/shm/x', 'wb').write(b'x')
        print('dev_shm ok')
    except OSError as exc:
        print('dev_shm', errno.errorcode[exc.errno])
    try:
        mmap.mmap(-1, 512 << 20, flags=mmap.MAP_SHARED)
        print('shared_mmap ok')
    except OSError as exc:
        print('shared_mmap', errno.errorcode[exc.errno])
    """)
    found = results(unguarded_run(unguarded, code))
    for name in ("shmget", "semget", "msgget", "mq_open", "memfd_create"):
        assert found[name] == "EPERM", found
    assert found["dev_shm"] in ("EROFS", "EACCES"), found
    assert found["shared_mmap"] == "ENOMEM", found  # shared anonymous memory counts in RLIMIT_AS


@needs_isolation
def test_other_unbounded_kernel_objects_are_refused_or_capped(unguarded: WorkerPool) -> None:
    code = SYSCALLS + textwrap.dedent("""
    import resource
    print('inotify_init1', outcome(libc.inotify_init1(0)))
    timer = ctypes.create_string_buffer(8)
    print('timer_create', outcome(libc.syscall(222, 1, None, timer)))
    open('/work/f', 'w').close()
    print('setxattr', outcome(libc.setxattr(b'/work/f', b'user.x', b'v' * 100, 100, 0)))
    for name in ('SIGPENDING', 'MEMLOCK', 'MSGQUEUE', 'NOFILE'):
        print(name, resource.getrlimit(getattr(resource, 'RLIMIT_' + name))[1])
    """)
    found = results(unguarded_run(unguarded, code))
    assert found["inotify_init1"] == found["timer_create"] == found["setxattr"] == "EPERM", found
    assert int(found["SIGPENDING"]) <= 1024 and int(found["NOFILE"]) <= 64, found
    assert found["MEMLOCK"] == found["MSGQUEUE"] == "0", found


@needs_isolation
def test_work_dir_caps_inodes(unguarded: WorkerPool) -> None:
    """254,596 empty files took 252 MB of kernel memory: the tmpfs caps inodes too."""
    code = textwrap.dedent(f"""
    import os, errno
    print('files', os.statvfs('/work').f_files)
    made = 0
    try:
        for i in range({WORKDIR_INODES + 2_000}):
            os.mkdir(f'/work/d{{i}}') if i % 2 else open(f'/work/f{{i}}', 'w').close()
            made += 1
        print('stopped never')
    except OSError as exc:
        print('stopped', made, errno.errorcode[exc.errno])
    """)
    found = results(unguarded_run(unguarded, code))
    assert int(found["files"]) <= WORKDIR_INODES
    made, reason = found["stopped"].split()
    assert int(made) < WORKDIR_INODES and reason == "ENOSPC", found


@needs_isolation
def test_inode_cap_is_a_checked_layer(guarded: WorkerPool) -> None:
    worker = guarded.acquire()
    try:
        layers = {layer.name: layer for layer in worker.layers}
    finally:
        worker.kill()
    assert layers["work dir inode cap"].active, layers


@needs_isolation
def test_signals_go_only_to_the_worker_itself(unguarded: WorkerPool) -> None:
    """tgkill/tkill were not restricted like kill: every signal call is."""
    parent = os.getpid()
    code = SYSCALLS + textwrap.dedent(f"""
    import signal, threading
    me = os.getpid()
    others = [int(p) for p in os.listdir('/proc') if p.isdigit() and int(p) != me]
    for pid in [*others, {parent}]:
        print(f'tgkill{{pid}}', outcome(libc.syscall(234, pid, pid, 0)))
        print(f'tkill{{pid}}', outcome(libc.syscall(200, pid, 0)))
        print(f'kill{{pid}}', outcome(libc.kill(pid, 0)))
        print(f'sigqueue{{pid}}', outcome(libc.syscall(129, pid, 0, None)))
        print(f'tgsigqueue{{pid}}', outcome(libc.syscall(297, pid, pid, 0, None)))
    print('tkillself', outcome(libc.syscall(200, threading.get_native_id(), 0)))
    print('killgroup_SIGKILL', outcome(libc.kill(0, signal.SIGKILL)))
    print('killgroup_SIGSTOP', outcome(libc.kill(0, signal.SIGSTOP)))
    print('tgkillself_SIGKILL', outcome(libc.syscall(234, me, me, signal.SIGKILL)))
    got = []
    signal.signal(signal.SIGUSR1, lambda *a: got.append(1))
    signal.raise_signal(signal.SIGUSR1)  # raise(3): tgkill to itself still works
    print('tgkillself', outcome(libc.syscall(234, me, threading.get_native_id(), 0)))
    print('raised', len(got))
    """)
    found = results(unguarded_run(unguarded, code))
    refused = {k: v for k, v in found.items() if k not in ("tgkillself", "raised")}
    assert len(refused) >= 12 and set(refused.values()) == {"EPERM"}, found
    assert found["tgkillself"] == "ok" and found["raised"] == "1", found


# ------------------------------------------------------------------ how a worker died


def worker_pid(worker: Worker) -> int:
    """The host pid of the Python process at the bottom of the worker's tree."""
    return max(process_tree(worker.proc.pid))


class Killer:
    """An API whose one method has another process SIGKILL the worker."""

    def __init__(self, pid: int) -> None:
        self.pid = pid

    def wait(self) -> str:
        os.kill(self.pid, signal.SIGKILL)
        return "done"


@needs_isolation
def test_a_sigkill_from_another_process_is_not_a_cpu_limit(guarded: WorkerPool) -> None:
    worker = guarded.acquire()
    api = Killer(worker_pid(worker))
    result = run_code("api.wait()", api, pool=OnePool(worker), limits=LIMITS)  # type: ignore[arg-type]
    assert not isinstance(result.error, CpuLimitExceeded), result.feedback()
    assert result.error_kind == "WorkerKilled", result.feedback()
    assert "SIGKILL" in str(result.error) and "outside" in str(result.error)
    assert "killed from outside" in result.feedback()


@needs_isolation
def test_an_oom_kill_is_reported_as_memory(
    guarded: WorkerPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    counts = iter(range(100))
    monkeypatch.setattr(exits, "system_oom_kills", lambda: next(counts))
    worker = guarded.acquire()
    api = Killer(worker_pid(worker))
    result = run_code("api.wait()", api, pool=OnePool(worker), limits=LIMITS)  # type: ignore[arg-type]
    assert isinstance(result.error, MemoryLimitExceeded), result.feedback()
    assert "out-of-memory killer" in str(result.error)


@needs_isolation
def test_a_cpu_bound_c_loop_is_still_the_cpu_limit(guarded: WorkerPool) -> None:
    """sum() over a huge range never returns to Python: RLIMIT_CPU's SIGKILL ends it."""
    limits = Limits(wall_s=15.0, cpu_s=0.5, memory_mb=128, grace_s=0.5)
    result = run_code("sum(range(10**13))", pool=guarded, limits=limits)
    assert isinstance(result.error, CpuLimitExceeded), result.feedback()
    assert "CPU" in str(result.error)


@needs_isolation
def test_a_self_sent_signal_is_named(unguarded: WorkerPool) -> None:
    code = "import os, signal\nos.kill(0, signal.SIGTERM)\nimport time\ntime.sleep(2)"
    result = run_code(code, pool=unguarded, limits=LIMITS)
    assert result.error_kind == "WorkerKilled", result.feedback()
    assert isinstance(result.error, SandboxCrashed) and "SIGTERM" in str(result.error)


def test_a_segfault_is_a_crash(pool: WorkerPool, fast: Limits) -> None:
    worker = pool.acquire()
    os.kill(worker_pid(worker) if worker.confined else worker.proc.pid, signal.SIGSEGV)
    result = run_code("print(1)", pool=OnePool(worker), limits=fast)  # type: ignore[arg-type]
    assert result.error_kind == "SandboxCrashed", result.feedback()
    assert "segmentation fault" in str(result.error)


def test_exit_reasons_are_judged_on_evidence() -> None:
    judge = exits.exit_error
    cpu = judge(-signal.SIGKILL, cpu_used=2.1, cpu_s=1.0, oom=False)
    assert isinstance(cpu, CpuLimitExceeded) and "2.1" in cpu.message
    killed = judge(-signal.SIGKILL, cpu_used=0.2, cpu_s=1.0, oom=False)
    assert type(killed).kind == "WorkerKilled" and "not a limit" in killed.message
    oom = judge(-signal.SIGKILL, cpu_used=0.2, cpu_s=1.0, oom=True)
    assert isinstance(oom, MemoryLimitExceeded)
    xcpu = judge(-signal.SIGXCPU, cpu_used=None, cpu_s=1.0, oom=False)
    assert isinstance(xcpu, CpuLimitExceeded)
    status = judge(7, cpu_used=0.1, cpu_s=1.0, oom=False)
    assert isinstance(status, SandboxCrashed) and "status 7" in status.message


def test_memory_cgroup_is_probed_and_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lorekit.sandbox import cgroup

    base = tmp_path / "delegated"
    base.mkdir()
    (base / "cgroup.controllers").write_text("cpu memory pids\n")
    (base / "cgroup.subtree_control").write_text("memory pids\n")
    monkeypatch.setenv(cgroup.CGROUP_ENV, str(base))
    status = cgroup.memory_cgroup()
    assert status.usable and str(base) in status.summary()
    group = status.new_group("w1")
    assert group is not None and group.path.parent == base
    (group.path / "memory.current").write_text("1000\n")
    (group.path / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 1\noom_kill 0\n")
    group.limit(1 << 20)
    assert (group.path / "memory.max").read_text() == str(1000 + (1 << 20))
    assert (group.path / "memory.swap.max").read_text() == "0"
    assert not group.oom_killed()
    (group.path / "memory.events").write_text("oom 2\noom_kill 1\n")
    assert group.oom_killed()
    group.remove()


def test_memory_cgroup_absence_is_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lorekit.sandbox import cgroup

    base = tmp_path / "nomem"
    base.mkdir()
    (base / "cgroup.controllers").write_text("cpu pids\n")
    monkeypatch.setenv(cgroup.CGROUP_ENV, str(base))
    status = cgroup.memory_cgroup()
    assert not status.usable and "memory controller" in status.summary()
    monkeypatch.delenv(cgroup.CGROUP_ENV)
    text = cgroup.memory_cgroup().summary()
    assert text.startswith("memory cgroup:")
