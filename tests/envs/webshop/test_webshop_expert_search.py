"""The expert solves generated tasks; search finds the target for nearly every instruction."""

from __future__ import annotations

import pytest

from lorekit.envs.webshop import BACKENDS, WebShopEnv, build_index, generate_catalog, make_goals


def test_expert_reaches_one_on_100_tasks(env: WebShopEnv) -> None:
    for task in env.tasks("test")[:100]:
        env.reset(task)
        step = None
        while (action := env.expert_action()) is not None:
            step = env.step(action)
        assert step is not None and step.done
        assert step.reward == 1.0 and step.info["success"], (task.id, step.info)
        assert step.info["purchased"] == task.data["asin"]


def test_expert_recovers_from_a_wrong_page(env: WebShopEnv) -> None:
    task = env.tasks("test")[5]
    env.reset(task)
    env.step("search[made]")
    env.step(f"click[{env.products[env.browser.results[-1]].asin}]")  # not on page 1
    env.step("click[Reviews]")
    rewards = []
    while (action := env.expert_action()) is not None:
        rewards.append(env.step(action).reward)
    assert rewards[-1] == 1.0


def _backend_available(name: str) -> bool:
    modules = {"fts5": "sqlite3", "bm25s": "bm25s", "tantivy": "tantivy"}
    try:
        __import__(modules[name])
    except ImportError:
        return False
    return True


@pytest.mark.parametrize("backend", BACKENDS)
def test_search_ranks_the_target_in_the_top_10(backend: str) -> None:
    if not _backend_available(backend):
        pytest.skip(f"{backend} is not installed")
    products = generate_catalog(1000, seed=0)
    goals = make_goals(products, 300, seed=1)
    index = build_index([p.search_text() for p in products], backend)
    where = {p.asin: n for n, p in enumerate(products)}
    found = sum(where[g.asin] in index.search(g.instruction_text, 10) for g in goals)
    assert found / len(goals) >= 0.95
    # Same query, same ranking; a query of unknown words finds nothing.
    assert index.search("shampoo for dry hair") == index.search("shampoo for dry hair")
    assert index.search("zzqx") == [] and index.search("!!!") == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_shared_index_answers_threads_like_one_caller(backend: str) -> None:
    if not _backend_available(backend):
        pytest.skip(f"{backend} is not installed")
    from concurrent.futures import ThreadPoolExecutor

    products = generate_catalog(400, seed=2)
    index = build_index([p.search_text() for p in products], backend)
    queries = [g.instruction_text for g in make_goals(products, 60, seed=2)]
    alone = [index.search(q) for q in queries]
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(index.search, queries))
    assert together == alone
