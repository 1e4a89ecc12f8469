"""The ask-parse-retry helper: feedback, bounds, model errors, what each attempt kept."""

from __future__ import annotations

import json
from typing import Any

import pytest

from lorekit.llm import (
    LLM,
    Completion,
    LLMLengthError,
    LLMServerError,
    Message,
    NoAnswer,
    ParseError,
    RequestParams,
    ScriptedLLM,
    Usage,
    ask,
)
from lorekit.llm.ask import Attempt


class NotJson(ParseError):
    """A method's own parse error: the helper sees only the base class."""


def read_json(out: Completion) -> dict[str, Any]:
    try:
        data = json.loads(out.text)
    except json.JSONDecodeError as exc:
        raise NotJson(f"not JSON ({exc.msg}); answer with one JSON object") from None
    if not isinstance(data, dict):
        raise NotJson("the answer must be a JSON object")
    return data


def conversation() -> list[Message]:
    return [Message("system", "answer in JSON"), Message("user", "what is 2+2?")]


async def test_an_accepted_first_answer_is_one_attempt() -> None:
    llm = ScriptedLLM(['{"n": 4}'])
    messages = conversation()
    answer = await ask(llm, messages, read_json)
    assert answer.ok and answer.value == {"n": 4}
    assert [a.number for a in answer.attempts] == [0]
    assert messages[-1] == Message("assistant", '{"n": 4}')  # the conversation goes on from here
    assert len(messages) == 3 and answer.describe() == "accepted answer 1 of 1"


async def test_a_parse_error_is_fed_back_and_the_model_asked_again() -> None:
    llm = ScriptedLLM(["four", "[4]", '{"n": 4}'])
    messages = conversation()
    answer = await ask(llm, messages, read_json, attempts=3)
    assert answer.ok and answer.value == {"n": 4}
    second = llm.calls[1].messages
    assert second[-2] == Message("assistant", "four")
    assert second[-1].role == "user" and second[-1].content.startswith("not JSON (Expecting value)")
    third = llm.calls[2].messages
    assert third[-1] == Message("user", "the answer must be a JSON object")
    errors = [type(a.error).__name__ if a.error else None for a in answer.attempts]
    assert errors == ["NotJson", "NotJson", None]
    assert [a.text for a in answer.attempts] == ["four", "[4]", '{"n": 4}']


async def test_feedback_wording_is_the_callers() -> None:
    llm = ScriptedLLM(["four", '{"n": 4}'])
    answer = await ask(
        llm, conversation(), read_json, feedback=lambda e: f"Try again. Problem: {e.feedback}"
    )
    assert answer.ok
    assert llm.calls[1].messages[-1].content.startswith("Try again. Problem: not JSON")


async def test_attempts_run_out_without_a_last_feedback() -> None:
    llm = ScriptedLLM(["a", "b", "never asked"])
    messages = conversation()
    answer = await ask(llm, messages, read_json, attempts=2)
    assert not answer.ok and len(llm.calls) == 2 and llm.remaining == 1
    # feedback follows the first answer only: there is no third attempt to read it
    assert [m.role for m in messages] == ["system", "user", "assistant", "user", "assistant"]
    assert answer.text == "b" and isinstance(answer.error, NotJson)
    assert answer.describe().startswith("no usable answer after 2 attempts; last problem: not JSON")
    with pytest.raises(NoAnswer, match="no usable answer after 2 attempts"):
        _ = answer.value


async def test_usage_is_kept_per_attempt() -> None:
    llm = ScriptedLLM(["not json at all", '{"n": 4}'])
    answer = await ask(llm, conversation(), read_json)
    first, second = answer.attempts
    assert first.completion is not None and second.completion is not None
    assert first.usage == first.completion.usage and first.usage.completion_tokens == 4
    assert second.usage.prompt_tokens > first.usage.prompt_tokens  # the retry's prompt is longer
    assert answer.usage == first.usage + second.usage
    assert all(a.latency_s >= 0 for a in answer.attempts)


