"""compile_predicate: the allowlist, the run-time bounds and the typed errors."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lorekit.sandbox import PredicateError, PredicateLimits, PredicateRejected, compile_predicate

REWARD = '''
def reward(state, previous, bonus=0.5):
    """Reward gaining wood, more when a table is near."""
    gained = state["wood"] - previous.get("wood", 0)
    near = any(item == "table" for item in state.get("nearby", []))
    total = 0.0
    for i in range(gained):
        total += 1.0
    return total + (bonus if near else 0.0)
'''


def test_compiles_and_runs() -> None:
    reward = compile_predicate(REWARD)
    assert reward.name == "reward" and reward.params == ("state", "previous", "bonus")
    assert reward({"wood": 3, "nearby": ["table"]}, {"wood": 1}) == 2.5
    assert reward({"wood": 1}, {"wood": 1}, bonus=2) == 0.0


def test_allowed_names_are_visible() -> None:
    check = compile_predicate(
        "def ok(x):\n    return near(x) and x > LIMIT",
        allowed_names={"near": lambda x: x % 2 == 0, "LIMIT": 3},
    )
    assert check(4) and not check(2) and not check(5)


def test_comprehensions_and_methods() -> None:
    p = compile_predicate(
        "def f(items):\n"
        "    names = sorted({i['name'].lower() for i in items if i['n'] > 0})\n"
        "    return names[0] + f'/{len(names)}'"
    )
    assert p([{"name": "B", "n": 1}, {"name": "a", "n": 2}, {"name": "c", "n": 0}]) == "a/2"


REJECTED = [
    ("import", "def f(x):\n    import os\n    return x", "Import"),
    ("while", "def f(x):\n    while True:\n        pass", "While"),
    ("dunder-attr", "def f(x):\n    return x.__class__", "__class__"),
    ("private-attr", "def f(x):\n    return x._secret", "_secret"),
    ("private-name", "def f(x):\n    return _x", "_x"),
    ("eval", "def f(x):\n    return eval(x)", "eval"),
    ("exec", "def f(x):\n    exec(x)", "exec"),
    ("open", "def f(x):\n    return open(x).read()", "open"),
    ("getattr", "def f(x):\n    return getattr(x, 'y')", "getattr"),
    ("type", "def f(x):\n    return type(x)", "type"),
    ("recursion", "def f(x):\n    return f(x)", "itself"),
    ("unknown", "def f(x):\n    return os.system('x')", "'os'"),
    ("nested-def", "def f(x):\n    def g():\n        return 1\n    return g()", "FunctionDef"),
    ("class", "def f(x):\n    class A:\n        pass", "ClassDef"),
    (
        "try",
        "def f(x):\n    try:\n        return 1\n    except Exception:\n        return 0",
        "Try",
    ),
    ("raise", "def f(x):\n    raise ValueError()", "Raise"),
    ("with", "def f(x):\n    with x:\n        pass", "With"),
    ("global", "def f(x):\n    global y\n    return x", "Global"),
    ("yield", "def f(x):\n    yield x", "Yield"),
    ("format", "def f(x):\n    return '{0.a}'.format(x)", "format"),
    ("frame", "def f(x):\n    return (i for i in x).gi_frame", "gi_frame"),
    ("set-attr", "def f(x):\n    x.y = 1\n    return x", "set attributes"),
    ("deep-loops", "def f(x):\n    return [a for a in x for b in x for c in x]", "nest"),
    ("decorator", "@staticmethod\ndef f(x):\n    return x", "decorators"),
    ("two-defs", "def f(x):\n    return x\ndef g(x):\n    return x", "exactly one"),
    ("statement", "x = 1", "exactly one"),
    ("default-call", "def f(x=print('hi')):\n    return x", "literals"),
    ("padding", "def f(x):\n    return x.center(10**9)", "center"),
    ("syntax", "def f(x:\n    return x", "syntax"),
    ("walrus", "def f(x):\n    return (y := x)", "NamedExpr"),
]


@pytest.mark.parametrize(("source", "text"), [pytest.param(s, t, id=i) for i, s, t in REJECTED])
def test_rejected_sources(source: str, text: str) -> None:
    with pytest.raises(PredicateRejected) as info:
        compile_predicate(source)
    assert text in str(info.value)


def test_rejection_names_the_line() -> None:
    with pytest.raises(PredicateRejected) as info:
        compile_predicate("def f(x):\n    y = 1\n    return x.__dict__")
    assert info.value.line == 3


@pytest.mark.parametrize(
    ("source", "args"),
    [
        ("def f(n):\n    return sum(range(n))", (10**9,)),
        ("def f(s, n):\n    return s * n", ("ab", 10**9)),
        ("def f(n):\n    return 2 ** n", (10**9,)),
        ("def f(n):\n    return 1 << n", (10**9,)),
        ("def f(s, n):\n    s *= n\n    return s", ("ab", 10**9)),
        ("def f(n):\n    return [0] * n", (10**9,)),
    ],
)
def test_runtime_bounds_fail_fast(source: str, args: tuple[object, ...]) -> None:
    predicate = compile_predicate(source)
    with pytest.raises(PredicateError, match=r"limit|longer"):
        predicate(*args)


def test_small_values_pass_the_guards() -> None:
    p = compile_predicate("def f(n, s):\n    return (2 ** n, s * 3, 1 << n, n * 2.5)")
    assert p(3, "ab") == (8, "ababab", 8, 7.5)


def test_call_errors_are_typed_with_line() -> None:
    p = compile_predicate("def f(state):\n    x = 1\n    return state['missing'] > x")
    with pytest.raises(PredicateError) as info:
        p({})
    assert info.value.exc_type == "KeyError" and info.value.line == 3


def test_limits_are_configurable() -> None:
    p = compile_predicate(
        "def f(n):\n    return len(range(n))", limits=PredicateLimits(max_range=5)
    )
    assert p(5) == 5
    with pytest.raises(PredicateError):
        p(6)


def test_builtins_are_not_reachable_through_the_namespace() -> None:
    p = compile_predicate("def f():\n    return len([1])")
    assert p.function.__globals__["__builtins__"] == {}


@given(st.integers(-1000, 1000), st.integers(-1000, 1000))
def test_matches_python_semantics(a: int, b: int) -> None:
    p = compile_predicate("def f(a, b):\n    return (a * b, a - b, a > b, abs(a) % 7, max(a, b))")
    assert p(a, b) == (a * b, a - b, a > b, abs(a) % 7, max(a, b))
