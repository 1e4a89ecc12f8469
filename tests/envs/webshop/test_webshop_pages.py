"""Pages and actions as WebShop's text mode has them; bad actions get an observation."""

from __future__ import annotations

from lorekit.envs.checker import check_env
from lorekit.envs.registry import make
from lorekit.envs.webshop import WebShopEnv
from lorekit.envs.webshop.pages import SEP, visible


def open_results(env: WebShopEnv, query: str = "made") -> str:
    env.reset("test-0")
    return env.step(f"search[{query}]").observation


def test_search_page_shows_the_instruction(env: WebShopEnv) -> None:
    obs = env.reset("test-0")
    goal = env.tasks("test")[0].goal
    assert obs.text == SEP.join(["WebShop", "Instruction:", goal, "Search"])
    assert env.candidate_actions()[0].startswith("search[")


def test_results_show_ten_of_the_top_fifty_and_page(env: WebShopEnv) -> None:
    text = open_results(env)
    assert "Page 1 (Total results: 50)" in text and "Next >" in text and "< Prev" not in text
    shown = env.browser.shown_results()
    assert len(shown) == 10
    for i in shown:
        assert env.products[i].asin in text and env.products[i].price_tag in text
    second = env.step("click[Next >]").observation
    assert "Page 2 (Total results: 50)" in second and "< Prev" in second
    assert env.browser.shown_results() == env.browser.results[10:20]
    for _ in range(3):
        env.step("click[next >]")  # case does not matter
    assert "Next >" not in env.step("click[< prev]").observation.split("Page 4")[0]
    assert env.browser.page_number == 4


def test_item_page_options_price_and_subpages(env: WebShopEnv) -> None:
    open_results(env)
    product = env.products[env.browser.shown_results()[0]]
    text = env.step(f"click[{product.asin.lower()}]").observation
    for group, values in product.options.items():
        assert SEP.join([group, *values]) in text
    assert f"Price: {product.price_tag}" in text and text.endswith("Reviews [SEP] Buy Now")
    assert product.description in env.step("click[Description]").observation
    env.step("click[< Prev]")
    features = env.step("click[Features]").observation
    assert all(b in features for b in product.bullet_points)
    env.step("click[< Prev]")
    assert env.browser.page == "item"
    env.step("click[< Prev]")
    assert env.browser.page == "results"
    env.step("click[Back to Search]")
    assert env.browser.page == "search"


def test_options_are_recorded_and_buy_ends_with_reward_parts(env: WebShopEnv) -> None:
    open_results(env)
    product = next(env.products[i] for i in env.browser.shown_results() if env.products[i].options)
    env.step(f"click[{product.asin}]")
    group, values = next(iter(product.options.items()))
    env.step(f"click[{values[-1]}]")
    env.step(f"click[{values[0]}]")  # a second click in the same group replaces the first
    assert env.browser.options == {group: values[0]}
    step = env.step("click[Buy Now]")
    assert step.done and step.info["options"] == {group: values[0]}
    parts = step.info["reward_parts"]
    assert step.reward == parts["reward"]
    assert {"attribute_matches", "option_matches", "price_ok", "r_type"} <= set(parts)
    assert step.observation.startswith("Thank you for shopping with us!")
    assert env.step("click[Buy Now]").observation.startswith("The episode is over")


def test_invalid_actions_explain_and_change_nothing(env: WebShopEnv) -> None:
    env.reset("test-0")
    for bad in ("", "buy it", "click[Buy Now]", "search[]", "click[", "x" * 5000, "\x00"):
        step = env.step(bad)
        assert not step.info["valid"] and step.reward == 0 and step.observation.strip()
        assert env.browser.page == "search"
    open_results(env)
    step = env.step("click[B0NOTHERE1]")
    assert "no button 'B0NOTHERE1'" in step.observation and env.browser.page == "results"
    step = env.step("search[" + "shoes " * 200 + "]")
    assert not step.info["valid"] and "1208 characters long; actions are at most 500" in (
        step.observation
    )


def test_candidate_actions_are_all_valid(env: WebShopEnv) -> None:
    taken: list[str] = []
    for _ in range(5):
        env.reset("test-3")
        for action in taken:
            env.step(action)
        options = env.candidate_actions()
        expert = env.expert_action()
        assert options and expert is not None
        assert expert in options or expert.startswith("search[")  # its own key terms
        for action in options:
            env.reset("test-3")
            for earlier in taken:
                env.step(earlier)
            assert env.step(action).info["valid"], action
        taken.append(expert)  # go deeper along the expert's path
        if expert == "click[Buy Now]":
            break


def test_step_limit_ends_the_episode() -> None:
    env = WebShopEnv(max_steps=3)
    env.reset("test-0")
    steps = [env.step("click[nothing]") for _ in range(3)]
    assert [s.done for s in steps] == [False, False, True]
    assert steps[-1].info["truncated"] and "Step limit of 3" in steps[-1].observation


def test_registry_and_checker() -> None:
    env = make("webshop", max_steps=20)
    assert isinstance(env, WebShopEnv) and env.max_steps == 20
    assert "generated catalogue" in env.describe_split("test")
    check_env(env, episodes=3)


def test_a_search_that_finds_nothing_shows_an_empty_results_page(env: WebShopEnv) -> None:
    env.reset("test-0")
    step = env.step("search[the and of]")  # stop words only: no query terms left
    assert step.info["valid"] and "Page 1 (Total results: 0)" in step.observation
    assert env.candidate_actions() == ["click[Back to Search]", "click[Next >]"]


def test_next_is_shown_on_the_last_results_page_as_in_the_original(env: WebShopEnv) -> None:
    open_results(env)
    last = ""
    for _ in range(4):
        last = env.step("click[Next >]").observation
    assert "Page 5 (Total results: 50)" in last and "Next >" in last
    assert env.products[env.browser.results[-1]].asin in last
    beyond = env.step("click[Next >]")
    assert beyond.info["valid"] and "Page 6 (Total results: 50)" in beyond.observation
    assert env.browser.shown_results() == [] and "click[Next >]" in env.candidate_actions()


def test_search_works_from_any_page_as_in_the_original_text_env(env: WebShopEnv) -> None:
    open_results(env)
    product = next(env.products[i] for i in env.browser.shown_results() if env.products[i].options)
    env.step(f"click[{product.asin}]")
    env.step(f"click[{next(iter(product.options.values()))[0]}]")
    step = env.step("search[made]")
    assert step.info["valid"] and env.browser.page == "results"
    assert env.browser.product is None and env.browser.options == {}
    assert "Page 1 (Total results: 50)" in step.observation


def test_search_only_on_the_search_page_is_an_option() -> None:
    env = WebShopEnv(search_anywhere=False)
    open_results(env)
    step = env.step("search[more]")
    assert not step.info["valid"] and "click[Back to Search]" in step.observation
    assert "search[<query>]" not in step.observation and env.browser.page == "results"


def test_texts_show_as_the_originals_text_nodes() -> None:
    # Stripped; an empty field makes no node; a blank node holding a newline is dropped,
    # one without is an empty text (what beautifulsoup and the original's filter do).
    texts = ["a", "  b  ", "", "   ", "\n  ", "x\ny", "\xa0"]
    assert visible(texts) == ["a", "b", "", "x\ny", ""]
