"""compile_predicate: the allowlist, the run-time bounds and the typed errors.

The hostile corpus lives in ``test_sandbox_predicate_hostile.py``; here are the
rules one by one and ordinary reward predicates that must keep working.
"""

from __future__ import annotations

import inspect
import itertools
import threading
from typing import Any

import predicate_examples as examples
import pytest
from hypothesis import given, settings
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


ITEMS = ("wood", "stone", "coal", "iron", "diamond", "sapling", "wood_pickaxe", "wood_sword",
         "stone_sword", "iron_sword", "health", "food", "drink", "energy")  # fmt: skip
TEXTURES = ("grass", "sand", "path", "tree", "stone", "coal", "iron", "water", "table", "furnace")
positions = st.tuples(st.integers(-3, 3), st.integers(-3, 3))


@st.composite
def agents(draw: st.DrawFn) -> examples.Agent:
    inventory = {name: draw(st.integers(0, 9)) for name in ITEMS}
    previous = draw(st.dictionaries(st.sampled_from(ITEMS), st.integers(0, 9), max_size=5))
    textures = draw(st.dictionaries(positions, st.sampled_from(TEXTURES), max_size=30))
    kinds = st.sampled_from([examples.Zombie, examples.Cow])
    creatures = draw(st.dictionaries(positions, kinds.map(lambda kind: kind()), max_size=6))
    grid = draw(st.lists(st.lists(st.sampled_from(TEXTURES), min_size=1, max_size=9),
                         min_size=1, max_size=9))  # fmt: skip
    return examples.Agent(
        inventory=inventory,
        world=examples.World(textures, creatures),
        pos=draw(positions),
        previous=previous,
        zombies=draw(st.lists(positions, max_size=4)),
        grid=grid,
    )


COMPILED = {
    fn.__name__: compile_predicate(inspect.getsource(fn), examples.ALLOWED)
    for fn in examples.EXAMPLES
}


@settings(max_examples=60, deadline=None)
@given(agent=agents(), target=positions)
def test_ordinary_predicates_match_plain_python(
    agent: examples.Agent, target: tuple[int, int]
) -> None:
    for fn in examples.EXAMPLES:
        assert COMPILED[fn.__name__](agent, target) == fn(agent, target), fn.__name__


def test_ordinary_predicates_answer_a_known_state() -> None:
    world = examples.World({(1, 0): "coal", (0, 1): "table"}, {(2, 0): examples.Cow()})
    inventory = dict.fromkeys(ITEMS, 5) | {"wood": 3, "wood_pickaxe": 1}
    agent = examples.Agent(inventory, world, (0, 0), {"wood": 1}, [(0, 2)], [["tree"] * 3])
    got = {name: p(agent, (1, 0)) for name, p in COMPILED.items()}
    assert got["collect_coal"] is True and got["place_table"] is False
    assert got["cows_nearby"] == 1 and got["zombie_close"] is True
    assert got["material_score"] == 3 + 10 + 15 + 25 + 50 and got["wood_delta"] == 2.5
    assert got["first_row_summary"] == "05:TREE:1" and got["gained_something"] is True


