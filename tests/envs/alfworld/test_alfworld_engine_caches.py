"""The engine's speed-ups change nothing a player sees.

Command texts are kept per game and keyed by the entities a template names,
so a "go to" text derived from one place is reused from every other; the
grammar parse is shared by games that differ only in their task sentence;
derivations keep their parses and copy contexts one level deep. These play
several games of one room, in turn, along random walks that move around,
and compare every step with plain TextWorld + alfworld's wrappers.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import textworld
from alfworld.agents.environment.alfred_tw_env import AlfredDemangler, AlfredInfos

from lorekit.envs.alfworld.engine import AlfredEngine
from lorekit.envs.alfworld.generate import generate_games
from lorekit.envs.alfworld.grammar import template_uses as _template_uses

_NAMED = re.compile(r"\b[a-z]+ \d+\b")
_GO_TO = "go to [{r.name | receptacleatlocation(r:receptacle, lend:location)}]"


def _shape(text: str) -> tuple[list[str], str]:
    """Listed entities as a multiset, and the text around them (the original's
    list order depends on PYTHONHASHSEED)."""
    return sorted(_NAMED.findall(text)), _NAMED.sub("X", text)


def test_a_template_depends_on_the_entities_it_names() -> None:
    everyone = ["a", "lstart", "lend", "r"]
    assert _template_uses(_GO_TO, everyone) == {"r", "lend"}
    assert _template_uses("take {o} from {r}", ["a", "l", "o", "r"]) == {"o", "r"}
    assert _template_uses("look", ["a", "l"]) == set()
    # A rule to expand, or a query over an unbound placeholder: all of them.
    assert _template_uses("#look.feedback# {r}", ["a", "r"]) == {"a", "r"}
    unbound = "go to [{r.name | receptacleatlocation(r:receptacle, x:location)}]"
    assert _template_uses(unbound, everyone) == set(everyone)


def test_games_of_one_room_in_turn_match_plain_textworld(tmp_path: Path) -> None:
    # Two tasks in the same room: the same receptacle ids, each game its own sentence.
    first, second = generate_games(
        2, seed=5, task_types=["pick_and_place_simple"], floor_plans=[402]
    )
    assert first.traj_data["task_type"] == second.traj_data["task_type"]
    ours = AlfredEngine()
    plain = {}
    for game in (first, second):
        folder = game.write(tmp_path)
        plain[game.path] = textworld.start(
            str(folder / "game.tw-pddl"),
            textworld.EnvInfos(won=True, admissible_commands=True),
            wrappers=[AlfredDemangler, AlfredInfos],
        )
    rng = random.Random(3)
    tasks = set()
    for game in (first, second, first):
        theirs = plain[game.path]
        ours.load(game.game)
        got, expected = ours.reset(), theirs.reset()
        assert _shape(got.feedback) == _shape(expected.feedback)
        tasks.add(got.feedback.rsplit("\n", 1)[-1])
        moves = 0
        for _ in range(10):
            command = rng.choice(got["admissible_commands"])
            moves += command.startswith("go to ")
            got, expected = ours.step(command)[0], theirs.step(command)[0]
            assert _shape(got.feedback) == _shape(expected.feedback), command
            assert got["admissible_commands"] == expected["admissible_commands"], command
            assert got["won"] == expected["won"], command
        assert moves >= 2  # "go to" texts reused from more than one place
    assert len(tasks) == 2  # each game kept its own task sentence
