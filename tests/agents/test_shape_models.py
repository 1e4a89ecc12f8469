"""The dry run meters the very models ``reproduce run --simulate`` plays with."""

from __future__ import annotations

import pytest

from lorekit.agents.adapt.plugin import FAMILY as ADAPT_FAMILY
from lorekit.agents.shape_models import prompt_order, shape_roles
from lorekit.agents.simulated import describe, simulated_roles


@pytest.mark.parametrize("env", ["alfworld", "webshop", "textcraft"])
def test_the_dry_run_uses_the_simulation_registry(env: str) -> None:
    shaped = shape_roles(env, "react")
    simulated = simulated_roles(env, {}, "react")
    assert type(shaped["executor"]) is type(simulated["executor"])
    assert shaped["executor"].model == simulated["executor"].model
    assert describe(env, "react")  # the same entry names them in a summary


def test_a_build_is_measured_with_its_stages_and_a_row_without_models_is_not() -> None:
    # a row that tests with a build: the dry run plays the build too, so every stage's
    # scripted model is there (the planner answers the row itself)
    roles = shape_roles("alfworld", "automanual")
    assert {"planner", "builder", "consolidator", "formulator"} <= set(roles)
    assert roles.default == "planner"
    assert {"planner", "builder", "consolidator", "formulator"} <= set(
        shape_roles("miniwob", "automanual")
    )
    with pytest.raises(LookupError, match="no scripted models for agent 'spring' on env 'webshop'"):
        shape_roles("webshop", "spring")


def test_every_agent_with_scripted_models_says_how_it_orders_its_prompts() -> None:
    for agent in {*ADAPT_FAMILY, "agentkit-crafter", "agentkit-webshop", "spring"}:
        assert prompt_order(agent), agent
