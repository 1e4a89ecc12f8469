"""Hostile reward predicates: each would hang or exhaust memory as plain Python.

Every case must be refused by ``compile_predicate`` (``reject``) or stop with
``PredicateError`` when called (``stop``). Run as a script, this module runs
the whole corpus under an address-space cap and prints one JSON line per case
plus a summary line, so a test can check the outcomes from a separate process
that a real blow-up could not take down with it.

    python tests/sandbox/predicate_hostile_corpus.py [--memory-mb 1024]
"""

from __future__ import annotations

import argparse
import itertools
import json
import resource
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

LONG = "x" * 100_000


def _deep_list(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


@dataclass(frozen=True)
class Case:
    """One hostile predicate, its arguments and the outcome it must have."""

    id: str
    source: str
    expect: str  # "reject" or "stop"
    args: Callable[[], tuple[Any, ...]] = lambda: (1,)


def _def(body: str, params: str = "x") -> str:
    lines = body.strip("\n").splitlines()
    return f"def f({params}):\n" + "\n".join("    " + line for line in lines) + "\n"


CASES = [
    # -- the review's classes ------------------------------------------------------
    Case(
        "map-lambda-nesting",
        _def("return list(map(lambda a: list(map(lambda b: a * b, range(10**4))), range(10**4)))"),
        "reject",
    ),
    Case("self-applied-lambda", _def("return (lambda g: g(g))(lambda g: g(g))"), "reject"),
    Case(
        "repeated-pow-256",
        _def("x = x ** 256\nx = x ** 256\nx = x ** 256\nreturn x > 0"),
        "stop",
        lambda: (3,),
    ),
    Case(
        "pow-256-in-loop",
        _def("for i in range(50):\n    x = x ** 256 % 1000003\nreturn x"),
        "stop",
        lambda: (3,),
    ),
    Case(
        "nested-loops-long-string",
        _def("return sum(1 for a in s for b in s)", "s"),
        "stop",
        lambda: (LONG,),
    ),
    Case(
        "nested-for-long-string",
        _def("n = 0\nfor a in s:\n    for b in s:\n        n += 1\nreturn n", "s"),
        "stop",
        lambda: (LONG,),
    ),
    Case(
        "built-long-string-loops",
        _def("s = 'ab' * 5000\nreturn sum(1 for a in s for b in s if a == b)"),
        "stop",
    ),
    Case(
        "list-doubling", _def("y = [0]\nfor i in range(100):\n    y = y + y\nreturn len(y)"), "stop"
    ),
    Case(
        "list-doubling-augmented",
        _def("y = [0]\nfor i in range(100):\n    y += y\nreturn 1"),
        "stop",
    ),
    Case(
        "list-doubling-repeat",
        _def("y = [0]\nfor i in range(100):\n    y = y * 2\nreturn 1"),
        "stop",
    ),
    Case(
        "list-doubling-unpack",
        _def("y = [0]\nfor i in range(100):\n    y = [*y, *y]\nreturn 1"),
        "reject",
    ),
    Case("format-spec-padding", _def("return f'{1:>{n}}'", "n"), "reject", lambda: (10**9,)),
    Case("format-spec-literal-width", _def("return f'{1:>999999999}'"), "reject"),
    Case("format-precision", _def("return f'{x:.999999999f}'"), "reject", lambda: (1.5,)),
    Case("format-method", _def("return '{:>{}}'.format(1, n)", "n"), "reject", lambda: (10**9,)),
    Case("format-builtin", _def("return format(1, '>999999999')"), "reject"),
    Case("percent-padding", _def("return '%*d' % (n, 1)", "n"), "stop", lambda: (10**9,)),
    Case("percent-literal-width", _def("return '%0999999999d' % x"), "stop"),
    Case("to-bytes", _def("return len(n.to_bytes(10**9, 'big'))", "n"), "reject", lambda: (1,)),
    Case(
        "str-replace",
        _def("for i in range(40):\n    s = s.replace('a', s)\nreturn s", "s"),
        "reject",
        lambda: ("aa",),
    ),
    Case("sorted-key-lambda", _def("return sorted(range(10**5), key=lambda i: 'x' * i)"), "reject"),
    Case("sorted-key-local", _def("k = str\nreturn sorted(range(10), key=k)"), "reject"),
    Case(
        "join-growth",
        _def("for i in range(40):\n    s = s.join([s, s])\nreturn s", "s"),
        "reject",
        lambda: ("ab",),
    ),
    Case("nested-not-900", "def f(x):\n    return " + "not " * 900 + "x\n", "reject"),
    Case(
        "nested-list-literal",
        "def f(x):\n    return " + "[" * 150 + "x" + "]" * 150 + "\n",
        "reject",
    ),
    Case("unhashable-default", "def f(x={[1]: 2}):\n    return x\n", "reject", lambda: ()),
    Case("mutable-default", "def f(x=[1, 2]):\n    return x\n", "reject", lambda: ()),
    # -- the rest of the class -------------------------------------------------------
    Case("tower-of-powers", _def("return 10 ** 10 ** 9 > 0"), "stop"),
    Case(
        "squaring-loop",
        _def("for i in range(100):\n    x = x * x\nreturn x > 0"),
        "stop",
        lambda: (3,),
    ),
    Case(
        "self-sum-loop",
        _def("for i in range(10000):\n    x = x + x\nreturn x > 0"),
        "stop",
        lambda: (3,),
    ),
    Case(
        "shift-loop",
        _def("for i in range(64):\n    x = x << x\nreturn x > 0"),
        "stop",
        lambda: (3,),
    ),
    Case("shift-huge", _def("return (1 << n) > 0", "n"), "stop", lambda: (10**9,)),
    Case("string-times-arg", _def("return len('ab' * n)", "n"), "stop", lambda: (10**9,)),
    Case("arg-times-list", _def("return len(n * [0])", "n"), "stop", lambda: (10**9,)),
    Case("range-huge", _def("return sum(range(n))", "n"), "stop", lambda: (10**12,)),
    Case(
        "range-product", _def("return len([0 for a in range(10000) for b in range(10000)])"), "stop"
    ),
    Case("sum-of-lists", _def("return len(sum([[1] * 1000] * 1000, []))"), "reject"),
    Case("sorted-huge", _def("return sorted(range(10**9))[0]"), "stop"),
    Case("str-of-huge-int", _def("return len(str(int('1' * 10000, 16)))"), "stop"),
    Case("int-literal-huge", _def("return 0x" + "f" * 5000 + " > x"), "reject"),
    Case("round-negative-ndigits", _def("return round(5, -10**8)"), "reject"),
    Case("round-computed-ndigits", _def("return round(5, -n)", "n"), "reject", lambda: (10**8,)),
    Case(
        "fstring-doubling",
        _def("s = 'ab'\nfor i in range(64):\n    s = f'{s}{s}'\nreturn s"),
        "stop",
    ),
    Case(
        "repr-escape-doubling",
        _def("s = '\\\\'\n" + "s = str([s])\n" * 40 + "return len(s)"),
        "stop",
    ),
    Case(
        "upper-lower-growth",
        _def("for i in range(40):\n    s = s.upper() + s.lower()\nreturn s", "s"),
        "stop",
        lambda: ("\u0390" * 10,),
    ),
    Case(
        "set-growth-loop",
        _def(
            "acc = frozenset()\nfor i in range(10000):\n    for j in range(10000):\n"
            "        acc = acc | {i * 10000 + j}\nreturn len(acc)"
        ),
        "stop",
    ),
    Case(
        "comprehension-of-copies",
        _def("return len([list(xs) for i in range(10000)])", "xs"),
        "stop",
        lambda: (list(range(10_000)),),
    ),
    Case(
        "comprehension-of-slices",
        _def("return len([s[i:] for i in range(len(s))])", "s"),
        "stop",
        lambda: (LONG[:10_000],),
    ),
    Case(
        "comprehension-of-fresh-strings",
        _def("return [s + str(i) for i in range(10000)]", "s"),
        "stop",
        lambda: ("x" * 9_990,),
    ),
    Case(
        "split-in-loop",
        _def("return sum(len(s.split()) for i in range(10000))", "s"),
        "stop",
        lambda: ("a " * 50_000,),
    ),
    Case(
        "membership-scan-in-loop",
        _def("return sum(1 for a in xs if a in ys)", "xs, ys"),
        "stop",
        lambda: (list(range(10_000)), list(range(10_000, 0, -1))),
    ),
    Case(
        "equal-lists-in-loop",
        _def("c = 0\nfor a in range(10000):\n    c = c + (xs == ys)\nreturn c", "xs, ys"),
        "stop",
        lambda: (list(range(10_000)), list(range(10_000))),
    ),
    Case(
        "count-in-loop",
        _def("return sum(s.count('x') for i in range(10000))", "s"),
        "stop",
        lambda: (LONG,),
    ),
    Case(
        "enumerate-nested",
        _def(
            "n = 0\nfor i, a in enumerate(s):\n    for j, b in enumerate(s):\n"
            "        n += 1\nreturn n",
            "s",
        ),
        "stop",
        lambda: (LONG,),
    ),
    Case(
        "zip-nested",
        _def("return sum(1 for a, b in zip(s, s) for c, d in zip(s, s))", "s"),
        "stop",
        lambda: (LONG,),
    ),
    Case(
        "tuple-nesting-loop",
        _def("t = ()\nfor i in range(10000):\n    t = (t,)\nreturn t in {1}"),
        "reject",
    ),
    Case(
        "list-nesting-via-pair",
        _def("a = []\nfor i in range(10000):\n    b = [a]\n    a = b\nreturn a == a"),
        "reject",
    ),
    Case(
        "zip-nesting-loop",
        _def("z = zip(x)\nfor i in range(10000):\n    z = zip(z)\nreturn z"),
        "reject",
        lambda: ([1],),
    ),
    Case(
        "dict-nesting-loop",
        _def("d = {}\nfor i in range(10000):\n    d = dict(a=d)\nreturn d"),
        "reject",
    ),
    Case(
        "generator-chain",
        _def("g = (y for y in x)\nfor i in range(5000):\n    g = (y for y in g)\nreturn list(g)"),
        "stop",
        lambda: ([1],),
    ),
    Case(
        "deep-state-compare",
        _def("return x == y", "x, y"),
        "stop",
        lambda: (_deep_list(100_000), _deep_list(100_000)),
    ),
    Case(
        "loop-depth-3",
        _def("return sum(1 for a in s for b in s for c in s)", "s"),
        "reject",
        lambda: (LONG,),
    ),
    Case(
        "straight-line-splits",
        _def("a = s.split()\n" * 200 + "return len(a)", "s"),
        "stop",
        lambda: ("ab " * 300_000,),
    ),
    Case(
        "straight-line-copies",
        _def("a = list(enumerate(s))\n" * 150 + "return len(a)", "s"),
        "stop",
        lambda: (LONG * 5,),
    ),
    Case(
        "big-int-argument-division",
        _def("return x // y + x % y", "x, y"),
        "stop",
        lambda: (10**100_000, 10**99_000),
    ),
    Case(
        "big-int-argument-in-loop",
        _def(
            "z = 0\nfor i in range(10000):\n    for j in range(100):\n        z = x // 3\nreturn z"
        ),
        "stop",
        lambda: (10**100_000,),
    ),
    Case(
        "big-products-in-loop",
        _def(
            "z = 0\nfor i in range(10000):\n    for j in range(100):\n        z = x * x\nreturn 1"
        ),
        "stop",
        lambda: (3**1290,),
    ),
    Case("divmod-huge", _def("return divmod(x, x - 1)"), "stop", lambda: (10**100_000,)),
    Case(
        "endless-argument",
        _def("n = 0\nfor a in x:\n    n += 1\nreturn n"),
        "stop",
        lambda: (itertools.count(),),
    ),
    Case("while-true", _def("while True:\n    pass"), "reject"),
    Case("recursion", _def("return f(x)"), "reject"),
    Case("call-a-local", _def("g = x.count\nreturn g(1)"), "reject", lambda: ([1],)),
    Case("builtin-alias", _def("r = round\nreturn r(5, -10**8)"), "reject"),
    Case("shadow-builtin", _def("len = 5\nreturn len"), "reject"),
    Case("dunder-escape", _def("return x.__class__.__subclasses__()"), "reject"),
    Case(
        "extend-doubling",
        _def("for i in range(100):\n    x.extend(x)\nreturn len(x)"),
        "reject",
        lambda: ([1],),
    ),
    Case("mutate-state", _def("x['a'] = x\nreturn x"), "reject", lambda: ({},)),
    Case("center-padding", _def("return s.center(10**9)", "s"), "reject", lambda: ("a",)),
    Case("expandtabs", _def("return s.expandtabs(10**9)", "s"), "reject", lambda: ("\t",)),
    Case("bytes-alloc", _def("return len(bytes(10**9))"), "reject"),
    Case("dict-fromkeys", _def("return len(dict.fromkeys(range(10**6)))"), "reject"),
    Case("too-many-nodes", "def f(x):\n" + "    x = x + 1\n" * 800 + "    return x\n", "reject"),
]


def run_case(case: Case) -> dict[str, Any]:
    """Compile and call one case; report what happened."""
    from lorekit.sandbox import PredicateError, PredicateRejected, compile_predicate

    started = time.perf_counter()
    result: dict[str, Any] = {"id": case.id, "expect": case.expect}
    try:
        predicate = compile_predicate(case.source)
        value = predicate(*case.args())
        result.update(outcome="returned", value=repr(value)[:80])
    except PredicateRejected as exc:
        result.update(outcome="reject", message=str(exc))
    except PredicateError as exc:
        result.update(outcome="stop", message=str(exc), exc_type=exc.exc_type)
    except BaseException as exc:  # anything else is a failure of the sandbox
        result.update(outcome="escaped", message=f"{type(exc).__name__}: {exc}"[:300])
    result["seconds"] = round(time.perf_counter() - started, 3)
    return result


def _peak_rss_mb() -> float:
    """This process's peak resident memory. On Linux ``ru_maxrss`` survives exec,
    so it would report the parent's (pytest's) peak: read ``VmHWM`` instead."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memory-mb", type=int, default=1024)
    options = parser.parse_args()
    cap = options.memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    for case in CASES:
        print(json.dumps(run_case(case)), flush=True)
    print(
        json.dumps({"summary": True, "cases": len(CASES), "peak_rss_mb": round(_peak_rss_mb(), 1)})
    )


if __name__ == "__main__":
    main()
