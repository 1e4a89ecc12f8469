"""The OS layer on its own: what a snippet that got past the in-process guard can still not do.

The ``unguarded`` pool is a test hook: its workers run code with real
builtins, any import and no audit hook, so everything below is stopped by the
kernel (namespaces, the unprivileged uid, seccomp, the read-only view), not
by Python. After each escape attempt an ordinary guarded run must still work.
"""

from __future__ import annotations

import ast
import os
import signal
import socket
import textwrap
import threading
import time
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from _procs import process_tree, processes_with

from lorekit.sandbox import (
    Limits,
    NoOSSandbox,
    SandboxUnavailable,
    WorkerPool,
    confine,
    isolation,
    run_code,
)
from lorekit.sandbox.errors import ProtocolViolation
from lorekit.sandbox.isolation import make_plan
from lorekit.sandbox.pool import probe_isolation
from lorekit.sandbox.protocol import HEADER, MAX_DEPTH, decode

LIMITS = Limits(wall_s=3.0, cpu_s=3.0, memory_mb=256, max_output_chars=4_000, grace_s=0.5)


def _isolation_available() -> bool:
    try:
        report = probe_isolation("required")
    except SandboxUnavailable:
        return False
    return report.complete


ISOLATED = _isolation_available()
needs_isolation = pytest.mark.skipif(
    not ISOLATED, reason="bubblewrap/seccomp isolation unavailable here (CI installs it)"
)


@pytest.fixture(scope="module")
def unguarded() -> Iterator[WorkerPool]:
    with WorkerPool(size=1, isolation="required", unguarded_for_tests=True) as pool:
        yield pool


@pytest.fixture(scope="module")
def guarded() -> Iterator[WorkerPool]:
    with WorkerPool(size=1, isolation="required") as pool:
        yield pool


def escape(pool: WorkerPool, code: str, guarded: WorkerPool) -> str:
    """Run ``code`` unguarded, then check an ordinary run still works; the output."""
    result = run_code(textwrap.dedent(code), pool=pool, limits=LIMITS)
    normal = run_code("print(sum(range(5)))", pool=guarded, limits=LIMITS)
    assert normal.ok and normal.output == "10\n", normal.feedback()
    assert result.error is None, result.feedback()
    return result.output


@needs_isolation
def test_every_layer_is_active_and_checked_per_worker(guarded: WorkerPool) -> None:
    worker = guarded.acquire()
    try:
        names = {layer.name: layer.active for layer in worker.layers}
    finally:
        worker.kill()
    expected = {f"{ns} namespace" for ns in isolation.NAMESPACES}
    expected |= {"unprivileged uid", "no capabilities", "no_new_privs", "seccomp filter"}
    expected |= {"work dir inode cap"}
    assert names == dict.fromkeys(expected, True)
    assert guarded.report.complete


@needs_isolation
def test_unguarded_hook_really_bypasses_the_guard(
    unguarded: WorkerPool, guarded: WorkerPool
) -> None:
    out = escape(
        unguarded, "import os, ctypes\nprint(os.getuid(), ctypes.sizeof(ctypes.c_int))", guarded
    )
    assert out.split() == [str(confine.SANDBOX_UID), "4"]


