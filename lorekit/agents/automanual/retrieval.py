"""Text similarity for the skill library: which stored task is most like this one?

AutoManual hands the planner the skill of "the most similar task". When a
task type has a skill of its own that is an exact lookup; only when it has
none (and no reflection either) does similarity decide. Two rankers share one
small protocol:

- :class:`BM25Retriever` is Okapi BM25 over word tokens, written here in a
  few lines: no model, no download, deterministic, good enough to match
  short task goals ("heat some egg and put it in the garbagecan").
- :class:`TypeRetriever` ranks nothing: a task gets the skill of its own type
  or none, the authors' rule on MiniWoB++ (exact type) and, on ALFWorld, what
  their embedding of the type's name amounts to whenever the type has a skill
  (the nearest of six names to one of them is itself).
- :class:`EmbeddingRetriever` asks an OpenAI-compatible ``/v1/embeddings``
  endpoint the user configures (a local server or a hosted one) and ranks by
  cosine similarity. Nothing is downloaded at run time; vectors are cached
  by text, so a library of goals is embedded once.

Both return every document, best first, ties broken by the lower index, so
the same inputs always give the same order.
"""

from __future__ import annotations

import math
import os
import re
import threading
from collections import Counter
from collections.abc import Collection, Sequence
from typing import Any, Protocol

import openai

from lorekit.llm.openai_compat import LOCAL_PLACEHOLDER_KEY, is_local_url
from lorekit.llm.openai_wire import DEFAULT_BASE_URL

EMBED_BASE_URL_ENV = "LOREKIT_EMBED_BASE_URL"
EMBED_API_KEY_ENV = "LOREKIT_EMBED_API_KEY"

