"""Models and limiters outlive the event loop they were first used on.

A command that builds its models once and runs two stages under two
``asyncio.run`` calls (AutoManual's build, then its formulation, in ``lorekit
reproduce``) used to fail at the second with ``RuntimeError: Event loop is
closed``: the SDK's connection pool and asyncio's semaphore belong to the
first loop. Each loop now gets its own."""

from __future__ import annotations

import asyncio

from lorekit.llm.limits import Limiter
from lorekit.llm.openai_compat import OpenAICompatLLM
from lorekit.llm.testing import OpenAICompatServer


def test_one_model_answers_under_two_event_loops() -> None:
    with OpenAICompatServer(lambda body: "pong") as srv:
        llm = OpenAICompatLLM("m", base_url=srv.base_url, limiter=Limiter(1))
        first = asyncio.run(llm.complete("ping"))
        second = asyncio.run(llm.complete("ping"))  # was: RuntimeError: Event loop is closed
        assert first.text == second.text == "pong" and srv.request_count == 2

        async def closed() -> bool:
            await llm.aclose()
            return True

        assert asyncio.run(closed())


def test_a_limiter_keeps_its_bound_under_a_second_loop() -> None:
    limiter = Limiter(2, rpm=10_000)

    async def burst() -> int:
        async def one() -> None:
            async with limiter.acquire():
                await asyncio.sleep(0.01)

        await asyncio.gather(*(one() for _ in range(6)))
        return limiter.peak_in_flight

    assert asyncio.run(burst()) == 2
    limiter.peak_in_flight = 0
    assert asyncio.run(burst()) == 2  # was: "... is bound to a different event loop"
    assert limiter.in_flight == 0
