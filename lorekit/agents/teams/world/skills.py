"""Skills: parameterized scripted controllers for one crafter player.

A language model that plans at the level of "collect 5 wood, then make a
pickaxe" should not spend its calls on single moves (the S-Agents and Voyager
agents call skills, too). A skill is started from a call such as
``collect(wood, 5)``, ``craft(stone_pickaxe)``, ``place(stone, 32, 29)``,
``go_to(30, 31)``, ``fight(zombie)``, ``eat(cow)``, ``drink()`` or
``sleep()``; :meth:`Skill.next_action` then yields one crafter action per
tick for its player until it ends with a :class:`SkillResult`: success, or a
failure with a reason a model can act on ("needs stone_pickaxe to collect
iron", "no iron within reach", "gave up after 120 ticks"). Every skill has a
tick budget, so each one ends.

Skills work on any :class:`~lorekit.envs.crafter.core.CrafterCore`: the
single-player game and each player of a party. They read the true map and
walk with the shared :class:`~lorekit.envs.crafter.navigation.Navigator`.
The caller applies the actions (``core.step`` with one action per player, or
a team world's ``act``); several players' skills can run in one world at
once, each counting only what its own player gained.

Names, descriptions, budgets and messages live in ``skills.yaml``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from lorekit.agents.teams.world.skills_base import (
    Skill,
    SkillCall,
    SkillError,
    SkillResult,
    SkillSpec,
    canonical_item,
    error,
    skill_data,
)
from lorekit.agents.teams.world.skills_library import build
from lorekit.envs.crafter.core import CrafterCore

__all__ = [
    "SKILLS",
    "Skill",
    "SkillCall",
    "SkillError",
    "SkillResult",
    "SkillSpec",
    "canonical_item",
    "make_skill",
    "parse_skill_call",
    "player_index",
    "position_text",
    "run_skills",
    "skills_prompt",
]

_CALL = re.compile(r"^\s*([A-Za-z_][\w ]*?)\s*(?:\((.*)\))?\s*\.?\s*$", re.DOTALL)
_INT = re.compile(r"^[+-]?\d+$")


def _specs() -> tuple[SkillSpec, ...]:
    return tuple(
        SkillSpec(name, str(info["params"]), " ".join(str(info["summary"]).split()))
        for name, info in skill_data()["skills"].items()
    )


SKILLS: tuple[SkillSpec, ...] = _specs()


def skills_prompt() -> str:
    """The skill list for a prompt, one ``name(params): summary`` per line."""
    return "\n".join(spec.line() for spec in SKILLS)


def position_text(core: CrafterCore, player: int | str) -> str:
    """Where the player stands in map coordinates, the ones ``go_to`` and
    ``place`` take (the text observation only gives relative directions)."""
    body = core.players[player_index(core, player)]
    facing = {(-1, 0): "west", (1, 0): "east", (0, -1): "north", (0, 1): "south"}
    return str(skill_data()["messages"]["position"]).format(
        x=int(body.pos[0]), y=int(body.pos[1]),
        facing=facing[(int(body.facing[0]), int(body.facing[1]))],
        width=core.area[0], height=core.area[1],
    )  # fmt: skip


# -- parsing -----------------------------------------------------------------------


def parse_skill_call(text: str) -> SkillCall:
    """``"collect(wood, 5)"`` -> ``SkillCall("collect", ("wood", 5))``.

    Names and words are lower-cased and aliases resolved (``make`` ->
    ``craft``, ``water`` -> ``drink``); whole numbers become ints; keyword
    style (``count=5``) is read by position. Only the syntax and the skill
    name are checked here; :func:`make_skill` checks the arguments.
    """
    match = _CALL.match(text[:500])
    if match is None or not match.group(1).strip():
        raise error("syntax", text=text[:80])
    raw_name = re.sub(r"\s+", "_", match.group(1).strip().lower())
    name = str(skill_data()["aliases"]["skills"].get(raw_name, raw_name))
    if name not in skill_data()["skills"]:
        names = ", ".join(skill_data()["skills"])
        raise error("unknown_skill", name=raw_name, names=names)
    inner = (match.group(2) or "").strip()
    args: list[str | int] = []
    if inner:
        for part in inner.split(","):
            value = part.split("=", 1)[-1]  # keyword style: count=5
            word = value.strip().strip("'\"").strip().lower()
            if not word:
                raise error("syntax", text=text[:80])
            args.append(
                int(word) if _INT.match(word) else canonical_item(re.sub(r"\s+", "_", word))
            )
    return SkillCall(name, tuple(args))


# -- building ----------------------------------------------------------------------


def player_index(core: CrafterCore, player: int | str) -> int:
    """0-based index from ``2`` or ``"p3"``; SkillError when there is none."""
    count = len(core.players)
    index: int | None = None
    if isinstance(player, int):
        index = player
    elif re.fullmatch(r"p\d+", str(player).strip().lower()):
        index = int(str(player).strip()[1:]) - 1
    if index is None or not 0 <= index < count:
        raise error("player", player=player, last=count - 1, count=count)
    return index


def make_skill(
    core: CrafterCore, player: int | str, call: str | SkillCall, *, budget: int | None = None
) -> Skill:
    """Start ``call`` for ``player`` (index or ``"pN"``) of ``core``.

    ``budget`` overrides the skill's tick budget from ``skills.yaml``.
    Raises :class:`SkillError` with a one-line fix for a bad call.
    """
    parsed = parse_skill_call(call) if isinstance(call, str) else call
    if not core.players:
        raise SkillError("the world has no players yet: reset the environment before skills")
    return build(core, player_index(core, player), parsed, budget)


def run_skills(
    core: CrafterCore, calls: Mapping[int | str, str | SkillCall], *, budget: int | None = None
) -> dict[int, SkillResult]:
    """Run one skill per listed player side by side until all have ended.

    Players without a skill (or whose skill ended) do ``noop``. A helper for
    scripts and tests that drive a bare core; team worlds apply skill actions
    through their own clock.
    """
    skills = {
        player_index(core, who): make_skill(core, who, call, budget=budget)
        for who, call in calls.items()
    }
    actions = {index: skill.next_action() for index, skill in skills.items()}
    while any(action is not None for action in actions.values()):
        joint = [actions.get(i) or "noop" for i in range(len(core.players))]
        core.step(joint)
        actions = {
            index: skill.next_action() if actions[index] is not None else None
            for index, skill in skills.items()
        }
    results: dict[int, SkillResult] = {}
    for index, skill in skills.items():
        assert skill.result is not None
        results[index] = skill.result
    return results