# -- the narrowed language, rule by rule -------------------------------------------------
NARROWED = [
    ("lambda", "def f(x):\n    return (lambda y: y)(x)", "Lambda"),
    ("map", "def f(x):\n    return list(map(abs, x))", "'map'"),
    ("call-local", "def f(x):\n    g = x.count\n    return g(1)", "not a function"),
    ("call-param", "def f(x, g):\n    return g(x)", "not a function"),
    ("builtin-value", "def f(x):\n    g = len\n    return 1", "may only be called"),
    ("shadow-param", "def f(sum):\n    return sum", "hide the builtin"),
    ("replace", "def f(s):\n    return s.replace('a', 'b')", "'replace'"),
    ("join", "def f(s):\n    return ''.join(s)", "'join'"),
    ("strip-computed", "def f(s, t):\n    return s.strip(t)", "literal characters"),
    ("append", "def f(s):\n    s.append(1)\n    return s", "'append'"),
    ("subscript-store", "def f(d):\n    d['k'] = 1\n    return d", "change a collection"),
    ("computed-spec", "def f(x, n):\n    return f'{x:>{n}}'", "computed format specs"),
    ("wide-spec", "def f(x):\n    return f'{x:>500}'", "width 500"),
    ("round-ndigits", "def f(x, n):\n    return round(x, n)", "ndigits"),
    ("sum-start", "def f(x):\n    return sum(x, [])", "start"),
    ("key-lambda", "def f(x):\n    return max(x, key=lambda v: -v)", "key must be"),
    ("star-call", "def f(x):\n    return max(*x)", "Starred"),
    ("dict-unpack", "def f(x):\n    return {**x}", "unpacking"),
    ("matmul", "def f(x):\n    return x @ x", "'@'"),
    ("nesting", "def f(x):\n    for i in x:\n        x = [x]\n    return x", "nesting"),
    ("list-default", "def f(x=[]):\n    return x", "tuple of these"),
    ("unhashable-default", "def f(x={[1]: 2}):\n    return x", "literal"),
    ("big-literal", "def f(x):\n    return x + 1" + "0" * 2000, "bits"),
    ("deep-not", "def f(x):\n    return " + "not " * 900 + "x", "nest deeper"),
]


@pytest.mark.parametrize(("source", "text"), [pytest.param(s, t, id=i) for i, s, t in NARROWED])
def test_narrowed_language_rejects(source: str, text: str) -> None:
    with pytest.raises(PredicateRejected) as info:
        compile_predicate(source)
    assert text in str(info.value)
    assert info.value.line is not None or "nodes" in str(info.value)


@pytest.mark.parametrize(
    "body",
    [
        "pos = (pos[0] + step[0], pos[1] + step[1])",
        "best = (len(step), step)",
        "acc = acc + [step]",
        "seen = seen | {step[0]}",
        "pair = (step, pos)\n        pos = pair[1]",
    ],
)
def test_loops_that_keep_their_nesting_compile(body: str) -> None:
    source = (
        "def f(path):\n    pos, best, acc, seen = (0, 0), None, [], set()\n"
        f"    for step in path:\n        {body}\n    return pos, best, acc, seen"
    )
    plain: dict[str, Any] = {}
    exec(source, plain)  # the same function as ordinary Python
    path = [(1, 2), (3, 4)]
    assert compile_predicate(source)(path) == plain["f"](path)


@pytest.mark.parametrize(
    "body",
    [
        "acc = (acc, step)",
        "box = [acc]\n        acc = [box[0]]",
        "acc = acc[:] + [acc]",
        "acc = {'next': acc}",
        "acc = list(zip(acc))",
        "acc = [a for a in [acc]]",
    ],
)
def test_loops_that_nest_deeper_every_turn_are_rejected(body: str) -> None:
    source = f"def f(path):\n    acc = []\n    for step in path:\n        {body}\n    return acc"
    with pytest.raises(PredicateRejected, match="nesting grows"):
        compile_predicate(source)


def test_state_attributes_named_like_methods_can_be_read() -> None:
    class Book:
        title = "Dune"
        items = ("map", "key")

    p = compile_predicate("def f(book):\n    return book.title == 'Dune' and 'key' in book.items")
    assert p(Book()) is True
    with pytest.raises(PredicateRejected, match="'title'"):
        compile_predicate("def f(book):\n    return book.title()")


def test_trusted_methods_and_allowed_helpers_pass() -> None:
    class Env:
        def nearby(self, radius: int) -> list[str]:
            return ["tree", "table"][:radius]

    p = compile_predicate(
        "def f(env, target):\n    return near(target) and 'table' in env.nearby(2)",
        allowed_names={"near": lambda t: t == (0, 1)},
    )
    assert p(Env(), (0, 1)) is True and p(Env(), (1, 1)) is False


