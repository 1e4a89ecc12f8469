"""BM25 search over a catalogue, behind one small interface with three backends.

WebShop searched with Lucene (pyserini, k1 0.9, b 0.4) over each product's
title, description, first bullet point and options, returning the top 50.
LoreKit offers three real BM25 engines (measurements in docs/webshop.md and
``benchmarks/webshop_env.py``):

- ``fts5`` (default): SQLite's FTS5 with the Porter stemmer, in the standard
  library, so the core install searches with no extra package. FTS5's own
  ``bm25()`` fixes k1 1.2 and b 0.75, so LoreKit scores the matches itself,
  in SQL over FTS5's term statistics, with Lucene's BM25 and the original's
  k1 0.9, b 0.4 (pyserini's defaults).
- ``bm25s``: bm25s in Lucene mode with k1 0.9, b 0.4 and the Snowball English
  stemmer (PyStemmer), the closest to the original's scoring; ``webshop`` extra.
- ``tantivy``: tantivy (Lucene's design in Rust), k1 1.2, b 0.75; ``webshop``
  extra.

Every backend takes free text (no query syntax is passed through), breaks ties
by catalogue order, and answers the same query the same way every time. Envs
with equal arguments share one index, so searches may come from several
threads at once: each index serializes its own queries.
"""

from __future__ import annotations

import math
import re
import sqlite3
import threading
from collections.abc import Sequence
from typing import Any, Protocol

from lorekit.extras import requires_extra

SEARCH_RETURN_N = 50
K1, B = 0.9, 0.4
"""BM25's parameters in the original (pyserini's defaults)."""
BACKENDS: tuple[str, ...] = ("fts5", "bm25s", "tantivy")
_TERM = re.compile(r"[0-9a-z]+")
STOPWORDS = frozenset(
    " ".join(
        [
            "a an and are as at be but by for if in into is it no not of on or such that the",
            "their then there these they this to was will with i me my we our you your am",
            "need want would like looking find",
        ]
    ).split()
)
"""Words dropped from queries: Lucene's English stop words (which pyserini's analyzer
drops), the pronouns, and the verbs every instruction starts with."""


def query_terms(query: str) -> list[str]:
    """Lower-case alphanumeric words of ``query`` minus :data:`STOPWORDS`, in order,
    without repeats."""
    words = _TERM.findall(query.lower())
    return [w for w in dict.fromkeys(words) if w not in STOPWORDS]


class SearchIndex(Protocol):
    """Ranks documents (catalogue positions) for a free-text query."""

    def search(self, query: str, k: int = SEARCH_RETURN_N) -> list[int]: ...


class Fts5Index:
    """SQLite FTS5 in memory: FTS5 stems, finds and counts; the score is Lucene's BM25,
    idf = ln(1 + (N - df + 0.5) / (df + 0.5)) times tf / (tf + k1 (1 - b + b dl / avgdl)),
    summed over the query's terms; catalogue order breaks ties."""

    def __init__(self, documents: Sequence[str], *, k1: float = K1, b: float = B) -> None:
        db = sqlite3.connect(":memory:", check_same_thread=False)
        self._db = db
        tokenizer = "tokenize='porter unicode61'"
        db.execute(f"CREATE VIRTUAL TABLE docs USING fts5(body, {tokenizer})")
        db.execute("CREATE VIRTUAL TABLE docs_terms USING fts5vocab(docs, row)")
        db.execute("CREATE VIRTUAL TABLE docs_hits USING fts5vocab(docs, instance)")
        db.execute(f"CREATE VIRTUAL TABLE query USING fts5(body, {tokenizer})")
        db.execute("CREATE VIRTUAL TABLE query_hits USING fts5vocab(query, instance)")
        db.executemany("INSERT INTO docs(rowid, body) VALUES (?, ?)", enumerate(documents))
        # Term counts per document in a plain B-tree: looking a term up there is several
        # times faster than through FTS5's vocabulary table at query time.
        db.execute(
            "CREATE TABLE postings(term TEXT, doc INTEGER, n INTEGER, PRIMARY KEY (term, doc))"
            " WITHOUT ROWID"
        )
        db.execute("INSERT INTO postings SELECT term, doc, count(*) FROM docs_hits GROUP BY 1, 2")
        db.execute("CREATE TABLE lengths(id INTEGER PRIMARY KEY, n INTEGER, norm REAL)")
        db.execute("INSERT INTO lengths SELECT doc, sum(n), 0 FROM postings GROUP BY doc")
        self._size = len(documents)
        total = db.execute("SELECT coalesce(sum(n), 0) FROM lengths").fetchone()[0]
        avgdl = total / self._size if self._size else 1.0
        # The length part of BM25's denominator, once per document.
        db.execute("UPDATE lengths SET norm = ? * (1 - ? + ? * n / ?)", (k1, b, b, avgdl))
        db.commit()
        self._lock = threading.Lock()

    def _stems(self, terms: Sequence[str]) -> list[str]:
        """The query's terms as FTS5 indexes them (stemmed, one per token, in order)."""
        self._db.execute("INSERT INTO query(rowid, body) VALUES (1, ?)", (" ".join(terms),))
        rows = self._db.execute("SELECT term FROM query_hits ORDER BY offset").fetchall()
        self._db.execute("DELETE FROM query")
        return [str(r[0]) for r in rows]

    def search(self, query: str, k: int = SEARCH_RETURN_N) -> list[int]:
        terms = query_terms(query)
        if not terms or not self._size:
            return []
        with self._lock:
            stems = self._stems(terms)
            weights: list[tuple[str, float]] = []
            for stem in stems:
                row = self._db.execute(
                    "SELECT doc FROM docs_terms WHERE term = ?", (stem,)
                ).fetchone()
                df = int(row[0]) if row else 0
                if df:
                    idf = math.log(1 + (self._size - df + 0.5) / (df + 0.5))
                    weights.append((stem, idf))
            if not weights:
                return []
            values = ", ".join("(?, ?)" for _ in weights)
            rows = self._db.execute(
                f"""WITH q(term, idf) AS (VALUES {values})
                SELECT p.doc FROM q JOIN postings AS p ON p.term = q.term
                JOIN lengths AS l ON l.id = p.doc
                GROUP BY p.doc ORDER BY -sum(q.idf * p.n / (p.n + l.norm)), p.doc LIMIT ?""",
                [*(x for pair in weights for x in pair), k],
            ).fetchall()
        return [int(r[0]) for r in rows]


