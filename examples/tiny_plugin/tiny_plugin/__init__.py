"""A LoreKit plugin: the ``lamps`` env, the ``first-choice`` agent and its view.

``register`` is what the ``lorekit.plugins`` entry point names (pyproject.toml);
LoreKit calls it once, the first time any command looks a part up. It names
each part by import string, so nothing here is imported until it is used.
"""


def register(registry):  # type: ignore[no-untyped-def]
    registry.add_env(
        "lamps",
        "tiny_plugin.lamps:LampsEnv",
        "switch on the lamps a task names",
        max_steps=12,  # LoreKit applies the step cap and the rules after the end
        expert=True,
    )
    registry.add_agent(
        "first-choice",
        "tiny_plugin.agent:FirstChoiceAgent",
        "plays untried offered actions in order",
        needs_model=False,
    )
    registry.add_view("first-choice", "tiny_plugin.agent:VIEW")
