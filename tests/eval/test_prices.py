"""The price table: dated, the papers' model names priced, a user's file over it checked
field by field, and the spend the store records priced by model."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from lorekit.eval.prices import PriceError, load_prices, price_table, spent
from lorekit.eval.reproduce import load_all
from lorekit.eval.store import RunStore
from lorekit.llm import CallRecord, Completion, Message, Usage
from lorekit.llm.base import RequestParams


def test_the_default_table_is_dated_and_prices_every_paper_model() -> None:
    table = price_table()
    assert table.as_of and "dated" in table.dated and table.as_of in table.dated
    named = {
        m
        for exp in load_all()
        if exp.runnable
        for row in exp.rows
        if row.runnable
        for m in row.paper_models.values()
    }
    # PaLM-540B (Yao et al.'s ReAct row of AgentKit's Table 2) was never sold by the
    # token: the dry run prints that row unpriced, to be priced at the user's --model
    unpriced = [m for m in sorted(named) if table.find(m) is None]
    assert named and unpriced == ["PaLM-540B"]
    assert table.find("GPT-3.5 (chat)") == table.find("gpt-3.5-turbo")
    mix = table.find("GPT-4-0613 + GPT-4-turbo + GPT-3.5-turbo")
    assert mix is not None and mix.name == "gpt-4"  # the dearest part: an upper bound
    assert table.find("no-such-model") is None


def test_a_cached_prefix_costs_the_cached_price() -> None:
    price = price_table().find("gpt-4o")
    assert price is not None and price.cached_prompt is not None
    full = price.cost(1_000_000, 0)
    assert full == pytest.approx(price.prompt)
    assert price.cost(1_000_000, 0, cached=1_000_000) == pytest.approx(price.cached_prompt)


def test_a_file_replaces_and_adds_entries_and_its_date_wins(tmp_path: Path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text(
        "as_of: 2026-11\nmodels:\n"
        "  gpt-4o: {prompt: 1, completion: 2}\n"
        "  my-model: {prompt: 0.5, completion: 0.5, aliases: [Mine]}\n",
        encoding="utf-8",
    )
    table = price_table(path)
    assert table.as_of == "2026-11" and str(path) in table.dated
    gpt = table.find("GPT-4o")
    assert gpt is not None and (gpt.prompt, gpt.cached_prompt) == (1.0, None)
    mine = table.find("mine")
    assert mine is not None and mine.completion == 0.5
    assert table.find("gpt-4o-mini") is not None  # the rest of the default stays


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("- a\n", "expected a mapping with as_of and models"),
        ("models: {x: {prompt: 1, completion: 1}}\n", "as_of: say when these prices"),
        ("as_of: 2026\nmodels: {}\n", "models: expected a mapping of model name"),
        ("as_of: 2026\nmodels: {x: {prompt: -1, completion: 1}}\n", "models.x.prompt: a price"),
        ("as_of: 2026\nmodels: {x: {prompt: 1}}\n", "models.x.completion: missing"),
        ("as_of: 2026\nmodels: {x: {prompt: one, completion: 1}}\n", "expected a number"),
        ("as_of: 2026\nmodels: {x: {prompt: .nan, completion: 1}}\n", "expected a number"),
        ("as_of: 2026\nmodels: {x: {prompt: 1e6, completion: 1}}\n", "write it as 1.0e6"),
        ("as_of: 2026\nmodels: {x: {prompt: 1, completion: 1, cost: 2}}\n", "models.x.cost"),
        ("as_of: 2026\ncurrency: EUR\nmodels: {x: {prompt: 1, completion: 1}}\n", "currency"),
        (
            "as_of: 2026\nmodels:\n  a: {prompt: 1, completion: 1}\n"
            "  b: {prompt: 1, completion: 1, aliases: [A]}\n",
            "'A' already names 'a'",
        ),
        ("as_of: 2026\nmodels: [\n", "p.yaml:3:1: not valid YAML"),
    ],
)
def test_a_bad_file_names_the_file_and_field(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(PriceError, match=r"p\.yaml") as caught:
        load_prices(path)
    assert message in str(caught.value)


def _call(model: str, prompt: int, completion: int, *, cached: bool = False) -> CallRecord:
    usage = Usage(prompt, completion)
    out = Completion("a", usage, model=model, cached=cached)
    return CallRecord(
        "executor", model, (Message("user", "q"),), RequestParams(), time.time(), 0.1, out
    )


def test_spent_prices_the_calls_the_store_holds(tmp_path: Path) -> None:
    with RunStore(tmp_path / "s.sqlite3") as db:
        for run in ("r.a", "r.b", "other"):
            db.create_run(run, env="textcraft", agent="react", config={})
            ep = db.episode(run, "t/0", index=0, task_id="t", task_group=None, seed=0)
            ep.add_llm_call(_call("gpt-4o", 1_000_000, 100_000))
            ep.add_llm_call(_call("gpt-4o", 5_000_000, 0, cached=True))  # a cache hit: free
            ep.add_llm_call(_call("mystery", 10, 10))
            ep.finish(success=True, reward=1.0)
        out = spent(db, ["r.a", "r.b", "nope"], price_table())
    assert out.usd == pytest.approx(2 * (2.50 + 0.1 * 10.00))
    assert (out.prompt_tokens, out.completion_tokens) == (2_000_020, 200_020)
    assert out.unpriced == ("mystery",)