async def test_a_model_error_is_raised_and_not_asked_again() -> None:
    down = LLMServerError("server said 503", model="m", status=503)
    llm = ScriptedLLM(["four", down, '{"n": 4}'])
    seen: list[Attempt] = []
    with pytest.raises(LLMServerError) as info:
        await ask(llm, conversation(), read_json, attempts=5, on_attempt=seen.append)
    assert info.value is down and len(llm.calls) == 2
    assert [a.model_error is down for a in seen] == [False, True]


async def test_a_kept_model_error_ends_the_answer_with_its_billed_tokens() -> None:
    billed = Usage(120, 64)
    cut = LLMLengthError("the answer hit max_tokens=64 before any text", usage=billed)
    llm = ScriptedLLM(["four", cut])
    answer = await ask(llm, conversation(), read_json, attempts=3, model_error="keep")
    assert not answer.ok and answer.model_error is cut and len(llm.calls) == 2
    assert answer.error is None and answer.text == "four"
    assert answer.attempts[-1].completion is None and answer.attempts[-1].usage == billed
    assert answer.usage == answer.attempts[0].usage + billed
    assert answer.describe().startswith("the model call failed: ")


async def test_a_final_parse_error_stops_at_once() -> None:
    def refuse(out: Completion) -> str:
        raise ParseError("the parser broke on this answer", final=True)

    llm = ScriptedLLM(["x", "y"])
    messages = conversation()
    answer = await ask(llm, messages, refuse, attempts=3)
    assert not answer.ok and len(llm.calls) == 1 and messages[-1].role == "assistant"


async def test_a_parser_bug_propagates() -> None:
    def broken(out: Completion) -> str:
        raise KeyError("bug")

    with pytest.raises(KeyError):
        await ask(ScriptedLLM(["x", "y"]), conversation(), broken)


async def test_params_reach_the_model_and_each_attempt_may_pick_its_model() -> None:
    models = [ScriptedLLM(["four"], model="first"), ScriptedLLM(['{"n": 4}'], model="second")]
    asked: list[int] = []

    def model_for(number: int) -> LLM:
        asked.append(number)
        return models[number]

    params = RequestParams(temperature=0.3, max_tokens=50)
    answer = await ask(model_for, conversation(), read_json, params=params)
    assert answer.ok and asked == [0, 1]
    assert models[0].calls[0].params is params and models[1].calls[0].params is params
    assert [a.completion.model for a in answer.attempts if a.completion] == ["first", "second"]


async def test_on_attempt_runs_before_the_next_call() -> None:
    order: list[str] = []

    def answer_for(msgs: tuple[Message, ...]) -> str:
        first = len(msgs) == 2
        order.append("first call" if first else "second call")
        return "bad" if first else '{"n": 4}'

    await ask(
        ScriptedLLM(fn=answer_for),
        conversation(),
        read_json,
        on_attempt=lambda a: order.append(f"attempt {a.number} {'ok' if a.ok else 'refused'}"),
    )
    assert order == ["first call", "attempt 0 refused", "second call", "attempt 1 ok"]


@pytest.mark.parametrize("attempts", [0, -1, True, 1.5])
async def test_attempts_must_be_a_positive_whole_number(attempts: Any) -> None:
    with pytest.raises(ValueError, match="attempts must be a whole number >= 1"):
        await ask(ScriptedLLM(["{}"]), conversation(), read_json, attempts=attempts)


async def test_each_call_gets_its_own_snapshot_of_the_conversation() -> None:
    class Keeper:
        """A model that keeps the very object it was given."""

        model = "keeper"

        def __init__(self) -> None:
            self.given: list[Any] = []

        async def complete(self, messages: Any, params: RequestParams | None = None) -> Completion:
            self.given.append(messages)
            return Completion("bad" if len(self.given) == 1 else '{"n": 4}')

    keeper = Keeper()
    messages = conversation()
    assert (await ask(keeper, messages, read_json)).ok
    assert [len(m) for m in keeper.given] == [2, 4] and len(messages) == 5
