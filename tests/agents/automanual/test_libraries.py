"""Skill and reflection libraries: replacement, retrieval order, resume, read-only use."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from lorekit.agents.automanual.libraries import Libraries, LibraryError, Retrieved
from lorekit.agents.automanual.retrieval import EmbeddingRetriever, make_retriever
from lorekit.agents.automanual.store import open_db
from lorekit.llm.testing import OpenAICompatServer

HEAT = "pick_heat_then_place"
COOL = "pick_cool_then_place"
CLEAN = "pick_clean_then_place"
LOOK = "look_at_obj_in_light"


@pytest.fixture
def db() -> Iterator[sqlite3.Connection]:
    conn = open_db(None)
    yield conn
    conn.close()


def test_newer_success_replaces_the_skill_and_history_is_kept(db: sqlite3.Connection) -> None:
    lib = Libraries(db, "build-1")
    lib.add_skill(HEAT, "heat some egg and put it in garbagecan", "agent.heat('egg_1')", "ep/0")
    lib.add_skill(COOL, "cool some pan and put it in stoveburner", "agent.cool('pan_1')", "ep/1")
    lib.add_skill(HEAT, "heat some mug and put it in cabinet", "agent.heat('mug_1')", "ep/2")
    skills = lib.skills()
    assert list(skills) == [COOL, HEAT]
    assert skills[HEAT].text == "agent.heat('mug_1')" and skills[HEAT].episode_id == "ep/2"
    assert [e.text for e in lib.history("skill")] == [
        "agent.heat('egg_1')",
        "agent.cool('pan_1')",
        "agent.heat('mug_1')",
    ]
    got = lib.retrieve(HEAT, "heat some potato and put it in fridge")
    assert got is not None
    assert (got.kind, got.task_type, got.text, got.same_type) == (
        "skill",
        HEAT,
        "agent.heat('mug_1')",
        True,
    )
    assert got.score is None and got.episode_id == "ep/2"


def test_reflection_only_when_the_type_has_no_skill(db: sqlite3.Connection) -> None:
    lib = Libraries(db, "b")
    lib.add_skill(HEAT, "heat some egg and put it in garbagecan", "heat_code()", "ep/0")
    lib.add_reflection(COOL, "cool some pan", "I opened the fridge twice", "ep/1")
    lib.add_reflection(COOL, "cool some cup", "cooling needs the fridge, not the sink", "ep/2")
    got = lib.retrieve(COOL, "cool some bread and put it in countertop")
    assert got is not None and got.kind == "reflection" and got.same_type
    assert got.text == "cooling needs the fridge, not the sink"  # the latest reflection
    assert got.heading == f"Reflection from an earlier failure ({COOL})"
    lib.add_skill(COOL, "cool some cup and put it in shelf", "cool_code()", "ep/3")
    after = lib.retrieve(COOL, "cool some bread and put it in countertop")
    assert after is not None and after.kind == "skill" and after.text == "cool_code()"
    # a reflection stored for a type never shadows another type's skill
    assert lib.reflections()[COOL].text == "cooling needs the fridge, not the sink"


def test_without_own_type_the_most_similar_skill_is_retrieved(db: sqlite3.Connection) -> None:
    lib = Libraries(db, "b")
    lib.add_skill(CLEAN, "clean some apple and put it in fridge", "clean_code()", "ep/0")
    lib.add_skill(LOOK, "look at book under the desklamp", "look_code()", "ep/1")
    lib.add_skill(HEAT, "heat some egg and put it in garbagecan", "heat_code()", "ep/2")
    got = lib.retrieve("pick_and_place_simple", "put some egg in garbagecan")
    assert got is not None and not got.same_type
    assert (got.kind, got.task_type, got.text) == ("skill", HEAT, "heat_code()")
    assert got.score is not None and got.score > 0
    assert got.heading == f"Skill for a similar task ({HEAT})"
    # the task type's words count too: "look" names the look_at_obj_in_light skill
    near = lib.retrieve("look_at_obj_in_light_two", "examine the pen with the lamp")
    assert near is not None and near.task_type == LOOK
    # nothing in common: nothing is offered rather than an arbitrary skill
    assert lib.retrieve("other_type", "zzz qqq") is None
    # and the fallback can be switched off
    assert Libraries(db, "b", similar=False).retrieve("pick_and_place_simple", "put egg") is None


def test_the_exact_type_rule_shows_the_types_own_skill_or_none(db: sqlite3.Connection) -> None:
    """``retriever=type``, the authors' MiniWoB++ rule: no neighbour's skill, ever; the
    type's reflection still comes when it has no skill."""
    lib = Libraries(db, "b")
    lib.add_skill(HEAT, "heat some egg and put it in garbagecan", "heat_code()", "ep/0")
    lib.add_reflection(COOL, "cool some pan", "the fridge cools", "ep/1")
    exact = Libraries(db, "b", retriever=make_retriever("type"), readonly=True)
    own = exact.retrieve(HEAT, "heat some potato and put it in fridge")
    assert own is not None and own.same_type and own.text == "heat_code()"
    shown = exact.retrieve_all("pick_heat_then_place_two", "heat some egg and put it in garbagecan")
    assert shown == []  # BM25 shows the heat skill here
    assert Libraries(db, "b", readonly=True).retrieve_all("pick_heat_then_place_two", "heat egg")
    cool = exact.retrieve_all(COOL, "cool some egg and put it in garbagecan")
    assert [(r.kind, r.task_type) for r in cool] == [("reflection", COOL)]


