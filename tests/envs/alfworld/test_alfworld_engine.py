"""LoreKit's cached engine says and allows exactly what alfworld's own stack does."""

from __future__ import annotations

import json
import re
from pathlib import Path

import textworld
from _alfworld_helpers import run_with_hash_seed
from alfworld.agents.environment.alfred_tw_env import AlfredDemangler, AlfredInfos

from lorekit.envs.alfworld import GeneratedGame
from lorekit.envs.alfworld.engine import AlfredEngine

_NAMED = re.compile(r"\b[a-z]+ \d+\b")


def _shape(text: str) -> tuple[list[str], str]:
    """Listed entities as a multiset, and the text around them: the original
    lists entities in an order that depends on PYTHONHASHSEED."""
    return sorted(_NAMED.findall(text)), _NAMED.sub("X", text)


def test_observations_commands_and_won_match_plain_textworld(
    one_per_type: list[GeneratedGame], tmp_path: Path
) -> None:
    ours = AlfredEngine()
    for game in (one_per_type[0], one_per_type[1], one_per_type[5]):
        folder = game.write(tmp_path)
        theirs = textworld.start(
            str(folder / "game.tw-pddl"),
            textworld.EnvInfos(won=True, admissible_commands=True),
            wrappers=[AlfredDemangler, AlfredInfos],
        )
        expected = theirs.reset()
        ours.load(game.game)
        got = ours.reset()
        assert _shape(got.feedback) == _shape(expected.feedback)
        assert got["admissible_commands"] == expected["admissible_commands"]
        for command in ["look", "bogus command", *game.walkthrough, "inventory"]:
            expected, _, _ = theirs.step(command)
            got, _, _ = ours.step(command)
            assert _shape(got.feedback) == _shape(expected.feedback), command
            assert got["admissible_commands"] == expected["admissible_commands"], command
            assert got["won"] == expected["won"], command
        assert got["won"]
        # A second reset reuses the cached translation and starts over.
        again = ours.reset()
        assert again.feedback == ours.reset().feedback and not again["won"]


_SCRIPT = """
import json, sys
from lorekit.envs.alfworld import generate_games
from lorekit.envs.alfworld.engine import AlfredEngine
game = generate_games(6, seed=8)[5]
engine = AlfredEngine()
engine.load(game.game)
texts = [engine.reset().feedback]
for command in game.walkthrough:
    state, _, _ = engine.step(command)
    texts.append(state.feedback)
    texts.append(" | ".join(state["admissible_commands"]))
print(json.dumps(texts))
"""


def test_text_does_not_depend_on_the_hash_seed() -> None:
    runs = []
    for hash_seed in ("1", "2"):
        runs.append(json.loads(run_with_hash_seed(_SCRIPT, hash_seed)))
    assert runs[0] == runs[1]
    # Receptacles are listed by id, which numbers them in descending order.
    intro = runs[0][0]
    listed = re.findall(r"a (stoveburner|cabinet|drawer) (\d+)", intro)
    for kind in {k for k, _ in listed}:
        numbers = [int(n) for k, n in listed if k == kind]
        assert numbers == sorted(numbers, reverse=True)
