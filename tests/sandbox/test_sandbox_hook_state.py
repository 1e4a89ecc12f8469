"""The audit hook keeps no state code can switch, even code that holds every object.

The script below plays code that got past every name rule: it has the real
modules, the real ``getattr``, frames. In a fresh interpreter with the hook
armed it (1) walks every closure reachable from the worker's modules and
``__main__`` and sets or clears whatever it finds mutable (the old hook's
"busy" flag lived in such a closure), (2) rewrites the hook module's
constants, (3) gets the hook's own frames from inside the hook (the hook
raises the guard's ``Stop``, whose ``__init__`` the code replaced; a signal
handler would be handed the same frames) and tampers with every value they
show. Then every blocked effect must still be refused.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

GUARD_DIR = Path(__file__).parents[2] / "lorekit" / "sandbox"

ATTACK = """
import os, sys, types
sys.path.insert(0, {guard_dir!r})
import guard
_ARMED = [guard.arm(4)]  # whatever arming hands back, kept the way the worker's __main__ keeps it
results, seen = {{}}, {{"frames": 0, "mutable": []}}


def attempt(name, action):
    try:
        action()
        results[name] = "done"
    except BaseException as exc:
        results[name] = type(exc).__name__


def tamper(value, depth=0):
    # set, clear or cut whatever is mutable; follow functions into their closures
    if isinstance(value, dict):
        if "busy" in value:
            value["busy"] = True
        for key in list(value):
            if key in ("files", "first", "busy"):
                value[key] = None if key == "first" else (0 if key == "files" else True)
    elif isinstance(value, (list, set)):
        for item in list(value):
            tamper(item, depth + 1)
        value.clear()
    elif isinstance(value, types.FunctionType) and depth < 3:
        for cell in value.__closure__ or ():
            try:
                tamper(cell.cell_contents, depth + 1)
            except ValueError:
                pass


# (1) every closure reachable from the worker's modules and __main__
modules = [m for name, m in list(sys.modules.items())
           if name.startswith("guard") or name in ("child_os", "__main__")]
for module in modules:
    for value in list(vars(module).values()):
        tamper(value)
# (2) the hook module's constants
hook_module = sys.modules.get("guard_hook", guard)  # where the hook's code lives
for name in ("BLOCKED", "TRUSTED_ONLY", "BLOCKED_FROM_SNIPPET", "GENERATED_DENIED"):
    setattr(hook_module, name, ())
    setattr(guard, "_ALWAYS_" + name, ())
guard.STATE.workdir, guard.STATE.running, guard.STATE.violation = "/", False, None


# (3) the hook's frames, from inside the hook
def grab(self, kind, message):
    BaseException.__init__(self, message)
    self.kind, self.message = kind, message
    for depth in range(1, 12):
        try:
            frame = sys._getframe(depth)
        except ValueError:
            break
        if frame.f_globals is vars(hook_module):
            seen["frames"] += 1
            for key, value in dict(frame.f_locals).items():
                if isinstance(value, (dict, list, set, bytearray, types.FunctionType)):
                    if value is not vars(hook_module):  # its module: reachable, never read
                        seen["mutable"].append(key)
                tamper(value)
            frame.f_locals.clear()


guard.Stop.__init__ = grab
attempt("trigger", lambda: __import__("socket"))
marker = {marker!r}
attempt("read", lambda: open("/etc/hostname").read())
attempt("write", lambda: os.open(marker, os.O_WRONLY | os.O_CREAT))
attempt("system", lambda: os.system("touch " + marker))
attempt("fork", lambda: os.fork())
attempt("kill", lambda: os.kill(os.getppid(), 0))
attempt("import", lambda: __import__("subprocess"))
attempt("format-walk", lambda: eval("'{{0.__globals__}}'.format(attempt)"))
attempt("codegen-dunder", lambda: eval("attempt.__globals__"))
def gen():
    yield 1
attempt("frame", lambda: gen().gi_frame)
attempt("set-code", lambda: setattr(attempt, "__code__", gen.__code__))
attempt("new-hook", lambda: sys.addaudithook(lambda *a: None))
os.write(1, repr((results, seen)).encode())
"""


def test_the_hook_holds_when_the_code_reaches_every_object(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    workdir = tmp_path / "work"
    workdir.mkdir()
    script = textwrap.dedent(ATTACK).format(guard_dir=str(GUARD_DIR), marker=str(marker))
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", script],
        cwd=workdir,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    results, seen = ast.literal_eval(done.stdout.decode())
    assert results == dict.fromkeys(results, "Stop"), results
    assert len(results) == 12 and not marker.exists()
    assert seen["frames"] >= 1  # the hook's frames were reached ...
    assert seen["mutable"] == []  # ... and showed nothing mutable


def test_the_hook_reads_no_global_and_captures_only_immutable_values(tmp_path: Path) -> None:
    """What docs/sandbox.md says of the hook's frame, checked on its code and closure."""
    import dis
    import itertools
    import types

    sys.path.insert(0, str(GUARD_DIR))
    try:
        import guard_hook  # the worker's own copy (a plain top-level module there too)
    finally:
        sys.path.remove(str(GUARD_DIR))

    class Stop(BaseException):
        pass

    hook = guard_hook.make_hook(
        str(tmp_path), 4, None, frozenset({"f_back"}), Stop,
        snippet_prefix="<sandbox:", guard_dir=str(GUARD_DIR),
    )  # fmt: skip
    loads = {i.opname for i in dis.get_instructions(hook)}
    assert not loads & {"LOAD_GLOBAL", "LOAD_NAME", "STORE_GLOBAL", "MAKE_FUNCTION"}
    immutable = (str, int, frozenset, tuple, type(None), types.BuiltinFunctionType)
    for name, cell in zip(hook.__code__.co_freevars, hook.__closure__ or (), strict=True):
        value = cell.cell_contents
        if name == "own_globals":
            assert value is vars(guard_hook)  # compared by identity, never read
        elif name == "stop":
            assert value is Stop
        else:
            opaque = (
                types.MethodWrapperType,
                types.MethodDescriptorType,
                types.WrapperDescriptorType,
                itertools.count,
            )
            static_type = isinstance(value, type) and not value.__flags__ & (
                1 << 9
            )  # not a heap type
            assert isinstance(value, immutable + opaque) or static_type, (
                name,
                type(value),
            )
            assert not isinstance(value, types.FunctionType)