async def test_retrieve_async_matches_retrieve(db: sqlite3.Connection) -> None:
    lib = Libraries(db, "b")
    lib.add_skill(CLEAN, "clean some apple and put it in fridge", "clean_code()", "ep/0")
    lib.add_skill(HEAT, "heat some egg and put it in garbagecan", "heat_code()", "ep/1")
    lib.add_reflection(COOL, "cool some cup", "reflect", "ep/2")
    for task_type, goal in [
        (HEAT, "heat a cup"),
        (COOL, "cool a cup"),
        ("pick_and_place_simple", "put some apple in fridge"),
        ("unknown", "zzz"),
    ]:
        assert await lib.retrieve_async(task_type, goal) == lib.retrieve(task_type, goal)


def test_similarity_can_use_an_embedding_server(db: sqlite3.Connection) -> None:
    def embed(text: str) -> Sequence[float]:
        # a toy model that only knows whether a text is about temperature
        hot = any(w in text for w in ("heat", "warm", "microwave"))
        return [1.0, 0.1] if hot else [0.1, 1.0]

    with OpenAICompatServer(embed=embed) as srv:
        retriever = EmbeddingRetriever("toy", base_url=srv.base_url, max_retries=0)
        lib = Libraries(db, "b", retriever=retriever)
        lib.add_skill(CLEAN, "clean some apple and put it in fridge", "clean_code()", "ep/0")
        lib.add_skill(HEAT, "heat some egg and put it in garbagecan", "heat_code()", "ep/1")
        got = lib.retrieve("warm_things", "warm a mug with the microwave")
        assert got is not None and got.task_type == HEAT and got.score == pytest.approx(1.0)
        assert srv.count("/v1/embeddings") == 1


