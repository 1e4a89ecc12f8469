"""Model prices as data: the dated default table, a user's override, and what a run spent.

A cost estimate is only as good as its prices, and prices change: the table
ships as data (``prices.yaml``) with the date it was read (``as_of``), every
figure printed from it names that date, and ``--prices FILE`` replaces or adds
entries. Names are matched without case, through each entry's aliases (the
papers write "GPT-3.5 (chat)" where a provider writes ``gpt-3.5-turbo``); a
mix a paper reports as one ("GPT-4-0613 + GPT-4-turbo") is priced at its
dearest part, as an upper bound. :func:`spent` prices the tokens the run store
recorded, which is what ``--max-cost`` watches.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import yaml

from lorekit import yamlio
from lorekit.config import PriceSettings, RunConfig
from lorekit.eval.store_read import StoreReader

DEFAULT_PRICES = Path(__file__).with_name("prices.yaml")
_TOP = {"as_of", "source", "models"}
_ENTRY = {"prompt", "completion", "cached_prompt", "aliases"}


class PriceError(ValueError):
    """A price file that does not read; the message names the file and the field."""


@dataclass(frozen=True, slots=True)
class ModelPrice:
    """USD per million tokens; ``cached_prompt`` None: no discount for cached prompt tokens."""

    name: str
    prompt: float
    completion: float
    cached_prompt: float | None = None

    def cost(self, prompt: float, completion: float, cached: float = 0.0) -> float:
        """USD for these tokens; ``cached`` of the prompt tokens at the cached price."""
        cached_price = self.prompt if self.cached_prompt is None else self.cached_prompt
        return (
            (prompt - cached) * self.prompt + cached * cached_price + completion * self.completion
        ) / 1e6


@dataclass(frozen=True, slots=True)
class PriceTable:
    """Prices by model name (and alias, lower-cased); ``as_of`` says how old they are."""

    as_of: str
    source: str
    models: Mapping[str, ModelPrice]
    names: Mapping[str, str] = field(default_factory=dict)
    files: tuple[str, ...] = ()

    @property
    def dated(self) -> str:
        """The line every printed price carries."""
        where = " + ".join(self.files)
        return f"prices as of {self.as_of} ({where}; dated: check yours, or give --prices FILE)"

    def find(self, model: str) -> ModelPrice | None:
        """The price of ``model``; a ``A + B`` mix costs its dearest part; None if unknown."""
        key = self.names.get(model.strip().lower())
        if key is not None:
            return self.models[key]
        if "+" in model:
            parts = [self.find(p) for p in model.split("+") if p.strip()]
            if parts and all(p is not None for p in parts):
                return max(
                    (p for p in parts if p is not None), key=lambda p: p.prompt + p.completion
                )
        return None

    def merged(self, other: PriceTable) -> PriceTable:
        """This table with ``other``'s entries replacing and adding to it (and its date)."""
        models = dict(self.models)
        names = {n: k for n, k in self.names.items() if k not in other.models}
        models.update(other.models)
        names.update(other.names)
        return PriceTable(other.as_of, other.source, models, names, (*self.files, *other.files))