@needs_isolation
def test_cannot_read_files_outside_its_dir(
    unguarded: WorkerPool, guarded: WorkerPool, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("s3cr3t-value")
    code = f"""
    import os
    for path in [{str(secret)!r}, '/etc/passwd', '/etc/shadow', '/root/.bashrc',
                 {str(Path.cwd() / "pyproject.toml")!r}]:
        try:
            print(open(path).read()[:40])
        except OSError as exc:
            print('refused', type(exc).__name__)
    print(sorted(os.listdir('/')))
    """
    out = escape(unguarded, code, guarded)
    assert "s3cr3t-value" not in out and "root:" not in out and "[project]" not in out
    assert out.count("refused") == 5
    visible = ast.literal_eval(out.strip().splitlines()[-1])
    assert set(visible) <= {
        "usr",
        "bin",
        "lib",
        "lib64",
        "lib32",
        "libx32",
        "sbin",
        "python",
        "lorekit-sandbox",
        "work",
        "proc",
        "dev",
        "tmp",
    }


@needs_isolation
def test_cannot_write_outside_its_dir_or_fill_the_disk(
    unguarded: WorkerPool, guarded: WorkerPool
) -> None:
    code = """
    import os
    outside = ['/usr/evil', '/python/evil', '/lorekit-sandbox/evil.py', '/evil', '/tmp/evil',
               '/dev/evil', '/dev/shm/evil']
    for path in outside:
        try:
            open(path, 'w').write('x')
            print('wrote', path)
        except OSError as exc:
            print('refused', path, exc.errno)
    written = 0
    try:
        for i in range(200):
            with open(f'/work/f{i}', 'wb') as f:
                f.write(b'x' * (1 << 20))
            written += 1
    except OSError as exc:
        print('stopped after', written, exc.errno)
    """
    out = escape(unguarded, code, guarded)
    assert "wrote" not in out
    assert out.count("refused") == 7
    stopped = [line for line in out.splitlines() if line.startswith("stopped after")]
    assert stopped and int(stopped[0].split()[2]) < 100  # capped well below 200 MiB


@needs_isolation
def test_cannot_open_a_socket_or_reach_the_parent(
    unguarded: WorkerPool, guarded: WorkerPool
) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)
    port = server.getsockname()[1]
    code = f"""
    import socket, errno
    kinds = [(socket.AF_INET, socket.SOCK_STREAM), (socket.AF_UNIX, socket.SOCK_STREAM),
             (socket.AF_INET6, socket.SOCK_DGRAM), (socket.AF_NETLINK, socket.SOCK_RAW)]
    for family, kind in kinds:
        try:
            s = socket.socket(family, kind)
            print('opened', family)
        except OSError as exc:
            print('refused', errno.errorcode[exc.errno])
    try:
        socket.create_connection(('127.0.0.1', {port}), timeout=0.5)
        print('connected')
    except OSError as exc:
        print('no connection', errno.errorcode.get(exc.errno))
    try:
        a, b = socket.socketpair()
        print('pair')
    except OSError:
        print('refused pair')
    """
    try:
        out = escape(unguarded, code, guarded)
        with pytest.raises(TimeoutError):
            server.accept()  # nothing ever reached the parent's listening socket
    finally:
        server.close()
    lines = out.splitlines()
    assert lines[:4] == ["refused EPERM"] * 4, out
    assert lines[4].startswith("no connection") and lines[5] == "refused pair", out


@needs_isolation
def test_cannot_signal_or_inspect_the_parent(unguarded: WorkerPool, guarded: WorkerPool) -> None:
    hits: list[int] = []
    previous = signal.signal(signal.SIGUSR1, lambda signum, frame: hits.append(signum))
    me, group = os.getpid(), os.getpgrp()
    code = f"""
    import os, signal
    for target in [{me}, -{group}, -1, 1]:
        try:
            os.kill(target, signal.SIGUSR1)
            print('sent', target)
        except OSError as exc:
            print('refused', target, exc.errno)
    for name in ['environ', 'mem', 'cwd', 'cmdline']:
        try:
            print(open(f'/proc/{me}/' + name, 'rb').read()[:20])
        except OSError as exc:
            print('hidden', name, exc.errno)
    print('pids', sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))
    """
    try:
        out = escape(unguarded, code, guarded)
        time.sleep(0.2)
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert hits == []
    assert "sent" not in out
    assert out.count("hidden") == 4
    pids = ast.literal_eval(out.strip().splitlines()[-1].removeprefix("pids "))
    assert len(pids) <= 4 and me not in pids  # only the sandbox's own few processes


@needs_isolation
def test_leaves_no_process_behind(unguarded: WorkerPool, guarded: WorkerPool) -> None:
    marker = f"lorekit-orphan-{uuid.uuid4().hex}"
    code = f"""
    import os, sys
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() == 0:
            sleeper = 'import time; time.sleep(120)'
            os.execv(sys.executable, [sys.executable, '-c', sleeper, {marker!r}])
        os._exit(0)
    os.waitpid(pid, 0)
    print('forked')
    """
    out = escape(unguarded, code, guarded)
    assert out == "forked\n"  # the fork really happened: only the namespace ends it
    deadline = time.monotonic() + 5
    while processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_with(marker) == []


@needs_isolation
def test_cannot_change_namespaces_or_use_dangerous_syscalls(
    unguarded: WorkerPool, guarded: WorkerPool
) -> None:
    code = """
    import ctypes, os
    libc = ctypes.CDLL(None, use_errno=True)
    calls = {
        'unshare(NEWUSER)': lambda: libc.unshare(0x10000000),
        'unshare(NEWNET)': lambda: libc.unshare(0x40000000),
        'setns': lambda: libc.setns(os.open('/proc/self/ns/net', os.O_RDONLY), 0),
        'mount': lambda: libc.mount(b'none', b'/work', b'tmpfs', 0, None),
        'ptrace(ATTACH,1)': lambda: libc.ptrace(16, 1, None, None),
        'personality': lambda: libc.personality(0x0040000),
        'keyctl': lambda: libc.syscall(250, 0, 0, 0, 0, 0),
        'bpf': lambda: libc.syscall(321, 0, 0, 0),
        'io_uring_setup': lambda: libc.syscall(425, 1, 0),
        'chroot': lambda: libc.chroot(b'/work'),
    }
    for name, call in calls.items():
        result = call()
        print(name, 'ok' if result == 0 else f'refused {ctypes.get_errno()}')
    """
    out = escape(unguarded, code, guarded)
    lines = out.strip().splitlines()
    assert len(lines) == 10
    assert all("refused" in line for line in lines), out


