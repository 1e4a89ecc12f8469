"""Attribute writes: the code changes what it made, never the library the worker shares.

The worker's own steps run on standard-library classes the code can import
(``json.JSONEncoder`` sends the report, ``json.JSONDecoder`` reads a
session's next job). Writes on the code's own objects, and on instances it
made of library classes, must keep working as in plain Python; a write on a
library class (a statement, ``setattr``, a loop target, a decorator that
changes its argument in place) must be refused. The escape corpus holds the
attacks; this file holds the ordinary uses next to the refusals, and the
wire format's independence from those classes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lorekit.sandbox import Limits, SandboxSession, WorkerPool, child_json, run_code

LIMITS = Limits(wall_s=5.0, cpu_s=4.0, grace_s=1.0)

ORDINARY = {
    "own-instance": (
        "class P:\n    def __init__(self):\n        self.x = 1\np = P()\np.x += 2\n"
        "p._hidden = 4\ndel p.x\nprint(hasattr(p, 'x'), p._hidden)",
        "False 4",
    ),
    "own-class": (
        "class C:\n    n = 0\nC.n += 1\nC._count = 5\nsetattr(C, 'm', 2)\n"
        "delattr(C, 'm')\nprint(C.n, C._count)",
        "1 5",
    ),
    "own-private-augmented": (
        "class Box:\n    pass\nclass Holder:\n    def __init__(self):\n        self.box = Box()\n"
        "h = Holder()\nh.box._n = 1\nh.box._n += 2\nprint(h.box._n)",
        "3",
    ),
    "function-attribute": ("def f():\n    return 1\nf.calls = 3\nprint(f.calls)", "3"),
    "library-instance": (
        "import decimal, textwrap\ndecimal.getcontext().prec = 5\n"
        "w = textwrap.TextWrapper()\nw.width = 9\n"
        "print(decimal.Decimal(1) / 7, w.width)",
        "0.14286 9",
    ),
    "own-enum-member-and-namedtuple": (
        "import collections, enum\nclass E(enum.Enum):\n    A = 1\nE.A.note = 'n'\n"
        "P = collections.namedtuple('P', 'x y')\nP.__doc__ = 'a point'\n"
        "print(E.A.note, P.__doc__, P(1, 2)._replace(x=3))",
        "n a point P(x=3, y=2)",
    ),
    "decorators-on-own-classes": (
        "import dataclasses, functools, typing\n"
        "@functools.total_ordering\n@dataclasses.dataclass(frozen=True)\nclass V:\n"
        "    n: int\n    def __lt__(self, other):\n        return self.n < other.n\n"
        "@typing.final\nclass F:\n    pass\n"
        "@functools.wraps(print)\ndef shout(*a):\n    return a\n"
        "try:\n    V(1).n = 2\nexcept dataclasses.FrozenInstanceError:\n    print('frozen')\n"
        "print(V(1) <= V(2), shout.__name__)",
        "frozen\nTrue print",
    ),
}

REFUSED = {
    "library-class-statement": ("import json\njson.JSONEncoder.indent = 4", "JSONEncoder"),
    "library-class-delete": ("import json\ndel json.JSONDecoder.decode", "JSONDecoder"),
    "library-class-setattr": ("import fractions\nsetattr(fractions.Fraction, 'x', 1)", "Fraction"),
    "library-class-augmented": ("import random\nrandom.Random.VERSION += 1", "Random"),
    "library-class-with-target": (
        "import json\nwith open('f', 'w') as json.JSONEncoder.encode:\n    pass",
        "JSONEncoder",
    ),
    "generic-alias-forwarding": ("import typing\ntyping.List.x = 1", "writes itself"),
    "library-enum-member-augmented": (
        "import re\nflags = [re.IGNORECASE]\nflags[0]._value_ += 1",
        "_value_",
    ),
    "library-enum-member-private": ("import re\nre.IGNORECASE._name_ = 'X'", "_name_"),
    "dataclass-on-library-class": (
        "import dataclasses, json\ndataclasses.dataclass(json.JSONEncoder)",
        "dataclass",
    ),
    "update-wrapper-onto-library-class": (
        "import functools, json\ndef f():\n    pass\nfunctools.update_wrapper(json.JSONEncoder, f)",
        "JSONEncoder",
    ),
    "runtime-checkable-on-library-protocol": (
        "import typing\ntyping.runtime_checkable(typing.SupportsIndex)",
        "runtime_checkable",
    ),
}


@pytest.mark.parametrize("name", sorted(ORDINARY))
def test_ordinary_writes_work(name: str, pool: WorkerPool) -> None:
    code, expected = ORDINARY[name]
    result = run_code(code, pool=pool, limits=LIMITS)
    assert result.ok, result.feedback()
    assert result.output.strip() == expected


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_writes_on_the_library_are_refused(name: str, pool: WorkerPool) -> None:
    code, named = REFUSED[name]
    result = run_code(code, pool=pool, limits=LIMITS)
    assert result.error is not None, f"{name} ran: {result.feedback()}"
    assert result.error_kind == "ForbiddenOperation", result.feedback()
    assert named in result.error.describe()


@pytest.fixture(params=["os", "guard"])
def layer_pool(request: pytest.FixtureRequest) -> Iterator[WorkerPool]:
    yield request.getfixturevalue("os_pool" if request.param == "os" else "guard_pool")


SESSION_ATTACK = """
import json
real = json.JSONDecoder.decode
def decode(self, text, *rest):
    job = real(self, text, *rest)
    if isinstance(job, dict) and job.get('op') == 'run':
        job['policy']['imports'] = list(job['policy']['imports']) + ['os']
        job['policy']['denied_attributes'] = []
    return job
