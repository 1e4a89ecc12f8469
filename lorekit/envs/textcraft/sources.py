"""Recipe sources: the minecraft-data package (default) and a recipe JSON folder.

Both produce a :class:`RecipeBook` of crafting-table recipes whose ingredients
are items or categories. They differ in how categories arise:

* The data-pack folder (Minecraft's own ``data/minecraft/recipes``) names its
  generic ingredients directly (``{"tag": "minecraft:planks"}``) or lists
  alternatives; tag membership comes from ``data.yaml``.
* minecraft-data has already expanded every generic ingredient into one recipe
  per concrete variant (eight ``crafting_table`` recipes, one per plank type).
  We fold those back: recipes for the same output that differ only in one
  ingredient whose values are exactly a known family become one recipe using
  that family, repeated until nothing more folds (campfire folds twice: logs,
  then coals).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lorekit import yamlio
from lorekit.envs.textcraft.datapack import find_datapack, missing_message
from lorekit.envs.textcraft.recipes import CATEGORY_PREFIX, Recipe, RecipeBook

DATA_FILE = Path(__file__).with_name("data.yaml")
DEFAULT_DATAPACK_DIR = find_datapack()
"""Where the ``datapack`` source read at import (see :mod:`lorekit.envs.textcraft.datapack`)."""
_CRAFTING_TYPES = frozenset({"minecraft:crafting_shaped", "minecraft:crafting_shapeless"})
_NS = "minecraft:"

Ingredients = frozenset[tuple[str, int]]


@functools.cache
def game_data() -> Mapping[str, Any]:
    """The parsed ``data.yaml`` (tags, alternatives, version)."""
    with DATA_FILE.open(encoding="utf-8") as fh:
        data: dict[str, Any] = yamlio.safe_load(fh)
    return data


def _families() -> dict[str, tuple[str, ...]]:
    """Category id -> members, tags first, in file order (first name wins)."""
    data = game_data()
    families: dict[str, tuple[str, ...]] = {}
    for section in ("tags", "alternatives"):
        for name, members in data[section].items():
            families[CATEGORY_PREFIX + name] = tuple(members)
    return families


def _strip(ident: str) -> str:
    return ident[len(_NS) :] if ident.startswith(_NS) else ident


@dataclass(frozen=True)
class DataPackSource:
    """Minecraft's recipe JSON files, one recipe per file (the original source)."""

    directory: Path | None = None
    """None: wherever the pack is found now (:func:`find_datapack`)."""
    name: str = "datapack"

    def load(self) -> RecipeBook:
        return _load_datapack(Path(self.directory or find_datapack()).resolve())


@dataclass(frozen=True)
class MinecraftDataSource:
    """The ``minecraft-data`` package's pc recipes.json (the default source)."""

    version: str = "1.16.5"
    name: str = "minecraft-data"

    def load(self) -> RecipeBook:
        return _load_minecraft_data(self.version)


def get_source(source: str | Path | RecipeBook | Any) -> RecipeBook:
    """Turn ``"minecraft-data"``, ``"datapack"``, a folder or a source into a book."""
    if isinstance(source, RecipeBook):
        return source
    if isinstance(source, Path):
        return DataPackSource(source).load()
    if isinstance(source, str):
        if source in ("minecraft-data", "minecraft_data", "default"):
            return MinecraftDataSource().load()
        if source in ("datapack", "json"):
            return DataPackSource().load()
        if Path(source).is_dir():
            return DataPackSource(Path(source)).load()
        raise ValueError(
            f"unknown recipe source {source!r}: expected 'minecraft-data', 'datapack' "
            "or a folder of recipe JSON files"
        )
    load = getattr(source, "load", None)
    if callable(load):
        book = load()
        if isinstance(book, RecipeBook):
            return book
    raise TypeError(f"not a recipe source: {source!r}")


# -- data pack ----------------------------------------------------------------


@functools.cache
def _load_datapack(directory: Path) -> RecipeBook:
    if not directory.is_dir():
        raise FileNotFoundError(missing_message(directory))
    families = _families()
    tags = {CATEGORY_PREFIX + name for name in game_data()["tags"]}
    by_members: dict[frozenset[str], str] = {}
    for cat, members in families.items():
        by_members.setdefault(frozenset(members), cat)
    used: dict[str, tuple[str, ...]] = {}
    recipes: list[Recipe] = []
    for path in sorted(directory.glob("*.json")):
        with path.open(encoding="utf-8") as fh:
            raw = json.load(fh)
        if raw.get("type") not in _CRAFTING_TYPES:
            continue
        counts: dict[str, int] = {}
        for ingredient, n in _datapack_ingredients(raw):
            ident = _ingredient_id(ingredient, tags, families, by_members, used, path)
            counts[ident] = counts.get(ident, 0) + n
        result = raw["result"]
        output = _strip(result if isinstance(result, str) else result["item"])
        count = 1 if isinstance(result, str) else int(result.get("count", 1))
        recipes.append(Recipe(output, count, tuple(sorted(counts.items())), path.stem))
    return RecipeBook(recipes, used, source=f"datapack:{directory}")


