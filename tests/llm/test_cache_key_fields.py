"""Every field of a request is part of its cache key, and only those fields.

A field the key ignores lets one request be answered with another's cached
answer: a JSON-mode request getting a plain-text answer, a request stopped at
``"\\n"`` getting the full one. Each case below changes exactly one field of a
request that is already cached and checks that the model is asked again (and
receives the changed field), while the unchanged request still hits.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lorekit.llm import CachedLLM, CacheMiss, Message, ScriptedLLM, request_key
from lorekit.llm.base import RequestParams

BASE: dict[str, Any] = {
    "temperature": 0.7,
    "max_tokens": 64,
    "stop": ["\n\n"],
    "response_format": None,
    "sample": 0,
}
MESSAGES = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]

CHANGES = {
    "response_format": {"response_format": {"type": "json_object"}},
    "response_format schema": {"response_format": {"type": "json_schema", "name": "x"}},
    "temperature": {"temperature": 0.2},
    "max_tokens": {"max_tokens": 65},
    "max_tokens unset": {"max_tokens": None},
    "stop": {"stop": ["\n"]},
    "stop unset": {"stop": None},
    "sample": {"sample": 1},
}


def counting() -> ScriptedLLM:
    n = {"i": 0}

    def answer(msgs: tuple[Message, ...]) -> str:
        n["i"] += 1
        return f"answer {n['i']}"

    return ScriptedLLM(fn=answer, model="m1")


@pytest.mark.parametrize("field", sorted(CHANGES))
async def test_changing_one_parameter_misses_the_cache(tmp_path: Path, field: str) -> None:
    inner = counting()
    llm = CachedLLM(inner, tmp_path / "c.sqlite3")
    first = await llm.complete(MESSAGES, RequestParams(**BASE))
    changed = {**BASE, **CHANGES[field]}
    second = await llm.complete(MESSAGES, RequestParams(**changed))
    assert not second.cached and second.text != first.text
    assert len(inner.calls) == 2
    # the changed request reached the model with the changed value
    name = field.split()[0]
    assert inner.calls[-1].params == RequestParams(**changed)
    assert getattr(inner.calls[-1].params, name) != getattr(inner.calls[0].params, name)
    # and both are now cached apart
    assert (await llm.complete(MESSAGES, RequestParams(**BASE))).text == first.text
    assert (await llm.complete(MESSAGES, RequestParams(**changed))).text == second.text
    assert len(inner.calls) == 2


async def test_json_mode_request_never_gets_a_plain_cached_answer(tmp_path: Path) -> None:
    llm = CachedLLM(ScriptedLLM(default="plain words", model="m1"), tmp_path / "c.sqlite3")
    await llm.complete("give me the facts")
    replay = CachedLLM(counting(), llm.cache, mode="replay")
    with pytest.raises(CacheMiss, match="replay mode has no recorded answer"):
        await replay.complete(
            "give me the facts", RequestParams(response_format={"type": "json_object"})
        )


@pytest.mark.parametrize(
    "other",
    [
        pytest.param([{"role": "user", "content": "hi"}], id="fewer messages"),
        pytest.param(
            [{"role": "user", "content": "be brief"}, {"role": "user", "content": "hi"}],
            id="role",
        ),
        pytest.param(
            [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi!"}],
            id="content",
        ),
        pytest.param(
            [{"role": "user", "content": "hi"}, {"role": "system", "content": "be brief"}],
            id="order",
        ),
    ],
)
async def test_changing_the_messages_misses_the_cache(
    tmp_path: Path, other: list[dict[str, str]]
) -> None:
    inner = counting()
    llm = CachedLLM(inner, tmp_path / "c.sqlite3")
    await llm.complete(MESSAGES, RequestParams(**BASE))
    assert not (await llm.complete(other, RequestParams(**BASE))).cached
    assert len(inner.calls) == 2


async def test_the_model_name_is_part_of_the_key(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    first = CachedLLM(counting(), path)
    await first.complete(MESSAGES, RequestParams(**BASE))
    other_inner = ScriptedLLM(default="from m2", model="m2")
    other = CachedLLM(other_inner, first.cache)
    answer = await other.complete(MESSAGES, RequestParams(**BASE))
    assert not answer.cached and answer.text == "from m2" and len(other_inner.calls) == 1


def test_each_field_changes_request_key() -> None:
    msgs = (Message("system", "be brief"), Message("user", "hi"))
    base = request_key("m", msgs, RequestParams(**BASE))
    keys = {request_key("m", msgs, RequestParams(**{**BASE, **c})) for c in CHANGES.values()}
    keys.add(request_key("m2", msgs, RequestParams(**BASE)))
    keys.add(request_key("m", msgs[1:], RequestParams(**BASE)))
    assert base not in keys and len(keys) == len(CHANGES) + 2
    # an empty format is no format: the same request
    assert request_key("m", msgs, RequestParams(**{**BASE, "response_format": {}})) == base
