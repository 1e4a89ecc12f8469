"""What comes back from a run stays small whatever the code does, and the
guard's checks leave ordinary code alone."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from lorekit.sandbox import (
    ActionBudgetExceeded,
    ApiCall,
    ForbiddenOperation,
    ForbiddenSyntax,
    Limits,
    WorkerPool,
    run_code,
)
from lorekit.sandbox.proxy import RECORD_TOTAL_CHARS, RENDER_CHARS, Elided

FLOOD = """
for i in range(400):
    try:
        api.move('x' * 400_000)
    except BaseException:
        pass
"""


def test_flooding_run_holds_and_reports_little(pool: WorkerPool, env: object) -> None:
    limits = Limits(wall_s=20, cpu_s=20, max_api_calls=100)
    result = run_code(FLOOD, env, pool=pool, limits=limits)
    assert isinstance(result.error, ActionBudgetExceeded)
    held = sum(
        len(json.dumps([c.args, dict(c.kwargs), c.result, c.error], default=repr))
        for c in result.calls
    )
    assert len(result.calls) > 100
    assert held < RECORD_TOTAL_CHARS + 200 * len(result.calls)  # not 400 KB per call
    assert all(isinstance(c.args[0], Elided) for c in result.calls)
    text = result.feedback()
    assert len(text) <= 10_000 and "not kept" in text
    assert text.endswith("plan fewer actions.")  # the hint survives any cut


def test_render_and_feedback_are_cut_with_a_marker() -> None:
    call = ApiCall("take", ("x" * 5_000,), {}, result=["y"] * 2_000)
    line = call.render()
    assert len(line) <= RENDER_CHARS and "more chars]" in line
    from lorekit.sandbox import SandboxResult

    result = SandboxResult("z" * 50_000, (call,) * 500, None, 0.1)
    text = result.feedback(max_calls=500, max_chars=3_000)
    assert len(text) <= 3_000 and "characters of calls and output left out" in text
    assert text.startswith("The code ran to the end")


def test_small_values_are_recorded_as_they_are(pool: WorkerPool, env: object) -> None:
    result = run_code("api.take('stick', count=2)", env, pool=pool)
    assert result.calls[0].args == ("stick",) and result.calls[0].result == ["stick", "stick"]


ORDINARY = """
import dataclasses, enum, functools, typing, collections
class Counter:
    def __init__(self):
        self._n = 0
    def _step(self):
        self._n += 1
        return self._n
c = Counter()
c._step()
print(c._step(), c._n)
P = collections.namedtuple("P", "x y")
print(P(1, 2)._asdict(), P(1, 2)._replace(x=5))
@dataclasses.dataclass
class Point:
    x: int
    y: int
match Point(1, 2):
    case Point(x, y=2):
        print("matched", x)
Made = type("Made", (), {"size": 3, "__repr__": lambda self: "<made>"})
print(Made().size, Made(), isinstance(Made, type), type(3) is int, type(int) is type)
class Meta(type):
    pass
class WithMeta(metaclass=Meta):
    pass
print(type(WithMeta).__name__, issubclass(Meta, type))
def deco(f):
    @functools.wraps(f)
    def inner(*a):
        return f(*a)
    return inner
@deco
def named():
    "doc"
print(named.__name__, named.__doc__)
D = dataclasses.make_dataclass("D", ["a", ("b", int, dataclasses.field(default=1))])
print(D(0))
@functools.singledispatch
def kind(x):
    return "other"
@kind.register
def _(x: int):
    return "int"
print(kind(1), kind("s"), typing.get_origin(list[int]) is list)
Color = enum.Enum("Color", "RED GREEN")
print(Color.RED.name, Color.GREEN.value)
with open("notes.txt", "w", encoding="utf-8") as f:
    f.write("kept")
print(open("notes.txt", encoding="utf-8").read())
"""


def test_ordinary_code_still_works(pool: WorkerPool, fast: Limits) -> None:
    result = run_code(ORDINARY, pool=pool, limits=fast)
    assert result.ok, result.feedback()
    assert result.output.splitlines() == [
        "2 2",
        "{'x': 1, 'y': 2} P(x=5, y=2)",
        "matched 1",
        "3 <made> True True True",
        "Meta True",
        "named doc",
        "D(a=0, b=1)",
        "int other True",
        "RED 2",
        "kept",
    ]


@pytest.mark.parametrize(
    ("code", "error", "text"),
    [
        (
            "class A:\n    def __getattr__(self, n):\n        return 1",
            ForbiddenSyntax,
            "__getattr__",
        ),
        ("type('A', (), {'__getattr__': print})", ForbiddenOperation, "__getattr__"),
        ("open('x', 'w', opener=print)", ForbiddenOperation, "opener"),
        ("import random\nrandom.Random()._randbelow(3)", ForbiddenOperation, "_randbelow"),
        ("class S(str):\n    pass\ngetattr(print, S('__self__'))", ForbiddenOperation, "__self__"),
        (
            "import functools\nfunctools.wraps(print, assigned=['__dict__'])",
            ForbiddenOperation,
            "__dict__",
        ),
        ("C = type('C', (), {'__match_args__': ('__class__',)})", ForbiddenOperation, "__class__"),
    ],
)
def test_guard_refusals_name_the_culprit(
    pool: WorkerPool, fast: Limits, code: str, error: type, text: str
) -> None:
    result = run_code(code, pool=pool, limits=fast)
    assert isinstance(result.error, error), result.feedback()
    assert text in str(result.error)


HOOK_SCRIPT = """
import os, sys, types
sys.path.insert(0, {guard_dir!r})
import guard
first = guard.arm(4)
results = {{}}
def attempt(name, action):
    try:
        action()
        results[name] = "done"
    except BaseException as exc:
        results[name] = type(exc).__name__
# the code got hold of the guard's globals: it tampers with everything it sees
guard.STATE.workdir = "/"
guard.STATE.running = False
guard.STATE.violation = None
guard._ALWAYS_BLOCKED = ()
guard._TRUSTED_ONLY = frozenset()
guard._GENERATED_DENIED = frozenset()
import builtins
attempt("read", lambda: open("/etc/hostname").read())
attempt("write", lambda: os.open({marker!r}, os.O_WRONLY | os.O_CREAT))
attempt("system", lambda: os.system("true"))
attempt("fork", lambda: os.fork())
attempt("kill", lambda: os.kill(os.getppid(), 0))
attempt("import", lambda: __import__("socket"))
attempt("codegen", lambda: eval("().__class__.__base__.__subclasses__()"))
attempt("codegen-open", lambda: eval("open"))
def gen():
    yield 1
attempt("frame", lambda: gen().gi_frame)
attempt("set-code", lambda: setattr(attempt, "__code__", gen.__code__))
attempt("new-hook", lambda: sys.addaudithook(lambda *a: None))
os.write(1, repr(results).encode())
"""


def test_audit_hook_holds_when_the_other_layers_are_gone(tmp_path: Path) -> None:
    """The hook alone, in a fresh interpreter whose guard module was tampered with."""
    marker = tmp_path / "marker"
    guard_dir = str(Path(__file__).parents[2] / "lorekit" / "sandbox")
    script = textwrap.dedent(HOOK_SCRIPT).format(guard_dir=guard_dir, marker=str(marker))
    workdir = tmp_path / "work"
    workdir.mkdir()
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", script],
        cwd=workdir,
        capture_output=True,
        timeout=30,
        check=False,
    )
    results = eval(done.stdout.decode())  # a dict literal printed by the script above
    assert results == dict.fromkeys(results, "Stop"), results
    assert len(results) == 11 and not marker.exists()
