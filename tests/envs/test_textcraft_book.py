"""Recipe books from both sources: folding, tags, cycles, depths, immutability."""

from __future__ import annotations

from collections import Counter

import pytest

from lorekit.envs.textcraft import DataPackSource, MinecraftDataSource, RecipeBook, normalize_name
from lorekit.envs.textcraft.recipes import Recipe
from lorekit.envs.textcraft.sources import DEFAULT_DATAPACK_DIR, get_source

needs_datapack = pytest.mark.skipif(
    not DEFAULT_DATAPACK_DIR.is_dir(), reason=f"{DEFAULT_DATAPACK_DIR} not present"
)


def _book(source: str) -> RecipeBook:
    return get_source(source)


def test_minecraft_data_folds_variants_into_categories() -> None:
    book = MinecraftDataSource().load()
    (table,) = book.recipes_for("crafting_table")
    assert table.ingredients == (("#planks", 4),)
    (campfire,) = book.recipes_for("campfire")
    assert dict(campfire.ingredients) == {"#coals": 1, "#logs": 3, "stick": 3}
    assert dict(book.recipes_for("oak_planks")[0].ingredients) == {"#oak_logs": 1}


@needs_datapack
def test_both_sources_agree_except_documented_names() -> None:
    a, b = MinecraftDataSource().load(), DataPackSource().load()

    def shape(book: RecipeBook) -> set[tuple[str, int, tuple[tuple[str, int], ...]]]:
        return {(r.output, r.count, r.ingredients) for r in book.recipes}

    only_a, only_b = shape(a) - shape(b), shape(b) - shape(a)
    assert {r[0] for r in only_a} == {r[0] for r in only_b} == {"furnace", "brewing_stand"}
    rename = {"#stone_tool_materials": "#stone_crafting_materials"}
    renamed = {(o, c, tuple((rename.get(i, i), n) for i, n in ings)) for o, c, ings in only_a}
    assert renamed == only_b
    assert a.base_items == b.base_items


def test_cycles_are_broken_by_dropping_unpacking_recipes(source: str) -> None:
    book = _book(source)
    assert book.is_base("iron_nugget") and book.is_craftable("iron_ingot")
    assert book.is_base("diamond") and book.is_craftable("diamond_block")
    assert all(r.count > 1 for r in book.dropped)
    # Cycles through a category stay: quartz slab keeps its recipe.
    assert book.is_craftable("quartz_slab")


def test_depths(source: str) -> None:
    book = _book(source)
    assert book.depth("oak_log") == 0
    assert book.depth("oak_planks") == 1
    assert book.depth("#planks") == 1
    hist = Counter(int(book.depth(i)) for i in book.items if book.is_craftable(i))
    assert hist == {1: 121, 2: 298, 3: 121, 4: 11}


def test_names_are_unique_and_normalised(source: str) -> None:
    book = _book(source)
    assert len(book.known_names()) == len(book.items) + len(book.categories)
    assert book.resolve("  Minecraft:OAK_Planks. ") == "oak_planks"
    assert book.resolve("oak logs") == "#oak_logs"
    assert normalize_name("  Dark   Oak_Sign.") == "dark oak sign"


def test_book_is_immutable_and_cached(source: str) -> None:
    book = _book(source)
    assert _book(source) is book
    assert isinstance(book.recipes, tuple)
    with pytest.raises(TypeError):
        book.categories["#new"] = ("x",)  # type: ignore[index]


def test_tree_contains_each_recipe_once_and_goal_first(source: str) -> None:
    book = _book(source)
    tree = book.tree("wooden_pickaxe")
    assert tree[0].output == "wooden_pickaxe"
    assert len(set(tree)) == len(tree)
    assert book.command(Recipe("stick", 4, (("#planks", 2),))) == "craft 4 stick using 2 planks"


def test_unknown_source_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown recipe source"):
        get_source("nope")