STOPWORDS = frozenset(
    {"a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "is", "it", "its", "of"}
    | {"or", "that", "the", "this", "to", "with", "your", "task"}
)
"""Words too common in task goals to say anything about which task is meant."""

_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


class RetrievalError(RuntimeError):
    """The similarity ranking could not be computed (e.g. the embeddings server failed)."""


class Retriever(Protocol):
    """Ranks ``docs`` by similarity to ``query``.

    Returns ``(index, score)`` for every document, best first; equal scores
    keep the documents' order. Scores are only comparable within one call.
    """

    def rank(self, query: str, docs: Sequence[str]) -> list[tuple[int, float]]: ...


def tokenize(text: str, stopwords: Collection[str] = STOPWORDS) -> list[str]:
    """Lower-case word tokens; ``pick_heat_then_place`` and ``clickButton`` split into words."""
    words = (w.lower() for w in _WORD.findall(text))
    return [w for w in words if w not in stopwords]


def _ordered(scores: Sequence[float]) -> list[tuple[int, float]]:
    return sorted(enumerate(scores), key=lambda pair: (-pair[1], pair[0]))


class BM25Retriever:
    """Okapi BM25 (``k1``, ``b``) with the non-negative idf ``ln(1 + (N - n + .5) / (n + .5))``.

    The corpus statistics come from ``docs`` of each call: the library is a
    handful of goals, so there is nothing worth indexing ahead of time.
    A document sharing no word with the query scores 0.
    """

    def __init__(
        self, *, k1: float = 1.5, b: float = 0.75, stopwords: Collection[str] = STOPWORDS
    ) -> None:
        if k1 < 0:
            raise ValueError(f"BM25 k1 must be >= 0, got {k1}")
        if not 0.0 <= b <= 1.0:
            raise ValueError(f"BM25 b must be within [0, 1], got {b}")
        self.k1 = k1
        self.b = b
        self.stopwords = frozenset(stopwords)

    def rank(self, query: str, docs: Sequence[str]) -> list[tuple[int, float]]:
        if not docs:
            return []
        tokenized = [tokenize(d, self.stopwords) for d in docs]
        counts = [Counter(toks) for toks in tokenized]
        n_docs = len(docs)
        avgdl = sum(len(t) for t in tokenized) / n_docs or 1.0
        holding = Counter(term for c in counts for term in c)
        terms = dict.fromkeys(tokenize(query, self.stopwords))  # unique, in order
        scores: list[float] = []
        for toks, tf in zip(tokenized, counts, strict=True):
            norm = self.k1 * (1.0 - self.b + self.b * len(toks) / avgdl)
            score = 0.0
            for term in terms:
                f = tf.get(term, 0)
                if f:
                    n = holding[term]
                    idf = math.log(1.0 + (n_docs - n + 0.5) / (n + 0.5))
                    score += idf * f * (self.k1 + 1.0) / (f + norm)
            scores.append(score)
        return _ordered(scores)


class TypeRetriever:
    """No similarity at all: only a skill of the task's own type is ever shown."""

    def rank(self, query: str, docs: Sequence[str]) -> list[tuple[int, float]]:
        return []


class EmbeddingRetriever:
    """Cosine similarity of embeddings from an OpenAI-compatible endpoint.

    ``base_url`` defaults to ``$LOREKIT_EMBED_BASE_URL``, then
    ``$OPENAI_BASE_URL``, then OpenAI; ``api_key`` to ``$LOREKIT_EMBED_API_KEY``
    then ``$OPENAI_API_KEY`` (a local server needs none). Texts are sent in
    batches of ``batch_size``; each text's unit vector is cached for the life
    of the object (thread-safe, so ranking may run in a worker thread).
    ``max_retries`` is the SDK's own retry count for 429/5xx answers.
    A failed request raises :class:`RetrievalError` naming the server, the
    model and the server's message.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        batch_size: int = 64,
        timeout_s: float = 30.0,
        max_retries: int = 2,
        client: Any | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        url = base_url or os.environ.get(EMBED_BASE_URL_ENV) or os.environ.get("OPENAI_BASE_URL")
        self.base_url = url or DEFAULT_BASE_URL
        self.model = model
        self.batch_size = batch_size
        if client is None:
            key = api_key or os.environ.get(EMBED_API_KEY_ENV) or os.environ.get("OPENAI_API_KEY")
            if not key:
                if not is_local_url(self.base_url):
                    raise RetrievalError(
                        f"embedding model {model!r} at {self.base_url} needs an API key: set "
                        f"{EMBED_API_KEY_ENV} (or OPENAI_API_KEY), or point "
                        f"{EMBED_BASE_URL_ENV} at a local server"
                    )
                key = LOCAL_PLACEHOLDER_KEY
            client = openai.OpenAI(
                base_url=self.base_url, api_key=key, timeout=timeout_s, max_retries=max_retries
            )
        self._client = client
        self._cache: dict[str, tuple[float, ...]] = {}
        self._lock = threading.Lock()
        self.requests = 0
        """Embedding requests sent so far (cache hits send none)."""

    @property
    def cached(self) -> int:
        """How many texts have a cached vector."""
        with self._lock:
            return len(self._cache)

    def embed(self, texts: Sequence[str]) -> list[tuple[float, ...]]:
        """Unit vectors for ``texts``, asking the server only for texts not seen before."""
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        for start in range(0, len(missing), self.batch_size):
            batch = missing[start : start + self.batch_size]
            vectors = self._request(batch)
            with self._lock:
                self._cache.update(zip(batch, vectors, strict=True))
        with self._lock:
            return [self._cache[t] for t in texts]

    def _request(self, batch: list[str]) -> list[tuple[float, ...]]:
        where = f"embedding model {self.model!r} at {self.base_url}"
        with self._lock:
            self.requests += 1
        try:
            reply = self._client.embeddings.create(
                model=self.model, input=batch, encoding_format="float"
            )
        except openai.APIStatusError as exc:
            raise RetrievalError(
                f"{where} failed with HTTP {exc.status_code}: {_server_message(exc)}"
            ) from exc
        except openai.APIError as exc:
            raise RetrievalError(f"{where} failed: {exc}") from exc
        items = sorted(reply.data, key=lambda item: item.index)
        if len(items) != len(batch):
            raise RetrievalError(f"{where} returned {len(items)} vectors for {len(batch)} texts")
        vectors = [_unit(item.embedding, where) for item in items]
        if len({len(v) for v in vectors}) > 1:
            raise RetrievalError(f"{where} returned vectors of different lengths")
        return vectors

    def rank(self, query: str, docs: Sequence[str]) -> list[tuple[int, float]]:
        if not docs:
            return []
        q, *vectors = self.embed([query, *docs])
        if any(len(v) != len(q) for v in vectors):
            raise RetrievalError(
                f"embedding model {self.model!r} gave vectors of different lengths"
            )
        return _ordered([sum(a * b for a, b in zip(q, v, strict=True)) for v in vectors])


RETRIEVERS = ("bm25", "type", "embedding:MODEL")
"""The retriever options a user may name."""


def make_retriever(spec: str) -> Retriever:
    """The retriever named by a user's option: ``bm25``, ``type`` or ``embedding:MODEL``.

    The embeddings server and key come from the environment (see
    :class:`EmbeddingRetriever`), so an option string is all a config needs.
    """
    name, _, model = spec.strip().partition(":")
    if name.lower() == "bm25" and not model:
        return BM25Retriever()
    if name.lower() == "type" and not model:
        return TypeRetriever()
    if name.lower() in ("embedding", "embeddings") and model.strip():
        return EmbeddingRetriever(model.strip())
    raise ValueError(
        f"unknown retriever {spec!r}; use 'bm25', 'type' or 'embedding:MODEL' (an embeddings model"
        f" served at ${EMBED_BASE_URL_ENV} or $OPENAI_BASE_URL)"
    )


def _unit(values: Sequence[float], where: str) -> tuple[float, ...]:
    vector = tuple(float(x) for x in values)
    norm = math.sqrt(sum(x * x for x in vector))
    if not vector or norm == 0.0 or not math.isfinite(norm):
        raise RetrievalError(f"{where} returned an empty, zero or non-finite vector")
    return tuple(x / norm for x in vector)


def _server_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
    return str(exc.message)