def test_truncate_to_drops_the_tail_of_unkept_episodes(db: sqlite3.Connection) -> None:
    lib = Libraries(db, "b")
    lib.add_skill(HEAT, "seed task", "seed_code()", None)  # the human example: always kept
    lib.add_skill(HEAT, "heat egg", "heat_v1()", "ep/0")
    lib.add_reflection(COOL, "cool pan", "reflect_v1", "ep/1")
    lib.add_skill(HEAT, "heat mug", "heat_v2()", "ep/2")
    lib.add_reflection(COOL, "cool cup", "reflect_v2", "ep/2")
    before = lib.snapshot()
    assert before["added"] == {"skill": 3, "reflection": 2}
    assert lib.truncate_to({"ep/0", "ep/1"}) == 2
    assert lib.skills()[HEAT].text == "heat_v1()"
    assert lib.reflections()[COOL].text == "reflect_v1"
    # a redo of the dropped episode gives the same sequence numbers as the first time
    seq = lib.add_skill(HEAT, "heat mug", "heat_v2()", "ep/2")
    assert seq == before["skills"][HEAT]["seq"]
    assert lib.truncate_to({"ep/0", "ep/1"}) == 1
    lib.add_skill(HEAT, "heat mug", "heat_v2()", "ep/2")
    lib.add_reflection(COOL, "cool cup", "reflect_v2", "ep/2")
    assert lib.snapshot() == before  # a resumed build looks like an uninterrupted one
    assert lib.truncate_to(set()) == 4
    assert [e.text for e in lib.history()] == ["seed_code()"]


def test_builds_do_not_see_each_other(db: sqlite3.Connection) -> None:
    a, b = Libraries(db, "build-a"), Libraries(db, "build-b")
    a.add_skill(HEAT, "heat egg", "a_code()", "ep/0")
    b.add_skill(HEAT, "heat egg", "b_code()", "ep/0")
    assert a.truncate_to(set()) == 1
    assert a.skills() == {} and a.retrieve(HEAT, "heat egg") is None
    got = b.retrieve(HEAT, "heat egg")
    assert got is not None and got.text == "b_code()"