def _datapack_ingredients(raw: Mapping[str, Any]) -> Iterable[tuple[Any, int]]:
    if raw["type"] == "minecraft:crafting_shaped":
        cells = "".join(raw["pattern"])
        for key, ingredient in sorted(raw["key"].items()):
            yield ingredient, cells.count(key)
    else:
        for ingredient in raw["ingredients"]:
            yield ingredient, 1


def _ingredient_id(
    ingredient: Any,
    tags: set[str],
    families: Mapping[str, tuple[str, ...]],
    by_members: Mapping[frozenset[str], str],
    used: dict[str, tuple[str, ...]],
    path: Path,
) -> str:
    """Item id, or category id (recorded in ``used``) for a JSON ingredient."""
    if isinstance(ingredient, list):
        options = [_strip(o["item"]) if "item" in o else None for o in ingredient]
        if len(options) == 1 and options[0] is not None:
            return options[0]
        if any(o is None for o in options):
            raise ValueError(f"{path.name}: nested tags in an ingredient list are not supported")
        members = tuple(o for o in options if o is not None)
        cat = by_members.get(frozenset(members))
        if cat is None:
            cat = CATEGORY_PREFIX + "_or_".join(members)
            used[cat] = members
        else:
            used[cat] = families[cat]
        return cat
    if "item" in ingredient:
        return _strip(ingredient["item"])
    cat = CATEGORY_PREFIX + _strip(ingredient["tag"])
    if cat not in tags:
        raise ValueError(f"{path.name}: tag {ingredient['tag']!r} has no members in data.yaml")
    used[cat] = families[cat]
    return cat


# -- minecraft-data -------------------------------------------------------------


def _minecraft_data_dir() -> Path:
    import minecraft_data

    return Path(minecraft_data.__file__).parent / "data" / "data"


@functools.cache
def _load_minecraft_data(version: str) -> RecipeBook:
    root = _minecraft_data_dir()
    with (root / "dataPaths.json").open(encoding="utf-8") as fh:
        paths = json.load(fh)["pc"].get(version)
    if paths is None:
        raise ValueError(f"minecraft-data has no pc version {version!r}")
    with (root / paths["items"] / "items.json").open(encoding="utf-8") as fh:
        names = {int(item["id"]): str(item["name"]) for item in json.load(fh)}
    with (root / paths["recipes"] / "recipes.json").open(encoding="utf-8") as fh:
        raw_recipes: dict[str, list[dict[str, Any]]] = json.load(fh)
    variants: dict[tuple[str, int], set[Ingredients]] = {}
    for entries in raw_recipes.values():
        for entry in entries:
            output = names[int(entry["result"]["id"])]
            count = int(entry["result"].get("count", 1))
            cells = (
                entry["ingredients"]
                if "ingredients" in entry
                else [c for row in entry["inShape"] for c in row]
            )
            counts: dict[str, int] = {}
            for cell in cells:
                if cell is not None:
                    counts[names[int(cell)]] = counts.get(names[int(cell)], 0) + 1
            variants.setdefault((output, count), set()).add(frozenset(counts.items()))
    families = _families()
    by_members: dict[frozenset[str], str] = {}
    for cat, members in families.items():
        by_members.setdefault(frozenset(members), cat)
    used: dict[str, tuple[str, ...]] = {}
    recipes: list[Recipe] = []
    for (output, count), group in sorted(variants.items()):
        folded = _fold(group, by_members)
        for n, ingredients in enumerate(sorted(tuple(sorted(i)) for i in folded)):
            for ident, _ in ingredients:
                if ident.startswith(CATEGORY_PREFIX):
                    used[ident] = families[ident]
            recipes.append(Recipe(output, count, ingredients, f"{output}#{n}"))
    return RecipeBook(recipes, used, source=f"minecraft-data:{version}")


def _fold(group: set[Ingredients], by_members: Mapping[frozenset[str], str]) -> set[Ingredients]:
    """Fold variant recipes into category recipes until no fold applies.

    Index every recipe by (the rest of its ingredients, the varying count); a
    slot whose values across the index entry are exactly a family's members
    becomes that family. Each round applies the fold with the largest family
    (so 32 logs fold to ``logs`` before four of them fold to ``oak logs``),
    ties broken by sorted order, so the result does not depend on set order.
    """
    current = set(group)
    while True:
        slots: dict[tuple[Ingredients, int], set[str]] = {}
        for recipe in current:
            for ident, n in recipe:
                if ident.startswith(CATEGORY_PREFIX):
                    continue
                slots.setdefault((recipe - {(ident, n)}, n), set()).add(ident)
        candidates = sorted(
            (-len(values), sorted(rest), n, cat, values)
            for (rest, n), values in slots.items()
            if len(values) > 1 and (cat := by_members.get(frozenset(values))) is not None
        )
        if not candidates:
            return current
        _, rest_list, n, cat, values = candidates[0]
        rest = frozenset(rest_list)
        current -= {rest | {(v, n)} for v in values}
        current.add(rest | {(cat, n)})
