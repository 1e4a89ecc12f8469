"""RequestParams: validated when made, handed on whole, keyed as before.

The cache keys below were computed by the code before ``complete()`` took one
``RequestParams`` (when it spread five keyword arguments through every wrapper),
from the same requests. A key that changed would orphan every cache file
recorded before, so a replayed run would miss where it used to hit.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from lorekit.llm import (
    DEFAULT_PARAMS,
    CachedLLM,
    Completion,
    LimitedLLM,
    Limiter,
    Message,
    MeteredLLM,
    RequestParams,
    Roles,
    ScriptedLLM,
    SQLiteCache,
    UsageLedger,
    request_key,
)
from lorekit.llm.calls import CallRecord

MESSAGES = (Message("system", "You are terse."), Message("user", "Craft a stick. \u00e9\u2603"))
FULL: dict[str, Any] = {
    "temperature": 0.7,
    "max_tokens": 128,
    "stop": ["\nObs", "END"],
    "response_format": {"type": "json_object"},
    "sample": 2,
}
KEYS_BEFORE = [
    ({}, "228cf07b636f101cfd10af0e05e408346a9dc88ed5d94acc1914b8678b840e50"),
    (FULL, "27903dbdee0d11837ee6a4914c5087122ca1a251c52ff59256b27423b422aa3d"),
    (
        {"stop": "x", "temperature": 1},
        "5d539a6730983f89f4faba65870026234af1735912317969f82f1a280237cba3",
    ),
    ({"response_format": {}}, "228cf07b636f101cfd10af0e05e408346a9dc88ed5d94acc1914b8678b840e50"),
]


@pytest.mark.parametrize(("fields", "key"), KEYS_BEFORE)
def test_cache_keys_are_those_computed_before(fields: dict[str, Any], key: str) -> None:
    assert request_key("gpt-4o-mini", MESSAGES, RequestParams(**fields)) == key


async def test_a_cache_file_written_before_still_answers(tmp_path: Path) -> None:
    """Rows stored under the old keys are hits for the same requests made today."""
    cache = SQLiteCache(tmp_path / "old.sqlite3")
    for fields, key in KEYS_BEFORE[:3]:
        cache.put(key, "{}", Completion(f"stored for {sorted(fields)}", model="gpt-4o-mini"))
    model = ScriptedLLM([], model="gpt-4o-mini")  # any real call would fail: nothing scripted
    replay = CachedLLM(model, cache, mode="replay")
    for fields, _ in KEYS_BEFORE[:3]:
        out = await replay.complete(list(MESSAGES), RequestParams(**fields))
        assert out.cached and out.text == f"stored for {sorted(fields)}"
    assert model.calls == []


def test_construction_canonicalises() -> None:
    fmt = {"type": "json_object"}
    p = RequestParams(temperature=1, stop="END", response_format=fmt)
    assert p.temperature == 1.0 and isinstance(p.temperature, float)
    assert p.stop == ("END",)
    fmt["type"] = "text"  # the caller's dict changing later changes nothing
    assert p.response_format == {"type": "json_object"}
    assert (
        RequestParams(stop=[]).stop is None
        and RequestParams(response_format={}).response_format is None
    )
    assert RequestParams(stop=["a", "b"]) == RequestParams(stop=("a", "b"))
    assert RequestParams() == DEFAULT_PARAMS
    # replace() goes through the same checks
    assert dataclasses.replace(p, sample=3).sample == 3
    with pytest.raises(ValueError, match="sample"):
        dataclasses.replace(p, sample=-1)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"temperature": 2.5}, "temperature must be within"),
        ({"temperature": float("nan")}, "temperature must be within"),
        ({"max_tokens": 0}, "max_tokens must be a positive int"),
        ({"max_tokens": True}, "max_tokens must be a positive int"),
        ({"max_tokens": 1.5}, "max_tokens must be a positive int"),
        ({"sample": -1}, "sample must be an int >= 0"),
        ({"sample": False}, "sample must be an int >= 0"),
        ({"stop": ["ok", 3]}, "stop must be a string or a list of strings"),
    ],
)
def test_bad_values_are_refused_when_made(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        RequestParams(**fields)


def test_params_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        RequestParams().temperature = 1.0  # type: ignore[misc]


async def test_every_wrapper_hands_on_the_same_object(tmp_path: Path) -> None:
    """Cache, limiter, metering and roles pass the caller's object itself to the
    backend, and the call record carries it."""
    backend = ScriptedLLM(["one", "two"], model="m")
    records: list[CallRecord] = []
    stack = MeteredLLM(
        CachedLLM(LimitedLLM(backend, Limiter(2)), tmp_path / "c.sqlite3"),
        "planner",
        UsageLedger(),
        records.append,
    )
    roles = Roles({"planner": stack})
    params = RequestParams(temperature=0.5, max_tokens=40, stop=["\n"], sample=1)
    await roles["planner"].complete("q", params)
    assert backend.calls[-1].params is params
    assert records[-1].params is params
    await stack.complete("q")  # no params: the defaults, as one object too
    assert backend.calls[-1].params is DEFAULT_PARAMS
    assert records[-1].params == RequestParams()


async def test_scripted_model_reads_max_tokens_from_params() -> None:
    llm = ScriptedLLM(["word " * 40, "word " * 40])
    cut = await llm.complete("q", RequestParams(max_tokens=5))
    assert cut.finish_reason == "length" and len(cut.text) == 20
    whole = await llm.complete("q")
    assert whole.finish_reason == "stop" and whole.text == "word " * 40


async def test_params_travel_by_keyword_through_a_kwargs_wrapper(tmp_path: Path) -> None:
    """The wrappers hand ``params=`` on by name, so a plain forwarding wrapper
    written as ``complete(messages, **kw)`` sits anywhere in a stack."""
    backend = ScriptedLLM(["one"], model="m")

    class Forward:
        model = "m"

        async def complete(self, messages: Any, **kw: Any) -> Completion:
            return await backend.complete(messages, **kw)

    stack = MeteredLLM(CachedLLM(Forward(), tmp_path / "c.sqlite3"), "r")  # type: ignore[arg-type]
    params = RequestParams(max_tokens=9)
    await stack.complete("q", params)
    assert backend.calls[-1].params is params