def test_read_only_libraries_read_but_refuse_writes(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    writer = open_db(path)
    Libraries(writer, "b").add_skill(HEAT, "heat egg", "heat_code()", "ep/0", meta={"turns": 2})
    writer.close()
    reader = open_db(path)
    lib = Libraries(reader, "b", readonly=True)
    assert lib.skills()[HEAT].meta == {"turns": 2}
    got = lib.retrieve(HEAT, "heat cup")
    assert got is not None and got.text == "heat_code()"
    with pytest.raises(LibraryError, match="read-only"):
        lib.add_skill(HEAT, "heat cup", "other()", "ep/9")
    with pytest.raises(LibraryError, match="read-only"):
        lib.add_reflection(HEAT, "heat cup", "text", "ep/9")
    with pytest.raises(LibraryError, match="read-only"):
        lib.truncate_to(set())
    assert len(lib.history()) == 1
    reader.close()


def test_empty_entries_are_refused(db: sqlite3.Connection) -> None:
    lib = Libraries(db, "b")
    with pytest.raises(LibraryError, match="empty"):
        lib.add_skill(HEAT, "heat egg", "  \n", "ep/0")
    with pytest.raises(LibraryError, match="task type"):
        lib.add_reflection(" ", "heat egg", "text", "ep/0")
    with pytest.raises(ValueError, match="build id"):
        Libraries(db, "")


def test_section_and_snapshot_are_plain_and_round_trip(db: sqlite3.Connection) -> None:
    lib = Libraries(db, "b")
    lib.add_skill(HEAT, "heat some egg", "agent.go_to('microwave_1')", "ep/0")
    lib.add_reflection(COOL, "cool some pan", "The fridge was closed.", "ep/1")
    skill = lib.retrieve(HEAT, "heat a mug")
    reflection = lib.retrieve(COOL, "cool a cup")
    assert skill is not None and reflection is not None
    assert skill.section() == (
        f"## Skill for a similar task ({HEAT})\nTask: heat some egg\n"
        "```python\nagent.go_to('microwave_1')\n```"
    )
    assert reflection.section().splitlines() == [
        f"## Reflection from an earlier failure ({COOL})",
        "Task: cool some pan",
        "The fridge was closed.",
    ]
    assert Retrieved.from_dict(skill.to_dict()) == skill
    snap = lib.snapshot()
    assert snap["skills"][HEAT]["text"] == "agent.go_to('microwave_1')"
    assert snap["reflections"][COOL]["episode_id"] == "ep/1"
    assert json.loads(json.dumps(snap)) == snap


def test_a_skill_from_a_direct_success_is_never_replaced(db: sqlite3.Connection) -> None:
    # the authors' skill bank: an indirect success's skill gives way to any later
    # success; one that worked at the first try stays its type's skill for good
    lib = Libraries(db, "b")
    lib.add_skill(HEAT, "heat egg", "after_errors()", "ep/0")
    lib.add_skill(HEAT, "heat mug", "first_try()", "ep/1", direct=True)
    lib.add_skill(HEAT, "heat cup", "later_indirect()", "ep/2")
    lib.add_skill(HEAT, "heat pan", "later_direct()", "ep/3", direct=True)
    assert lib.skills()[HEAT].text == "first_try()"
    got = lib.retrieve(HEAT, "heat a potato")
    assert got is not None and got.text == "first_try()" and got.episode_id == "ep/1"
    rows = lib.history("skill")
    assert [e.text for e in rows] == [
        "after_errors()",
        "first_try()",
        "later_indirect()",
        "later_direct()",
    ]  # every conclusion is kept in the history, the later two shelved
    assert [bool(e.meta.get("shelved")) for e in rows] == [False, False, True, True]
    # a resumed build that drops the direct episode replaces again
    lib.truncate_to({"ep/0"})
    lib.add_skill(HEAT, "heat cup", "later_indirect()", "ep/2")
    assert lib.skills()[HEAT].text == "later_indirect()"
    # and the replacement of LoreKit's first version stays an option
    latest = Libraries(db, "c", keep_direct=False)
    latest.add_skill(HEAT, "heat mug", "first_try()", "ep/1", direct=True)
    latest.add_skill(HEAT, "heat cup", "later_indirect()", "ep/2")
    assert latest.skills()[HEAT].text == "later_indirect()"


def test_a_similar_skill_and_the_types_reflection_are_shown_together(
    db: sqlite3.Connection,
) -> None:
    lib = Libraries(db, "b")
    lib.add_skill(HEAT, "heat some egg and put it in garbagecan", "heat_code()", "ep/0")
    lib.add_reflection(
        COOL, "cool some pan and put it in countertop", "the fridge was shut", "ep/1"
    )
    shown = lib.retrieve_all(COOL, "cool some bread and put it in countertop")
    assert [(r.kind, r.task_type, r.same_type) for r in shown] == [
        ("skill", HEAT, False),
        ("reflection", COOL, True),
    ]
    assert shown[1].text == "the fridge was shut"
    # a type with its own skill: that skill alone (a failure never displaces it)
    lib.add_reflection(HEAT, "heat some cup", "the microwave was shut", "ep/2")
    assert [(r.kind, r.text) for r in lib.retrieve_all(HEAT, "heat a mug")] == [
        ("skill", "heat_code()")
    ]
    # nothing similar: the reflection alone
    lib.add_reflection("unlike_any", "zzz qqq", "odd", "ep/3")
    assert [r.kind for r in lib.retrieve_all("unlike_any", "zzz qqq")] == ["reflection"]
    # one item, LoreKit's first way, as an option
    one = Libraries(db, "b", together=False)
    assert [r.kind for r in one.retrieve_all(COOL, "cool some bread")] == ["reflection"]


async def test_retrieve_all_async_matches_retrieve_all(db: sqlite3.Connection) -> None:
    lib = Libraries(db, "b")
    lib.add_skill(CLEAN, "clean some apple and put it in fridge", "clean_code()", "ep/0")
    lib.add_reflection(COOL, "cool some cup", "reflect", "ep/1")
    for together in (True, False):
        lib.together = together
        for task_type, goal in [(CLEAN, "clean a cup"), (COOL, "cool some apple"), ("x", "zzz")]:
            assert await lib.retrieve_all_async(task_type, goal) == lib.retrieve_all(
                task_type, goal
            )