json.JSONDecoder.decode = decode
"""


def test_a_session_run_cannot_rewrite_the_next_job(layer_pool: WorkerPool) -> None:
    """The earlier run of a session would widen the policy its later runs get."""
    with SandboxSession(pool=layer_pool, limits=LIMITS) as session:
        first = session.run(SESSION_ATTACK)
        assert first.error_kind == "ForbiddenOperation", first.feedback()
        second = session.run("import os\nprint('imported', os.getpid())")
        assert second.error_kind == "ForbiddenImport", second.feedback()
        assert "imported" not in second.output


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(alphabet=st.characters(), max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=30,
)


@settings(max_examples=200, deadline=None)
@given(JSON_VALUES)
def test_the_wire_format_is_what_json_writes(value: Any) -> None:
    text = child_json.encode(value)
    assert text == json.dumps(value)
    assert child_json.decode(text.encode()) == json.loads(text)


def test_the_wire_format_ignores_changed_json_classes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(json.JSONEncoder, "encode", lambda self, o: '"FORGED"')
    monkeypatch.setattr(json.JSONEncoder, "iterencode", lambda self, o, _one_shot=False: ["1"])
    monkeypatch.setattr(json.JSONDecoder, "decode", lambda self, s, *a: "FORGED")
    monkeypatch.setattr(json.JSONDecoder, "raw_decode", lambda self, s, idx=0: ("FORGED", 0))
    frame = {"op": "done", "error": {"kind": "CodeError"}, "output": "x\u00e9"}
    text = child_json.encode(frame)
    assert "FORGED" not in text
    assert child_json.decode(text.encode()) == frame


@pytest.mark.parametrize("bad", [b"", b"{", b"[1,]", b"1 2", b"\xff"])
def test_a_malformed_frame_is_a_value_error(bad: bytes) -> None:
    with pytest.raises(ValueError):
        child_json.decode(bad)


def test_non_finite_numbers_travel_as_json_writes_them() -> None:
    text = child_json.encode([math.inf, -math.inf])
    assert text == json.dumps([math.inf, -math.inf])
    back = child_json.decode(b"[NaN, Infinity]")
    assert math.isnan(back[0]) and back[1] == math.inf