def load_prices(path: Path | str = DEFAULT_PRICES) -> PriceTable:
    """Read and check one price file; any problem is a :class:`PriceError`."""
    path = Path(path)
    label = path.name if path == DEFAULT_PRICES else str(path)
    try:
        data = yamlio.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise PriceError(yamlio.describe_error(exc, label)) from None
    except UnicodeDecodeError:
        raise PriceError(f"{path}: not a text (UTF-8) file; prices are YAML") from None
    except OSError as exc:
        raise PriceError(f"{path}: {exc.strerror or exc}") from None

    def fail(at: str, message: str) -> NoReturn:
        raise PriceError(f"{label}: {at}: {message}")

    if not isinstance(data, dict):
        raise PriceError(f"{label}: expected a mapping with as_of and models")
    for key in data:
        if key not in _TOP:
            fail(str(key), f"unknown field; known: {', '.join(sorted(_TOP))}")
    as_of = data.get("as_of")
    if not isinstance(as_of, str | int) or isinstance(as_of, bool) or not str(as_of).strip():
        fail("as_of", "say when these prices were read (e.g. as_of: 2025-06)")
    models = data.get("models")
    if not isinstance(models, dict) or not models:
        fail("models", "expected a mapping of model name: {prompt, completion}")
    table: dict[str, ModelPrice] = {}
    names: dict[str, str] = {}
    for name, entry in models.items():
        at = f"models.{name}"
        if not isinstance(entry, dict):
            fail(at, "expected a mapping with prompt and completion (USD per million tokens)")
        for key in entry:
            if key not in _ENTRY:
                fail(f"{at}.{key}", f"unknown field; known: {', '.join(sorted(_ENTRY))}")
        numbers = {k: _price(entry, k, at, fail) for k in ("prompt", "completion")}
        cached = _price(entry, "cached_prompt", at, fail) if "cached_prompt" in entry else None
        key = str(name).strip().lower()
        table[key] = ModelPrice(str(name), numbers["prompt"], numbers["completion"], cached)
        aliases = entry.get("aliases") or []
        if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
            fail(f"{at}.aliases", "expected a list of names")
        for alias in [str(name), *aliases]:
            low = alias.strip().lower()
            if names.get(low, key) != key:
                fail(f"{at}.aliases", f"{alias!r} already names {names[low]!r}")
            names[low] = key
    source = data.get("source")
    return PriceTable(str(as_of).strip(), str(source or label), table, names, (label,))


def _price(
    entry: Mapping[str, Any], key: str, at: str, fail: Callable[[str, str], NoReturn]
) -> float:
    value = entry.get(key)
    if value is None:
        fail(f"{at}.{key}", "missing (USD per million tokens)")
    if isinstance(value, str) and _looks_numeric(value):
        fail(f"{at}.{key}", f"YAML reads {value!r} as text; write it as 1.0e6 or 1000000")
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        fail(f"{at}.{key}", f"expected a number (USD per million tokens), got {value!r}")
    if value < 0:
        fail(f"{at}.{key}", f"a price cannot be negative, got {value}")
    return float(value)


def _looks_numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def price_table(override: Path | str | None = None) -> PriceTable:
    """The default table, with a user's file (``--prices``) over it when given."""
    table = load_prices()
    return table if override is None else table.merged(load_prices(override))


def with_list_prices(cfg: RunConfig, table: PriceTable | None = None) -> RunConfig:
    """``cfg`` with each served role that sets no ``price:`` priced from ``table`` (the
    dated default when None), so a run's summary, store and report cost what the table
    says instead of $0; a role's own ``price:`` wins, and a model the table does not
    know stays unpriced. Scripted models cost nothing and are left alone."""
    table = price_table() if table is None else table
    roles = {}
    for name, settings in cfg.roles.items():
        found = None
        if settings.provider != "scripted" and settings.price is None:
            found = table.find(settings.model)
        roles[name] = (
            settings
            if found is None
            else settings.model_copy(
                update={"price": PriceSettings(prompt=found.prompt, completion=found.completion)}
            )
        )
    return cfg.model_copy(update={"roles": roles})


@dataclass(frozen=True, slots=True)
class Spend:
    """What the store recorded for some runs, priced: USD, and the models without a price."""

    usd: float
    prompt_tokens: int
    completion_tokens: int
    unpriced: tuple[str, ...] = ()


def spent(
    store: StoreReader,
    run_ids: Iterable[str],
    table: PriceTable,
    extra: Mapping[str, ModelPrice] | None = None,
) -> Spend:
    """The spend the store holds for ``run_ids`` (committed episodes and calls
    outside them; cache hits cost nothing), priced by model. ``extra`` (prices a
    run config sets per model) wins over the table."""
    usd, prompt, completion, unpriced = 0.0, 0, 0, []
    for model, (p, c) in sorted(store.tokens_by_model(run_ids).items()):
        prompt, completion = prompt + p, completion + c
        price = (extra or {}).get(model) or table.find(model)
        if price is None:
            unpriced.append(model)
        else:
            usd += price.cost(p, c)
    return Spend(usd, prompt, completion, tuple(unpriced))