class Bm25sIndex:
    """bm25s, Lucene variant, k1 0.9 and b 0.4 as in WebShop, English stemming."""

    def __init__(self, documents: Sequence[str], *, k1: float = K1, b: float = B) -> None:
        import bm25s
        import Stemmer

        self._bm25s: Any = bm25s
        self._stemmer = Stemmer.Stemmer("english")
        self._size = len(documents)
        tokens = bm25s.tokenize(
            list(documents), stopwords="en", stemmer=self._stemmer, show_progress=False
        )
        self._index: Any = bm25s.BM25(k1=k1, b=b, method="lucene")
        self._index.index(tokens, show_progress=False)
        self._lock = threading.Lock()

    def search(self, query: str, k: int = SEARCH_RETURN_N) -> list[int]:
        terms = query_terms(query)
        if not terms:
            return []
        with self._lock:  # the stemmer and the retriever are not made for threads
            tokens = self._bm25s.tokenize(
                " ".join(terms), stopwords="en", stemmer=self._stemmer, show_progress=False
            )
            if not tokens.ids or not tokens.ids[0]:
                return []
            docs, scores = self._index.retrieve(
                tokens, k=min(k, self._size), show_progress=False, n_threads=1
            )
        ranked = [(-float(s), int(d)) for d, s in zip(docs[0], scores[0], strict=True) if s > 0]
        return [d for _, d in sorted(ranked)]


class TantivyIndex:
    """tantivy in RAM with its English stemming analyzer."""

    def __init__(self, documents: Sequence[str]) -> None:
        import tantivy

        builder = tantivy.SchemaBuilder()
        builder.add_text_field("body", stored=False, tokenizer_name="en_stem")
        builder.add_integer_field("pos", stored=True, fast=True)
        schema = builder.build()
        self._index: Any = tantivy.Index(schema)
        writer = self._index.writer(heap_size=128_000_000, num_threads=1)
        for pos, text in enumerate(documents):
            writer.add_document(tantivy.Document(body=text, pos=pos))
        writer.commit()
        writer.wait_merging_threads()
        self._index.reload()

    def search(self, query: str, k: int = SEARCH_RETURN_N) -> list[int]:
        terms = query_terms(query)
        if not terms:
            return []
        searcher = self._index.searcher()
        parsed = self._index.parse_query(" ".join(terms), ["body"])
        hits = searcher.search(parsed, k).hits
        ranked = [(-float(score), int(searcher.doc(addr)["pos"][0])) for score, addr in hits]
        return [pos for _, pos in sorted(ranked)]


def build_index(documents: Sequence[str], backend: str = "fts5") -> SearchIndex:
    """An index of ``documents`` on ``backend`` (one of :data:`BACKENDS`)."""
    if backend == "fts5":
        return Fts5Index(documents)
    with requires_extra(f"WebShop's {backend!r} search backend", "webshop"):
        if backend == "bm25s":
            return Bm25sIndex(documents)
        if backend == "tantivy":
            return TantivyIndex(documents)
    raise ValueError(f"unknown search backend {backend!r}; choose one of {', '.join(BACKENDS)}")
