"""A model answer holding a lone surrogate ('\\ud83d', half of an emoji) is
recorded, never a crash: SQLite stores UTF-8, which cannot hold one, so the run
store and the completion cache write it as U+FFFD (:mod:`lorekit.textsafe`)."""

from __future__ import annotations

from pathlib import Path

from lorekit.eval.store import RunStore
from lorekit.llm import CachedLLM, Message, ScriptedLLM
from lorekit.llm.base import Completion, RequestParams, Usage
from lorekit.llm.calls import CallRecord
from lorekit.textsafe import storable

HALF = "\ud83d"


def test_storable_replaces_only_lone_surrogates() -> None:
    assert storable(f"a{HALF}b") == "a\ufffdb"
    assert storable("a \U0001f600 b") == "a \U0001f600 b"


def test_the_run_store_records_an_episode_whose_model_text_has_a_lone_surrogate(
    tmp_path: Path,
) -> None:
    with RunStore(tmp_path / "runs.sqlite3") as store:
        rid = store.create_run("r", env="textcraft", agent="react", config={}, meta={})
        ep = store.episode(rid, "t/0", index=0, task_id="t")
        ep.add_step(f"obs {HALF}", f"craft {HALF}", 0.0, True, {"note": HALF})
        ep.add_llm_call(
            CallRecord(
                role="executor",
                model="m",
                messages=(Message("user", f"say {HALF}"),),
                params=RequestParams(),
                started_at=1.0,
                latency_s=0.1,
                completion=Completion(f"Action: craft {HALF}", Usage(1, 1), "m", 0.1),
                error=None,
            )
        )
        ep.finish(success=False, reward=0.0, error=f"bad {HALF}", info={"last": HALF})
        [step] = store.steps(rid, "t/0")
        assert (step.observation, step.action) == ("obs \ufffd", "craft \ufffd")
        assert step.info == {"note": "\ufffd"}
        [call] = store.llm_calls(rid, "t/0")
        assert call["answer"] == "Action: craft \ufffd"
        assert call["messages"][0]["content"] == "say \ufffd"
        assert store.episodes(rid)[0].error == "bad \ufffd"


async def test_the_cache_stores_and_keys_answers_with_a_lone_surrogate(tmp_path: Path) -> None:
    llm = CachedLLM(ScriptedLLM(fn=lambda msgs: f"echo {HALF}", model="m"), tmp_path / "c.sqlite3")
    first = await llm.complete(f"prompt {HALF}")
    again = await llm.complete(f"prompt {HALF}")
    # An answer is made encodable when it is built (it is quoted in the next request).
    assert first.text == "echo \ufffd"
    assert again.cached and again.text == "echo \ufffd"


def test_the_report_page_encodes_whatever_text_it_was_given() -> None:
    from lorekit.eval.report_html import render_page

    page = render_page(f"title {HALF}", f"<p>{HALF}</p>", {"note": HALF}, subtitle=HALF)
    page.encode("utf-8")  # written as UTF-8: a lone surrogate would fail the whole report
    assert "title \ufffd" in page
