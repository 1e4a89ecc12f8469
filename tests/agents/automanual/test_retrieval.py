"""BM25 and embedding ranking for the skill library."""

from __future__ import annotations

import math
import zlib

import pytest

from lorekit.agents.automanual.retrieval import (
    BM25Retriever,
    EmbeddingRetriever,
    RetrievalError,
    Retriever,
    make_retriever,
    tokenize,
)
from lorekit.llm.testing import Fault, OpenAICompatServer

GOALS = [
    "pick_clean_then_place: clean some apple and put it in fridge",
    "pick_heat_then_place: heat some egg and put it in garbagecan",
    "look_at_obj_in_light: look at the book under the desklamp",
    "pick_two_obj_and_place: find two pillow and put them in sofa",
]


def test_tokenize_splits_snake_and_camel_case_and_drops_stopwords() -> None:
    assert tokenize("pick_heat_then_place") == ["pick", "heat", "then", "place"]
    assert tokenize("clickButton HTMLParser x2") == ["click", "button", "html", "parser", "x", "2"]
    assert tokenize("Your task is to: put a Mug on the shelf") == ["put", "mug", "on", "shelf"]


def test_bm25_ranks_the_task_sharing_rare_words_first() -> None:
    ranked = BM25Retriever().rank("heat some potato and put it in countertop", GOALS)
    assert ranked[0][0] == 1
    assert sorted(i for i, _ in ranked) == [0, 1, 2, 3]  # every document, once
    scores = [s for _, s in ranked]
    assert scores == sorted(scores, reverse=True)


def test_bm25_rare_terms_weigh_more_than_common_ones() -> None:
    docs = ["put apple in box", "put pear in box", "put plum in box"]
    # "put" and "box" are in every document; only "pear" tells them apart
    ranked = BM25Retriever().rank("put pear box", docs)
    assert ranked[0][0] == 1
    assert ranked[0][1] > ranked[1][1]


def test_bm25_length_normalisation_follows_b() -> None:
    docs = ["egg", "egg " + "filler " * 20]
    short, long = BM25Retriever(b=0.75).rank("egg", docs)
    assert short[0] == 0 and short[1] > long[1]
    flat = dict(BM25Retriever(b=0.0).rank("egg", docs))
    assert math.isclose(flat[0], flat[1])


def test_bm25_ties_and_misses_keep_document_order() -> None:
    docs = ["alpha beta", "gamma", "alpha beta", "delta"]
    ranked = BM25Retriever().rank("alpha", docs)
    assert [i for i, _ in ranked] == [0, 2, 1, 3]
    assert ranked[2][1] == 0.0 and ranked[3][1] == 0.0
    assert BM25Retriever().rank("anything", []) == []
    assert all(s == 0.0 for _, s in BM25Retriever().rank("the a to", docs))


def test_bm25_rejects_bad_parameters() -> None:
    with pytest.raises(ValueError, match="k1"):
        BM25Retriever(k1=-1)
    with pytest.raises(ValueError, match="b must"):
        BM25Retriever(b=1.5)


def _bag_of_letters(text: str) -> list[float]:
    """A deterministic toy embedding: counts of each letter, plus a constant."""
    vec = [0.0] * 27
    for ch in text.lower():
        if "a" <= ch <= "z":
            vec[ord(ch) - ord("a")] += 1.0
    vec[26] = 0.5
    return vec


def _word_hash(text: str) -> list[float]:
    """A toy embedding where shared words mean similar vectors."""
    vec = [0.0] * 64
    for word in tokenize(text):
        vec[zlib.crc32(word.encode()) % 64] += 1.0
    vec[0] += 0.01
    return vec


def test_embedding_retriever_ranks_by_cosine_and_caches_vectors() -> None:
    with OpenAICompatServer(embed=_word_hash) as srv:
        retriever: Retriever = EmbeddingRetriever("embed-test", base_url=srv.base_url)
        assert isinstance(retriever, EmbeddingRetriever)
        ranked = retriever.rank("heat some egg and put it in garbagecan", GOALS)
        assert ranked[0][0] == 1
        assert ranked[0][1] == pytest.approx(max(s for _, s in ranked))
        assert -1.0 <= ranked[-1][1] <= ranked[0][1] <= 1.0 + 1e-9
        sent = srv.requests
        assert len(sent) == 1 and sent[0].path == "/v1/embeddings"
        assert sent[0].body is not None and sent[0].body["model"] == "embed-test"
        assert len(sent[0].body["input"]) == len(GOALS) + 1
        # same documents, new query: only the query goes to the server
        retriever.rank("look at the book under the desklamp", GOALS)
        assert srv.count("/v1/embeddings") == 2
        assert srv.requests[-1].body == {
            "model": "embed-test",
            "input": ["look at the book under the desklamp"],
            "encoding_format": "float",
        }
        assert retriever.cached == len(GOALS) + 2
        retriever.rank(GOALS[0], GOALS)
        assert srv.count("/v1/embeddings") == 2