@needs_isolation
def test_forged_frames_are_never_taken_for_a_later_run(guarded: WorkerPool) -> None:
    """Data written into an idle worker's pipe before its job cannot pass as its answer."""
    victim = guarded.acquire()
    forged = b'{"op": "done", "output": "forged\\n", "error": null}'
    with open(f"/proc/{victim.proc.pid}/fd/1", "wb") as pipe:  # the worker's stdout pipe
        pipe.write(HEADER.pack(len(forged)) + forged)
    time.sleep(0.05)
    assert victim.conn.pending()
    guarded._idle.appendleft(victim)  # as if it were still a warm, idle worker
    honest = run_code("print('honest')", pool=guarded, limits=LIMITS)
    assert honest.ok and honest.output == "honest\n"
    assert not victim.alive()  # the tampered worker was discarded, never used

    class OnePool:
        unguarded_for_tests = False

        def __init__(self, worker: object) -> None:
            self.worker = worker

        def acquire(self) -> object:
            return self.worker

    late = guarded.acquire()  # forged after it was handed out: the nonce catches it
    with open(f"/proc/{late.proc.pid}/fd/1", "wb") as pipe:
        pipe.write(HEADER.pack(len(forged)) + forged)
    result = run_code("print('honest')", pool=OnePool(late), limits=LIMITS)  # type: ignore[arg-type]
    assert isinstance(result.error, ProtocolViolation)
    assert "forged" not in result.output


def test_parent_survives_hostile_frames() -> None:
    for body in [b"[" * 1_000_000, b'{"a":' * 100_000, b"\xff\xfe", b"[1, 2", b"1e999999", b'"x"']:
        with pytest.raises(ProtocolViolation):
            decode(body)
    nested = b'{"op": "done", "output": ' + b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1) + b"}"
    with pytest.raises(ProtocolViolation, match="nested"):
        decode(nested)
    strings = b'{"op": "done", "output": "' + b"[" * 5000 + b'"}'  # brackets inside a string
    assert decode(strings)["output"] == "[" * 5000


