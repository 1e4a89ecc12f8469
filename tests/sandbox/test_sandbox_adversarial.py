"""The adversarial corpus: every snippet is blocked or contained, with a typed,
readable error; the parent survives and the next, ordinary run still works."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from _procs import process_tree

from lorekit.sandbox import (
    ActionBudgetExceeded,
    ApiCallRejected,
    CodeError,
    CpuLimitExceeded,
    ForbiddenImport,
    ForbiddenOperation,
    ForbiddenSyntax,
    LimitExceeded,
    Limits,
    MemoryLimitExceeded,
    OutputLimitExceeded,
    SandboxError,
    TimeLimitExceeded,
    WorkerPool,
    run_code,
)

OUTSIDE = Path("/tmp/lorekit-sandbox-escape-marker")

# (id, code, expected error class, text the message must contain)
CORPUS: list[tuple[str, str, type[SandboxError], str]] = [
    # files
    ("read-passwd", "print(open('/etc/passwd').read())", ForbiddenOperation, "outside"),
    ("write-outside", f"open('{OUTSIDE}', 'w').write('x')", ForbiddenOperation, "outside"),
    ("path-traversal", "open('../../../../etc/hostname').read()", ForbiddenOperation, "outside"),
    ("open-fd", "open(0).read()", ForbiddenOperation, "outside"),
    ("proc-environ", "print(open('/proc/self/environ').read())", ForbiddenOperation, "outside"),
    (
        "pathlib",
        "import pathlib\npathlib.Path('/etc/passwd').read_text()",
        ForbiddenImport,
        "pathlib",
    ),
    # network
    (
        "socket",
        "import socket\nsocket.create_connection(('127.0.0.1', 80))",
        ForbiddenImport,
        "socket",
    ),
    (
        "urllib",
        "import urllib.request\nurllib.request.urlopen('http://x')",
        ForbiddenImport,
        "urllib",
    ),
    ("http-client", "from http import client", ForbiddenImport, "http"),
    # processes and the os
    ("os-system", "import os\nos.system('id')", ForbiddenImport, "'os'"),
    ("subprocess", "import subprocess\nsubprocess.run(['id'])", ForbiddenImport, "subprocess"),
    ("dunder-import", "__import__('os').system('id')", ForbiddenSyntax, "__import__"),
    ("importlib", "import importlib\nimportlib.import_module('os')", ForbiddenImport, "importlib"),
    ("sys-modules", "import sys\nsys.modules['os'].system('id')", ForbiddenImport, "'sys'"),
    ("ctypes", "import ctypes\nctypes.CDLL(None).system(b'id')", ForbiddenImport, "ctypes"),
    ("shutil-rmtree", "import shutil\nshutil.rmtree('/')", ForbiddenImport, "shutil"),
    ("private-module", "import _posixsubprocess", ForbiddenSyntax, "_posixsubprocess"),
    # escapes through the object graph
    ("subclasses", "().__class__.__bases__[0].__subclasses__()", ForbiddenSyntax, "__class__"),
    ("getattr-dunder", "getattr((), '__cla' + 'ss__')", ForbiddenOperation, "__class__"),
    (
        "func-globals",
        "def f():\n    pass\nf.__globals__['__builtins__']",
        ForbiddenSyntax,
        "__globals__",
    ),
    ("builtins-name", "__builtins__['open']('/etc/passwd')", ForbiddenSyntax, "__builtins__"),
    ("gen-frame", "def g():\n    yield 1\ng().gi_frame.f_back", ForbiddenSyntax, "gi_frame"),
    (
        "getattr-frame",
        "def g():\n    yield 1\ngetattr(g(), 'gi_frame')",
        ForbiddenOperation,
        "gi_frame",
    ),
    (
        "format-walk",
        "def f():\n    pass\nprint('{0.__globals__}'.format(f))",
        ForbiddenSyntax,
        "format",
    ),
    ("format-indirect", "s = '{0.__class__}'\nprint(s.format(1))", ForbiddenSyntax, "format"),
    ("getattr-format", "getattr('{0.__class__}', 'format')(1)", ForbiddenOperation, "format"),
    ("module-private", "import random\nrandom._os.system('id')", ForbiddenOperation, "_os"),
    ("module-chain", "import re\nre.enum.sys.modules['os']", CodeError, "enum"),
    ("attrgetter", "import operator\noperator.attrgetter('__class__')(1)", CodeError, "attrgetter"),
    ("type-hints-eval", "import typing\ntyping.get_type_hints", CodeError, "get_type_hints"),
    ("vars-module", "import math\nprint(vars(math))", ForbiddenOperation, "vars"),
    ("code-object", "(lambda: 0).__code__", ForbiddenSyntax, "__code__"),
    # eval and friends
    ("eval", "eval('1 + 1')", ForbiddenOperation, "eval"),
    ("exec", "exec('import os')", ForbiddenOperation, "exec"),
    ("compile", "compile('1', 'x', 'eval')", ForbiddenOperation, "compile"),
    # time
    ("infinite-loop", "while True:\n    pass", TimeLimitExceeded, "time limit"),
    (
        "swallow-timeout",
        "while True:\n    try:\n        while True:\n            pass\n"
        "    except BaseException:\n        pass",
        TimeLimitExceeded,
        "time limit",
    ),
    ("c-level-loop", "sum(range(10**13))", LimitExceeded, "limit"),
    ("sleep", "import time\ntime.sleep(60)", ForbiddenImport, "time"),
    # memory
    ("string-bomb", "x = ' ' * 10**11", MemoryLimitExceeded, "memory"),
    (
        "list-growth",
        "xs = []\nwhile True:\n    xs.append(bytearray(10**7))",
        MemoryLimitExceeded,
        "memory",
    ),
    ("bigint-bomb", "x = 10 ** 10 ** 9", LimitExceeded, "limit"),
    # processes and threads
    ("fork-bomb", "import os\nwhile True:\n    os.fork()", ForbiddenImport, "'os'"),
    ("multiprocessing", "import multiprocessing", ForbiddenImport, "multiprocessing"),
    (
        "threads",
        "import threading\nthreading.Thread(target=print).start()",
        ForbiddenImport,
        "threading",
    ),
    # recursion
    ("deep-recursion", "def f(n):\n    return f(n + 1)\nf(0)", CodeError, "recursion"),
    (
        "nested-repr",
        "x = []\nfor _ in range(100000):\n    x = [x]\nprint(x)",
        CodeError,
        "recursion",
    ),
    # output
    ("print-flood", "while True:\n    print('spam' * 100)", OutputLimitExceeded, "output"),
    ("print-huge", "print('x' * 10**7)", OutputLimitExceeded, "output"),
    # signals and limits
    (
        "signal",
        "import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)",
        ForbiddenImport,
        "signal",
    ),
    (
        "rlimit",
        "import resource\nresource.setrlimit(resource.RLIMIT_CPU, (-1, -1))",
        ForbiddenImport,
        "resource",
    ),
    # environment variables
    ("environ", "import os\nprint(os.environ)", ForbiddenImport, "'os'"),
    ("getenv-escape", "import posix\nprint(posix.environ)", ForbiddenImport, "posix"),
    # sticky: catching the violation does not hide it
    (
        "caught-import",
        "try:\n    import os\nexcept BaseException:\n    pass\nprint('after')",
        ForbiddenImport,
        "'os'",
    ),
]


@pytest.mark.parametrize(
    ("code", "expected", "text"),
    [pytest.param(code, cls, text, id=name) for name, code, cls, text in CORPUS],
)
def test_adversarial_snippet_is_contained(
    pool: WorkerPool, fast: Limits, code: str, expected: type[SandboxError], text: str
) -> None:
    result = run_code(code, pool=pool, limits=fast)
    assert isinstance(result.error, expected), result.feedback()
    assert text.lower() in str(result.error).lower()
    # containment, not a hang: ended by its limits (the margin is for a busy machine)
    assert result.duration_s < fast.wall_s + fast.grace_s + 30
    assert not OUTSIDE.exists()
    after = run_code("print(sum(range(10)))", pool=pool, limits=fast)
    assert after.ok and after.output == "45\n", after.feedback()


def test_corpus_is_large_enough() -> None:
    assert len(CORPUS) >= 30


def test_error_points_at_the_offending_line(pool: WorkerPool, fast: Limits) -> None:
    result = run_code("x = 1\ny = 2\nimport socket\n", pool=pool, limits=fast)
    assert isinstance(result.error, ForbiddenImport)
    assert result.error.line == 3 and result.error.source_line == "import socket"


def test_swallowed_violation_still_reported_with_output(pool: WorkerPool, fast: Limits) -> None:
    code = "try:\n    import os\nexcept BaseException:\n    pass\nprint('after')"
    result = run_code(code, pool=pool, limits=fast)
    assert isinstance(result.error, ForbiddenImport)
    assert result.output == "after\n"


def test_output_is_bounded(pool: WorkerPool, fast: Limits) -> None:
    result = run_code("while True:\n    print('spam')", pool=pool, limits=fast)
    assert isinstance(result.error, OutputLimitExceeded)
    assert len(result.output) == fast.max_output_chars


def test_cpu_limit_without_wall_limit(pool: WorkerPool) -> None:
    limits = Limits(wall_s=8.0, cpu_s=0.5, grace_s=0.5)
    result = run_code("while True:\n    pass", pool=pool, limits=limits)
    assert isinstance(result.error, CpuLimitExceeded), result.feedback()  # not the wall limit


def test_worker_environment_is_empty(pool: WorkerPool) -> None:
    os.environ["LOREKIT_SANDBOX_SECRET"] = "hunter2"
    try:
        worker = pool.acquire()
        try:
            pids = process_tree(worker.proc.pid)  # bwrap's processes and the worker
            assert len(pids) >= (3 if worker.confined else 1)
            for pid in pids:
                environ = Path(f"/proc/{pid}/environ").read_bytes()
                assert b"hunter2" not in environ
                assert b"LOREKIT_SANDBOX_SECRET" not in environ
            if not worker.confined:
                assert Path(f"/proc/{worker.proc.pid}/cwd").resolve() == worker.workdir.resolve()
        finally:
            worker.kill()
        assert not worker.root.exists()  # the private directory is removed
    finally:
        del os.environ["LOREKIT_SANDBOX_SECRET"]


def test_workers_are_not_reused(pool: WorkerPool, fast: Limits) -> None:
    tamper = run_code("import math\nmath.sqrt = None\nprint('tampered')", pool=pool, limits=fast)
    assert tamper.ok
    clean = run_code("import math\nprint(math.sqrt(16))", pool=pool, limits=fast)
    assert clean.output == "4.0\n"


def test_files_inside_the_workdir_work_and_vanish(pool: WorkerPool, fast: Limits) -> None:
    code = "with open('notes.txt', 'w') as f:\n    f.write('kept')\nprint(open('notes.txt').read())"
    assert run_code(code, pool=pool, limits=fast).output == "kept\n"
    again = run_code("open('notes.txt').read()", pool=pool, limits=fast)
    assert isinstance(again.error, CodeError) and again.error.exc_type == "FileNotFoundError"


def test_api_budget_bounds_actions(pool: WorkerPool, fast: Limits, env: object) -> None:
    limits = Limits(wall_s=2.0, max_api_calls=5)
    result = run_code("while True:\n    api.move(1)", env, pool=pool, limits=limits)
    assert isinstance(result.error, ActionBudgetExceeded)
    assert [c.error is None for c in result.calls] == [True] * 5 + [False]
    assert env.position == 5  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("code", "text"),
    [
        ("api.move('north')", "must be int"),
        ("api.move(1, 2, 3)", "too many"),
        ("api.move(object())", "JSON"),
        ("api.take('x' * 10**6)", "too large"),
        ("api.take('stick', count=True)", "must be int"),
    ],
)
def test_api_rejects_bad_arguments(
    pool: WorkerPool, fast: Limits, env: object, code: str, text: str
) -> None:
    result = run_code(code, env, pool=pool, limits=fast, api_methods=["move", "take"])
    assert isinstance(result.error, ApiCallRejected), result.feedback()
    assert text in str(result.error)
    assert env.position == 0  # type: ignore[attr-defined]


def test_api_hides_methods_outside_the_allowlist(
    pool: WorkerPool, fast: Limits, env: object
) -> None:
    result = run_code("print(api.secret())", env, pool=pool, limits=fast, api_methods=["move"])
    assert isinstance(result.error, CodeError) and result.error.exc_type == "AttributeError"
    assert "parent-only" not in result.output


def test_file_count_is_bounded(pool: WorkerPool, fast: Limits) -> None:
    code = "for i in range(1000):\n    open(f'f{i}.txt', 'w').close()"
    result = run_code(code, pool=pool, limits=fast)
    assert isinstance(result.error, ForbiddenOperation) and "files" in str(result.error)


def test_calls_after_a_spent_budget_end_the_run(pool: WorkerPool, env: object) -> None:
    code = "while True:\n    try:\n        api.move(1)\n    except BaseException:\n        pass"
    result = run_code(code, env, pool=pool, limits=Limits(wall_s=3.0, max_api_calls=3))
    assert isinstance(result.error, ActionBudgetExceeded)
    assert env.position == 3  # type: ignore[attr-defined]