def test_embedding_retriever_batches_and_matches_a_local_computation() -> None:
    docs = ["apple", "banana", "cherry pie", "zucchini", "apricot jam"]
    with OpenAICompatServer(embed=_bag_of_letters) as srv:
        retriever = EmbeddingRetriever("letters", base_url=srv.base_url, batch_size=2)
        ranked = retriever.rank("pineapple", docs)
        assert srv.count("/v1/embeddings") == 3  # 6 texts in batches of 2
    q = _bag_of_letters("pineapple")

    def cosine(v: list[float]) -> float:
        dot = sum(a * b for a, b in zip(q, v, strict=True))
        return dot / math.sqrt(sum(a * a for a in q) * sum(b * b for b in v))

    expected = sorted(range(len(docs)), key=lambda i: (-cosine(_bag_of_letters(docs[i])), i))
    assert [i for i, _ in ranked] == expected
    for i, score in ranked:
        assert score == pytest.approx(cosine(_bag_of_letters(docs[i])))


def test_embedding_server_error_surfaces_as_a_clear_exception() -> None:
    with OpenAICompatServer(embed=_word_hash) as srv:
        srv.inject(Fault.server_error(503, "embedding model is loading"), times=None)
        retriever = EmbeddingRetriever("embed-test", base_url=srv.base_url, max_retries=0)
        with pytest.raises(RetrievalError) as info:
            retriever.rank("heat an egg", GOALS)
        message = str(info.value)
        assert "HTTP 503" in message and "embedding model is loading" in message
        assert "'embed-test'" in message and srv.base_url in message
        assert retriever.cached == 0
        srv.clear_faults()
        assert retriever.rank("heat an egg", GOALS)[0][0] == 1  # recovers once the server does


def test_embedding_server_without_the_endpoint_is_reported() -> None:
    with OpenAICompatServer() as srv:  # chat only: /v1/embeddings is a 404
        retriever = EmbeddingRetriever("embed-test", base_url=srv.base_url, max_retries=0)
        with pytest.raises(RetrievalError, match="HTTP 404"):
            retriever.rank("x", ["y"])


def test_embedding_vectors_that_cannot_be_compared_are_refused() -> None:
    with OpenAICompatServer(embed=lambda text: [0.0, 0.0]) as srv:
        retriever = EmbeddingRetriever("zero", base_url=srv.base_url, max_retries=0)
        with pytest.raises(RetrievalError, match="zero"):
            retriever.rank("x", ["y"])
    with OpenAICompatServer(embed=lambda text: [1.0] * (1 + len(text))) as srv:
        retriever = EmbeddingRetriever("ragged", base_url=srv.base_url, max_retries=0)
        with pytest.raises(RetrievalError, match="different lengths"):
            retriever.rank("x", ["yy"])


def test_embedding_retriever_needs_a_key_for_a_remote_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("LOREKIT_EMBED_API_KEY", "OPENAI_API_KEY", "LOREKIT_EMBED_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(RetrievalError, match="LOREKIT_EMBED_API_KEY"):
        EmbeddingRetriever("text-embedding-3-small", base_url="https://api.example.com/v1")
    monkeypatch.setenv("LOREKIT_EMBED_BASE_URL", "http://127.0.0.1:9/v1")
    local = EmbeddingRetriever("nomic-embed-text")  # a local server needs no key
    assert local.base_url == "http://127.0.0.1:9/v1"


def test_make_retriever_reads_a_user_option(monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(make_retriever("bm25"), BM25Retriever)
    monkeypatch.setenv("LOREKIT_EMBED_BASE_URL", "http://localhost:8080/v1")
    made = make_retriever("embedding:nomic-embed-text")
    assert isinstance(made, EmbeddingRetriever) and made.model == "nomic-embed-text"
    assert made.base_url == "http://localhost:8080/v1"
    for bad in ("tfidf", "embedding:", "bm25:x", "type:x"):
        with pytest.raises(ValueError, match="use 'bm25', 'type' or 'embedding:MODEL'"):
            make_retriever(bad)