def test_missing_bubblewrap_refuses_unless_asked_and_says_how_to_fix(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(confine, "find_tools", lambda: (None, "/usr/bin/setpriv"))
    monkeypatch.delenv(isolation.UNSAFE_ENV, raising=False)
    with pytest.raises(SandboxUnavailable, match="apt-get install bubblewrap"):
        make_plan("required")
    with pytest.raises(NoOSSandbox, match="apt-get install bubblewrap"):
        WorkerPool(size=0, isolation="auto")  # fail closed (test_sandbox_fail_closed.py)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with WorkerPool(size=0, isolation="auto", unsafe_no_os_sandbox=True) as first:
            result = run_code("print(2 + 2)", pool=first, limits=LIMITS)
    assert result.output == "4\n"
    gaps = [w for w in caught if issubclass(w.category, isolation.UnsafeSandboxWarning)]
    assert len(gaps) == 1 and "bubblewrap" in str(gaps[0].message)
    assert not first.report.complete


def test_isolation_mode_is_validated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(isolation.ISOLATION_ENV, "strict")
    with pytest.raises(ValueError, match="auto, required or off"):
        isolation.isolation_mode()
    monkeypatch.setenv(isolation.ISOLATION_ENV, "OFF")
    assert isolation.isolation_mode() == "off"
    with (
        pytest.warns(isolation.UnsafeSandboxWarning, match="switched off"),
        WorkerPool(size=0, unsafe_no_os_sandbox=True) as pool,
    ):
        assert not pool.plan.confined
        assert "switched off" in pool.report.summary()


@needs_isolation
def test_killing_a_worker_ends_its_whole_tree(guarded: WorkerPool) -> None:
    worker = guarded.acquire()
    pids = process_tree(worker.proc.pid)
    assert len(pids) >= 3  # bwrap's monitor, the namespace's init and the worker
    worker.kill()
    deadline = time.monotonic() + 5
    while any(Path(f"/proc/{p}").exists() for p in pids) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not any(Path(f"/proc/{p}").exists() for p in pids)


@needs_isolation
def test_workers_started_from_short_lived_threads_survive(guarded: WorkerPool) -> None:
    """bwrap ties a worker to the thread that started it; ours are the pool's own."""
    results: list[str] = []

    def one() -> None:
        results.append(run_code("print('alive')", pool=guarded, limits=LIMITS).output)

    threads = [threading.Thread(target=one) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    time.sleep(0.2)  # the starting threads are gone; the refilled workers must live
    assert results == ["alive\n"] * 3
    assert run_code("print('still')", pool=guarded, limits=LIMITS).output == "still\n"


SYSTEM_PYTHON = Path("/usr/bin/python3.11")


@needs_isolation
@pytest.mark.skipif(
    os.geteuid() != 0 or not SYSTEM_PYTHON.exists(), reason="needs root to become nobody"
)
def test_a_normal_user_gets_the_same_layers(tmp_path: Path) -> None:
    """The single-bwrap launch of unprivileged users, run as ``nobody``."""
    import subprocess
    import sysconfig

    repo = Path(__file__).resolve().parents[2]
    paths = f"{repo}:{sysconfig.get_paths()['purelib']}"
    script = (
        "from lorekit.sandbox import WorkerPool, run_code\n"
        "with WorkerPool(size=0, isolation='required') as pool:\n"
        "    w = pool.acquire(); print(sorted(l.name for l in w.layers if l.active)); w.kill()\n"
        "    print(run_code('import math; print(math.factorial(5))', pool=pool).output, end='')\n"
        "with WorkerPool(size=0, isolation='required', unguarded_for_tests=True) as raw:\n"
        '    probe = \'for d in ("/dev", "/dev/shm", "/tmp", "/", "/work"):\\n\'\n'
        '    probe += \'    try:\\n        open(d + "/x", "w").write("x"); print(d)\\n\'\n'
        "    probe += '    except OSError:\\n        pass'\n"
        "    print(run_code(probe, pool=raw).output.split())\n"
    )
    command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", str(SYSTEM_PYTHON)]
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": paths, "HOME": str(tmp_path)}
    probe = subprocess.run([*command, "-c", "import lorekit.sandbox"], env=env, capture_output=True)
    if probe.returncode != 0:
        pytest.skip("the checkout or its venv is not readable by nobody")
    done = subprocess.run(
        [*command, "-c", script], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    layers, answer, writable = done.stdout.splitlines()
    assert len(ast.literal_eval(layers)) == 10  # no inode cap: see confine.caps_work_inodes
    assert answer == "120"
    assert ast.literal_eval(writable) == ["/work"]  # nothing else, /dev and /dev/shm included


def test_a_kernel_that_refuses_namespaces_is_reported_not_hidden(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setattr(confine, "find_tools", lambda: (str(fake), "/usr/bin/setpriv"))
    monkeypatch.setattr(isolation, "_warned", False)
    with (
        pytest.raises(SandboxUnavailable, match="create new namespace"),
        WorkerPool(size=0, isolation="required") as strict,
    ):
        strict.acquire()
    monkeypatch.delenv(isolation.UNSAFE_ENV, raising=False)
    with (
        pytest.raises(NoOSSandbox, match="unprivileged_userns_clone"),
        WorkerPool(size=0, isolation="auto") as closed,
    ):
        run_code("print(6 * 7)", pool=closed, limits=LIMITS)  # fails closed
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with WorkerPool(size=0, isolation="auto", unsafe_no_os_sandbox=True) as pool:
            result = run_code("print(6 * 7)", pool=pool, limits=LIMITS)
            report = pool.report
    assert result.output == "42\n"  # asked for: the in-process guard alone
    assert not report.confined and not report.complete
    assert "unprivileged_userns_clone" in report.summary()
    said = [str(w.message) for w in caught if w.category is isolation.UnsafeSandboxWarning]
    assert len(said) == 1 and "create new namespace" in said[0]


@needs_isolation
def test_the_x32_syscall_abi_cannot_bypass_the_filter(
    unguarded: WorkerPool, guarded: WorkerPool
) -> None:
    code = "import ctypes\nctypes.CDLL(None).syscall(0x40000000 | 41, 2, 1, 0)\nprint('open')"
    result = run_code(code, pool=unguarded, limits=LIMITS)
    assert result.error is not None and "seccomp" in str(result.error)
    assert result.output == ""
    assert run_code("print('next')", pool=guarded, limits=LIMITS).output == "next\n"
