"""The LLM extractor (Algorithms 2 and 3) against scripted models on hand-made records."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lorekit.laws.experience import Experience, oracle_experience
from lorekit.laws.extract import ExtractError, Extractor, extract_experience
from lorekit.laws.extract_progress import ProgressMismatch
from lorekit.laws.score import score
from lorekit.llm import ScriptedLLM
from lorekit.llm.base import Message

TRUE_PRECONDITIONS: dict[str, dict[str, Any]] = {
    "collect_wood": {"requires": {}, "nearby": [], "faced": ["tree"]},
    "make_wood_pickaxe": {"requires": {"wood": 1}, "nearby": ["table"], "faced": []},
}
_ACHIEVEMENT = re.compile(r'achievement\s+"(\w+)"')


def state(
    materials: dict[str, int] | None = None,
    tools: dict[str, int] | None = None,
    face: str = "grass",
    table: bool = False,
) -> dict[str, Any]:
    nearby = [["grass", "grass", "grass"], ["grass", "player", "grass"], ["sand", "grass", "water"]]
    if table:
        nearby[0][1] = "table"
    return {
        "attributes": {"health": 9, "food": 7, "drink": 6, "energy": 8},
        "tools": dict(tools or {}),
        "materials": dict(materials or {}),
        "face": face,
        "nearby": nearby,
    }


def record(
    name: str, success: bool, before: dict[str, Any], after: dict[str, Any]
) -> dict[str, Any]:
    action = name
    return {
        "achievement": name,
        "action": action,
        "success": success,
        "before": before,
        "after": after,
    }


def hand_records() -> list[dict[str, Any]]:
    return [
        record("collect_wood", True, state(face="tree"), state({"wood": 1}, face="tree")),
        record("collect_wood", False, state({"wood": 2}), state({"wood": 2})),
        record(
            "collect_wood", True, state({"wood": 3}, face="tree"), state({"wood": 4}, face="tree")
        ),
        record(
            "make_wood_pickaxe",
            True,
            state({"wood": 2}, table=True),
            state({"wood": 1}, {"wood_pickaxe": 1}, table=True),
        ),
        record("make_wood_pickaxe", False, state({"wood": 3}), state({"wood": 3})),
        record(
            "make_wood_pickaxe",
            True,
            state({"wood": 1, "stone": 2}, table=True, face="tree"),
            state({"stone": 2}, {"wood_pickaxe": 1}, table=True, face="tree"),
        ),
    ]


def about(prompt: str, aspect: str) -> bool:
    """Whether an effects prompt asks about ``aspect`` (the words may wrap)."""
    return re.search(rf"player's\s+{aspect}\b", prompt) is not None


def reply(text: str, form: dict[str, Any]) -> str:
    return f"{text}\n```json\n{json.dumps(form)}\n```"


def knowing(messages: tuple[Message, ...]) -> str:
    """A model that reads the records it is shown: costs and gains are the
    before/after differences; preconditions come from a table."""
    prompt = messages[1].content
    match = _ACHIEVEMENT.search(prompt)
    assert match is not None, prompt
    name = match.group(1)
    if "faced before: " in prompt:
        before = re.search(r"^faced before: (.*)$", prompt, re.M).group(1)  # type: ignore[union-attr]
        after = re.search(r"^faced after: +(.*)$", prompt, re.M).group(1)  # type: ignore[union-attr]
        leaves = None if after == before else after
        return reply(f"The {before} became {after}.", {"leaves": leaves})
    if "faced cell hold" in prompt:  # the world's side, before any record
        return reply("Most likely the cell stays as it was.", {"leaves": None})
    if "From what you know" in prompt:
        return reply("Hard to say without seeing it.", {"costs": {}, "gains": {}})
    if re.search(r"^before: ", prompt, re.M):
        before = json.loads(re.search(r"^before: (.*)$", prompt, re.M).group(1))  # type: ignore[union-attr]
        after = json.loads(re.search(r"^after: +(.*)$", prompt, re.M).group(1))  # type: ignore[union-attr]
        costs = {k: v - after.get(k, 0) for k, v in before.items() if v > after.get(k, 0)}
        gains = {k: v - before.get(k, 0) for k, v in after.items() if v > before.get(k, 0)}
        return reply(f"It uses {costs} and gives {gains}.", {"costs": costs, "gains": gains})
    if "What must hold before" in prompt:
        return reply("Probably nothing.", {"requires": {}, "nearby": [], "faced": []})
    truth = TRUE_PRECONDITIONS[name]
    return reply(f"It needs {truth}.", truth)


def steps_of(name: str, records: list[dict[str, Any]]) -> int:
    """Calls an extraction of ``name`` makes when every answer is usable."""
    mine = [r for r in records if r["achievement"] == name]
    successes = sum(r["success"] for r in mine)
    return 4 * (1 + successes) + (1 + len(mine))


async def run(model: ScriptedLLM, **kwargs: Any) -> Experience:
    return await extract_experience({"extractor": model}, hand_records(), **kwargs)


async def test_extracts_costs_gains_and_preconditions_from_the_records() -> None:
    model = ScriptedLLM(fn=knowing, model="fake-1")
    exp = await run(model)
    assert exp.source == "llm:fake-1"
    assert set(exp.laws) == {"collect_wood", "make_wood_pickaxe"}
    wood, pickaxe = exp.laws["collect_wood"], exp.laws["make_wood_pickaxe"]
    assert (wood.action, wood.costs, wood.gains) == ("collect_wood", {}, {"wood": 1})
    assert (wood.requires, wood.nearby, wood.faced) == ({}, [], ["tree"])
    assert pickaxe.costs == {"wood": 1}
    assert pickaxe.gains == {"wood_pickaxe": 1}
    assert (pickaxe.requires, pickaxe.nearby, pickaxe.faced) == ({"wood": 1}, ["table"], [])
    assert "It uses" in wood.text and "It needs" in wood.text
    assert wood.evidence["successes"] == 2 and wood.evidence["failures"] == 1
    records = hand_records()
    expected = steps_of("collect_wood", records) + steps_of("make_wood_pickaxe", records)
    assert len(model.calls) == expected == exp.meta["calls"]
    assert exp.meta["failures"] == {} and exp.meta["retries"] == 0


async def test_each_refinement_shows_one_record_and_the_current_understanding() -> None:
    model = ScriptedLLM(fn=knowing)
    await run(model, achievements=["make_wood_pickaxe"])
    prompts = [c.messages[1].content for c in model.calls]
    material_steps = [p for p in prompts if about(p, "materials") and "before:" in p]
    assert len(material_steps) == 2
    assert 'before: {"wood": 2}' in material_steps[0]
    assert 'after:  {"wood": 1}' in material_steps[0]
    # The second step starts from what the first concluded.
    assert 'Structured: {"costs": {"wood": 1}, "gains": {}}' in material_steps[1]
    pre = [p for p in prompts if "Here is the state just before" in p]
    assert [("succeeded" in p, "failed" in p) for p in pre] == [
        (True, False),
        (False, True),
        (True, False),
    ]
    assert "  grass | table | grass" in pre[0]
    # The precondition guess starts from the costs found before, and from them alone.
    first = next(p for p in prompts if "What must hold before" in p)
    assert 'uses up:\n{"wood": 1}' in first
    assert '"wood_pickaxe": 1' not in first and "gives" not in first


async def test_each_precondition_step_shows_the_state_before_and_after() -> None:
    model = ScriptedLLM(fn=knowing)
    await run(model, achievements=["make_wood_pickaxe"])
    pre = [
        c.messages[1].content
        for c in model.calls
        if "Here is the state just before" in c.messages[1].content
    ]
    records = [r for r in hand_records() if r["achievement"] == "make_wood_pickaxe"]
    assert len(pre) == len(records)
    for prompt, rec in zip(pre, records, strict=True):
        before, _, after = prompt.partition("And the state just after it:")
        assert f"materials: {json.dumps(rec['before']['materials'], sort_keys=True)}" in before
        assert f"tools: {json.dumps(rec['after']['tools'], sort_keys=True)}" in after
    assert 'tools: {"wood_pickaxe": 1}' in pre[0].partition("And the state just after it:")[2]


async def test_laws_learn_what_the_faced_cell_becomes() -> None:
    """Mining stone reveals a path, placing a table puts one there: the records
    show it, the face step reads it, and the law carries it to the score."""
    records = [
        record(
            "collect_stone",
            True,
            state(tools={"wood_pickaxe": 1}, face="stone"),
            state({"stone": 1}, {"wood_pickaxe": 1}, face="path"),
        ),
        record("collect_stone", False, state(face="stone"), state(face="stone")),
        record("place_table", True, state({"wood": 2}), state(face="table")),
        record("collect_wood", True, state(face="tree"), state({"wood": 1}, face="tree")),
    ]
    truths = {
        "collect_stone": {"requires": {"wood_pickaxe": 1}, "nearby": [], "faced": ["stone"]},
        "place_table": {"requires": {"wood": 1}, "nearby": [], "faced": ["grass"]},
        "collect_wood": TRUE_PRECONDITIONS["collect_wood"],
    }

    def model(messages: tuple[Message, ...]) -> str:
        prompt = messages[1].content
        if "Here is the state just before" in prompt:
            name = _ACHIEVEMENT.search(prompt).group(1)  # type: ignore[union-attr]
            return reply("From the record.", truths[name])
        return knowing(messages)

    llm = ScriptedLLM(fn=model)
    exp = await extract_experience({"extractor": llm}, records)
    assert exp.laws["collect_stone"].leaves == "path"
    assert exp.laws["place_table"].leaves == "table"
    assert exp.laws["collect_wood"].leaves is None  # the tree stayed: no change learned
    shown = [c.messages[1].content for c in llm.calls if "faced before: " in c.messages[1].content]
    assert any("faced before: stone" in p and "faced after:  path" in p for p in shown)
    reloaded = Experience.from_json(json.loads(json.dumps(exp.to_json())))
    assert reloaded.laws["collect_stone"].leaves == "path"
    rows = {r.achievement: r for r in score(reloaded).rows}
    assert rows["collect_stone"].leaves_ok is True and rows["place_table"].leaves_ok is True
    truth_wood = oracle_experience().laws["collect_wood"].leaves
    assert rows["collect_wood"].leaves_ok is (None if truth_wood is None else False)
    # no law at all: wrong where the truth knows the cell (water stays water),
    # unscored where it varies (a cow dies on whatever ground it stood)
    assert rows["collect_drink"].leaves_ok is False and rows["eat_cow"].leaves_ok is None


@pytest.mark.parametrize(
    ("bad", "problem"),
    [
        ({"costs": {"planks": 1}, "gains": {}}, "'planks' is not a known name"),
        ({"costs": {"wood": 0}, "gains": {}}, "costs.wood must be at least 1"),
        ({"costs": {"wood": "one"}, "gains": {}}, "costs.wood must be of type integer"),
        ({"costs": {}}, "lacks the field 'gains'"),
        ({"costs": {}, "gains": {}, "why": "x"}, "unexpected field 'why'"),
        ({"costs": {"wood": True}, "gains": {}}, "must be of type integer"),
    ],
)
async def test_a_form_that_breaks_the_schema_is_fed_back_and_asked_again(
    bad: dict[str, Any], problem: str
) -> None:
    first = {"done": False}

    def fn(messages: tuple[Message, ...]) -> str:
        if about(messages[1].content, "materials") and not first["done"]:
            first["done"] = True
            return reply("Wrong form.", bad)
        return knowing(messages)

    model = ScriptedLLM(fn=fn)
    exp = await run(model, achievements=["make_wood_pickaxe"])
    retry = next(c for c in model.calls if len(c.messages) == 4)
    assert retry.messages[2].content.startswith("Wrong form.")
    assert "could not be used" in retry.messages[3].content
    assert problem in retry.messages[3].content
    assert exp.meta["retries"] == 1 and exp.laws["make_wood_pickaxe"].costs == {"wood": 1}


async def test_wrong_place_names_in_preconditions_are_refused() -> None:
    answers = {"n": 0}

    def fn(messages: tuple[Message, ...]) -> str:
        if "What must hold before" in messages[1].content and len(messages) == 2:
            answers["n"] += 1
            return reply(
                "Near a workbench.", {"requires": {}, "nearby": ["workbench"], "faced": []}
            )
        return knowing(messages)

    model = ScriptedLLM(fn=fn)
    exp = await run(model, achievements=["make_wood_pickaxe"])
    feedback = next(c for c in model.calls if len(c.messages) == 4).messages[3].content
    assert "nearby[0]" in feedback and '"workbench" is not one of' in feedback
    assert answers["n"] == 1 and exp.laws["make_wood_pickaxe"].nearby == ["table"]


@pytest.mark.parametrize(
    ("broken", "problem"),
    [
        ('Sure.\n```json\n{"costs": {"wood": 1,}, "gains": {}}\n```', "does not parse"),
        ("It costs one wood.", "no ```json block"),
        ('```json\n["wood"]\n```', "one object"),
    ],
)
async def test_malformed_json_is_retried(broken: str, problem: str) -> None:
    seen = {"n": 0}

    def fn(messages: tuple[Message, ...]) -> str:
        seen["n"] += 1
        return broken if seen["n"] == 2 else knowing(messages)

    model = ScriptedLLM(fn=fn)
    exp = await run(model, achievements=["collect_wood"])
    assert problem in model.calls[2].messages[3].content
    assert model.calls[2].messages[2].content == broken
    assert exp.laws["collect_wood"].gains == {"wood": 1}
    assert len(model.calls) == steps_of("collect_wood", hand_records()) + 1


async def test_a_bare_json_object_is_accepted_and_the_rest_is_the_text() -> None:
    def fn(messages: tuple[Message, ...]) -> str:
        answer = knowing(messages)
        return answer.replace("```json\n", "").replace("\n```", "")

    exp = await run(ScriptedLLM(fn=fn), achievements=["collect_wood"])
    assert exp.laws["collect_wood"].faced == ["tree"]
    words = exp.laws["collect_wood"].text.split("Preconditions:")[1]
    assert "It needs" in words and '"faced"' not in words  # the form is not part of the text
    assert exp.laws["collect_wood"].gains == {"wood": 1}  # braces in the words are no form


async def test_exhausted_attempts_are_recorded_as_a_failure_of_that_achievement() -> None:
    def fn(messages: tuple[Message, ...]) -> str:
        prompt = messages[1].content
        if "make_wood_pickaxe" in prompt and about(prompt, "tools") and "before:" in prompt:
            return "I would rather not say."
        return knowing(messages)

    model = ScriptedLLM(fn=fn)
    exp = await run(model, max_attempts=2)
    assert set(exp.laws) == {"collect_wood"}
    failure = exp.meta["failures"]["make_wood_pickaxe"]
    assert failure["step"] == "tools effects, step 1"
    assert any("no ```json block" in p for p in failure["problems"])
    assert failure["answer"] == "I would rather not say."
    asked = [c for c in model.calls if about(c.messages[1].content, "tools")]
    assert sum("make_wood_pickaxe" in c.messages[1].content for c in asked) == 1 + 2
    # Nothing after the failed step was asked for that achievement.
    assert not any(
        "make_wood_pickaxe" in c.messages[1].content and about(c.messages[1].content, "materials")
        for c in model.calls
    )


class Boom(RuntimeError):
    pass


def failing_at(call: int) -> Callable[[tuple[Message, ...]], str]:
    count = {"n": 0}

    def fn(messages: tuple[Message, ...]) -> str:
        count["n"] += 1
        if count["n"] == call:
            raise Boom("the model went away")
        return knowing(messages)

    return fn


@pytest.mark.parametrize(("crash_at", "jobs"), [(2, 1), (11, 1), (17, 2), (25, 2)])
async def test_a_rerun_after_an_interruption_continues_and_matches(
    tmp_path: Path, crash_at: int, jobs: int
) -> None:
    whole = ScriptedLLM(fn=knowing)
    expected = await run(whole, jobs=jobs)
    progress = tmp_path / "exp.json.progress.json"
    crashed = ScriptedLLM(fn=failing_at(crash_at))
    with pytest.raises(Boom):
        await run(crashed, progress=progress, jobs=jobs)
    saved = json.loads(progress.read_text())
    assert saved["achievements"], "progress must be saved before the crash"
    rest = ScriptedLLM(fn=knowing)
    resumed = await run(rest, progress=progress, jobs=jobs)
    assert resumed.to_json() == expected.to_json()
    # No finished step was asked again (the scripted model never yields, so an
    # achievement already running when another crashed may finish first).
    assert 0 < len(rest.calls) <= len(whole.calls) - (crash_at - 1)
    assert len(crashed.calls) + len(rest.calls) == len(whole.calls)
    again = ScriptedLLM(fn=knowing)
    assert (await run(again, progress=progress)).to_json() == expected.to_json()
    assert again.calls == []


async def test_a_failed_achievement_is_asked_again_on_a_rerun(tmp_path: Path) -> None:
    progress = tmp_path / "p.json"
    stubborn = {"left": 3}

    def fn(messages: tuple[Message, ...]) -> str:
        if "What must hold before" in messages[1].content and stubborn["left"]:
            stubborn["left"] -= 1
            return "no idea"
        return knowing(messages)

    first = await run(ScriptedLLM(fn=fn), achievements=["collect_wood"], progress=progress)
    assert "collect_wood" in first.meta["failures"]
    model = ScriptedLLM(fn=fn)
    second = await run(model, achievements=["collect_wood"], progress=progress)
    assert second.meta["failures"] == {}
    assert second.laws["collect_wood"].faced == ["tree"]
    # Only the failed step onwards was asked: the prior and the three records.
    assert len(model.calls) == 1 + 3
    clean = await run(ScriptedLLM(fn=knowing), achievements=["collect_wood"])
    assert second.meta["calls"] == clean.meta["calls"]


async def test_progress_of_other_records_is_not_reused(tmp_path: Path) -> None:
    progress = tmp_path / "p.json"
    await run(ScriptedLLM(fn=knowing), achievements=["collect_wood"], progress=progress)
    changed = hand_records()
    changed[0]["after"]["materials"]["wood"] = 5
    with pytest.raises(ProgressMismatch, match="collect_wood"):
        await extract_experience({"extractor": ScriptedLLM(fn=knowing)}, changed, progress=progress)
    with pytest.raises(ProgressMismatch, match="another model"):
        await run(ScriptedLLM(fn=knowing, model="other"), progress=progress)


async def test_an_achievement_named_twice_is_extracted_once() -> None:
    model = ScriptedLLM(fn=knowing)
    exp = await run(model, achievements=["collect_wood", "collect_wood"])
    assert list(exp.laws) == ["collect_wood"]
    assert len(model.calls) == steps_of("collect_wood", hand_records())


async def test_bad_inputs_fail_before_any_call() -> None:
    model = ScriptedLLM(fn=knowing)
    with pytest.raises(ExtractError, match="unknown achievement 'chop_tree'"):
        await run(model, achievements=["chop_tree"])
    with pytest.raises(ExtractError, match="no attempt at 'collect_coal'"):
        await run(model, achievements=["collect_coal"])
    with pytest.raises(ExtractError, match="record 1"):
        await extract_experience({"extractor": model}, [{"achievement": "fly", "before": {}}])
    assert model.calls == []


async def test_the_default_role_serves_when_no_extractor_is_set() -> None:
    from lorekit.llm.roles import Roles

    exp = await Extractor(Roles(ScriptedLLM(fn=knowing, model="m"))).extract(
        hand_records(), ["collect_wood"]
    )
    assert exp.source == "llm:m" and exp.meta["role"] == "extractor"


def fumbling(crash: bool) -> Callable[[tuple[Message, ...]], str]:
    """``knowing``, except that the first answer to the preconditions guess is
    malformed, and (``crash``) the model dies while asked again."""

    def fn(messages: tuple[Message, ...]) -> str:
        if "What must hold before" in messages[1].content:
            if len(messages) == 2:
                return "Let me think {"
            if crash:
                raise Boom("killed mid-step")
        return knowing(messages)

    return fn


async def test_with_the_cache_a_rerun_after_a_kill_asks_nothing_twice(tmp_path: Path) -> None:
    """A kill between two attempts of a step loses the step; the cache answers
    its first attempt again, so the rerun takes the same path and pays once."""
    from lorekit.llm.cache import CachedLLM, SQLiteCache

    def cached(backend: ScriptedLLM) -> dict[str, Any]:
        cache = SQLiteCache(tmp_path / "cache.sqlite3")
        return {"extractor": CachedLLM(backend, cache, "read-write")}

    whole = ScriptedLLM(fn=fumbling(crash=False))
    expected = await run(whole, achievements=["collect_wood"])
    progress = tmp_path / "progress.json"
    crashed = ScriptedLLM(fn=fumbling(crash=True))
    with pytest.raises(Boom):
        await extract_experience(
            cached(crashed), hand_records(), achievements=["collect_wood"], progress=progress
        )
    rest = ScriptedLLM(fn=fumbling(crash=False))
    resumed = await extract_experience(
        cached(rest), hand_records(), achievements=["collect_wood"], progress=progress
    )
    assert resumed.to_json() == expected.to_json()
    assert resumed.meta["retries"] == 1
    assert len(crashed.calls) + len(rest.calls) == len(whole.calls)
    assert not any(len(c.messages) == 2 and "What must hold" in c.last for c in rest.calls)


async def test_the_llm_path_carries_an_upper_bound_to_the_score() -> None:
    # the sleep law needs "energy below 9": the form must accept it and the law keep it
    from lorekit.laws.score import score

    def sleepy(energy: int, asleep: bool) -> dict[str, Any]:
        base = state()
        base["attributes"] = {**base["attributes"], "energy": energy}
        return {**base, "sleeping": asleep}

    records = [
        {**record("wake_up", True, sleepy(5, False), sleepy(5, True)), "action": "sleep"},
        {**record("wake_up", False, sleepy(9, False), sleepy(9, False)), "action": "sleep"},
    ]

    def fn(messages: tuple[Message, ...]) -> str:
        if '"below"' in messages[1].content:  # the preconditions form shows this field
            form = {"requires": {}, "below": {"energy": 9}, "nearby": [], "faced": []}
            return reply("Sleep only takes when tired.", form)
        if '"leaves"' in messages[1].content:  # the faced cell's form
            return reply("The cell stays.", {"leaves": None})
        return reply("Nothing changes.", {"costs": {}, "gains": {}})

    exp = await extract_experience({"extractor": ScriptedLLM(fn=fn)}, records)
    assert exp.laws["wake_up"].below == {"energy": 9}
    row = next(r for r in score(exp).rows if r.achievement == "wake_up")
    assert row.recall == 1.0 and row.precision == 1.0


async def test_bounds_no_state_meets_are_fed_back_so_the_saved_experience_loads() -> None:
    # "energy >= 5 and energy < 3" passes the schema but no state meets it; the
    # experience file it went into would then be refused when loaded
    asked = {"n": 0}

    def fn(messages: tuple[Message, ...]) -> str:
        if "What must hold before" in messages[1].content and len(messages) == 2:
            asked["n"] += 1
            form = {"requires": {"wood": 12}, "below": {"wood": 3}, "nearby": [], "faced": []}
            return reply("Odd.", form)
        return knowing(messages)

    model = ScriptedLLM(fn=fn)
    exp = await run(model, achievements=["make_wood_pickaxe"])
    retries = [c for c in model.calls if len(c.messages) == 4]
    assert retries, "the impossible form was taken as it is"
    feedback = retries[0].messages[3].content
    assert "no state has both" in feedback and "stop at 9" in feedback
    assert asked["n"] == 1 and exp.laws["make_wood_pickaxe"].requires == {"wood": 1}
    assert Experience.from_json(exp.to_json()).laws["make_wood_pickaxe"].below == {}


async def test_the_precondition_prompts_explain_upper_bounds() -> None:
    # sleep fails at full energy: a failure can hold too much of something, and
    # the model must be told what the form's "below" field means to say so
    model = ScriptedLLM(fn=knowing)
    await run(model, achievements=["make_wood_pickaxe"])
    pre = [c.messages[1].content for c in model.calls if "What must hold before" in c.last]
    words = pre[0].split("```")[0].split("JSON schema")[0]  # the text, not the schema
    assert '"below": {"energy": 9}' in words and "under 9" in words
    failed = [c.last for c in model.calls if "which failed" in c.last]
    assert failed and all("too much of" in p for p in failed)
