"""TextCraft: compositional Minecraft crafting as a text environment (ADaPT)."""

from lorekit.envs.textcraft.env import TextCraftEnv
from lorekit.envs.textcraft.recipes import Recipe, RecipeBook, RecipeSource, normalize_name
from lorekit.envs.textcraft.solver import next_action, plan
from lorekit.envs.textcraft.sources import DataPackSource, MinecraftDataSource, get_source
from lorekit.envs.textcraft.tasks import build_task_sets, episode_commands

__all__ = [
    "DataPackSource",
    "MinecraftDataSource",
    "Recipe",
    "RecipeBook",
    "RecipeSource",
    "TextCraftEnv",
    "build_task_sets",
    "episode_commands",
    "get_source",
    "next_action",
    "normalize_name",
    "plan",
]