def test_step_budget_is_per_call_and_names_the_line() -> None:
    p = compile_predicate(
        "def f(xs):\n    n = 0\n    for a in xs:\n        n += 1\n    return n",
        limits=PredicateLimits(max_steps=1_000),
    )
    assert [p(range(100)) for _ in range(50)] == [100] * 50  # the budget refills
    with pytest.raises(PredicateError, match="step budget") as info:
        p(list(range(5_000)))
    assert info.value.line == 3


def test_scans_inside_loops_are_charged() -> None:
    source = "def f(xs, ys):\n    return sum(1 for a in xs if a in ys)"
    p = compile_predicate(source, limits=PredicateLimits(max_steps=50_000))
    assert p([1, 2, 3], {1, 3}) == 2  # a set lookup costs nothing extra
    assert p(list(range(100)), list(range(100))) == 100
    with pytest.raises(PredicateError, match="'in'"):
        p(list(range(1_000)), list(range(1_000)))


def test_enumerate_and_zip_are_charged_by_their_inputs() -> None:
    source = "def f(s):\n    return sum(1 for i, c in enumerate(s) for d in zip(s, s))"
    p = compile_predicate(source, limits=PredicateLimits(max_steps=10_000))
    assert p("abc") == 9
    with pytest.raises(PredicateError, match="budget"):
        p("x" * 1_000)


def test_iterators_of_unknown_length_are_charged_item_by_item() -> None:
    p = compile_predicate(
        "def f(items):\n    n = 0\n    for x in items:\n        n += 1\n    return n",
        limits=PredicateLimits(max_steps=10_000),
    )
    assert p(x for x in range(100)) == 100
    with pytest.raises(PredicateError, match="step budget"):
        p(itertools.count())  # endless, yet the call ends


def test_copies_are_charged_even_outside_loops() -> None:
    source = "def f(s):\n" + "    a = s.split()\n" * 30 + "    return len(a)"
    p = compile_predicate(source, limits=PredicateLimits(max_steps=100_000))
    assert p("a b c") == 3
    with pytest.raises(PredicateError, match="step budget"):
        p("ab " * 10_000)


def test_a_returned_generator_stays_bounded() -> None:
    p = compile_predicate(
        "def f(n):\n    return (a * b for a in range(n) for b in range(n))",
        limits=PredicateLimits(max_steps=1_000),
    )
    assert sum(p(5)) == 100
    with pytest.raises(PredicateError):
        sum(p(1_000))


def test_straight_line_growth_is_caught() -> None:
    p = compile_predicate("def f(s):\n" + "    s = s + s\n" * 20 + "    return len(s)")
    assert compile_predicate("def f(s):\n    s = s + s\n    return len(s)")("ab") == 4
    with pytest.raises(PredicateError, match="max_sequence"):
        p("ab")


def test_loop_free_predicates_get_no_budget() -> None:
    p = compile_predicate("def f(s, p):\n    return s['wood'] - p.get('wood', 0) > 0")
    assert "_sb_box" not in p.function.__code__.co_varnames
    helpers = {n for n in p.function.__code__.co_names if n.startswith("_sb_")}
    assert helpers == {"_sb_exception", "_sb_fail"}  # only the (zero-cost) error handler


def test_concurrent_calls_have_separate_budgets() -> None:
    barrier = threading.Barrier(4, timeout=10)
    p = compile_predicate(
        "def f(n):\n    total = 0\n    for a in range(n):\n        if a == n // 2:\n"
        "            sync()\n        total += sum(1 for b in range(n))\n    return total",
        allowed_names={"sync": barrier.wait},
        limits=PredicateLimits(max_steps=200_000),
    )
    results: list[int] = []
    threads = [threading.Thread(target=lambda: results.append(p(200))) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [40_000] * 4  # all four were mid-call at once, each in its own budget
