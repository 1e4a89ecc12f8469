"""The default search backend scores with the original's BM25: Lucene's formula, k1 0.9, b 0.4."""

from __future__ import annotations

import math
import random

from lorekit.envs.webshop.search import build_index

# Words the Porter stemmer leaves as they are and Lucene's stop list keeps.
WORDS = [
    "red",
    "cat",
    "dog",
    "box",
    "tin",
    "cup",
    "pen",
    "hat",
    "bag",
    "jar",
    "mat",
    "rug",
    "fan",
    "lid",
    "mop",
]


def lucene_bm25(docs: list[list[str]], query: list[str], k1: float, b: float) -> list[int]:
    n = len(docs)
    avgdl = sum(len(d) for d in docs) / n
    df = {term: sum(term in d for d in docs) for term in query}
    scores = []
    for pos, doc in enumerate(docs):
        score = 0.0
        for term in query:
            tf = doc.count(term)
            if tf:
                idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
                score += idf * tf / (tf + k1 * (1 - b + b * len(doc) / avgdl))
        if score > 0:
            scores.append((-score, pos))
    return [pos for _, pos in sorted(scores)]


def test_fts5_ranks_as_lucene_bm25_with_the_originals_parameters() -> None:
    rng = random.Random(4)
    docs = [[rng.choice(WORDS) for _ in range(rng.randint(2, 40))] for _ in range(300)]
    index = build_index([" ".join(d) for d in docs], "fts5")
    differs = 0
    for _ in range(40):
        query = rng.sample(WORDS, rng.randint(1, 3))
        got = index.search(" ".join(query), 50)
        assert got == lucene_bm25(docs, query, 0.9, 0.4)[:50], query
        differs += got != lucene_bm25(docs, query, 1.2, 0.75)[:50]
    assert differs > 10  # FTS5's own bm25() (k1 1.2, b 0.75) would rank these otherwise
