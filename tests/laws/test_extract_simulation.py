"""The scripted extractor models (lorekit.laws.testing) through the real extractor.

The records below follow an invented law, unlike crafter's in every part, so
a model that read crafter's rules instead of the prompts could not pass."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lorekit.cli.errors import run_cli
from lorekit.laws.commands.extract import extract
from lorekit.laws.experience import Experience
from lorekit.laws.extract import extract_experience
from lorekit.laws.extract_parse import FormError, parse_answer
from lorekit.laws.testing import careful_answer, careful_model, careless, careless_model
from lorekit.llm import ScriptedLLM

# Invented: collecting a sapling needs a stone sword, two coal, a furnace
# nearby, facing sand and drink under 6; it uses one coal, gives two saplings
# and turns the sand into water. (Crafter: face grass, nothing else, one sapling.)
INVENTED = {
    "requires": {"coal": 2, "stone_sword": 1},
    "below": {"drink": 6},
    "nearby": ["furnace"],
    "faced": ["sand"],
    "costs": {"coal": 1},
    "gains": {"sapling": 2},
    "leaves": "water",
}


def state(
    *,
    coal: int = 2,
    sword: str = "stone_sword",
    extra: dict[str, int] | None = None,
    face: str = "sand",
    near: tuple[str, ...] = ("furnace", "tree"),
    drink: int = 5,
    food: int = 7,
    sapling: int = 0,
) -> dict[str, Any]:
    cells = [*near, "grass", "grass", "grass", "grass", "grass", "grass"][:8]
    rows = [cells[0:3], [cells[3], "player", face], cells[4:7]]
    return {
        "attributes": {"health": 9, "food": food, "drink": drink, "energy": 8},
        "tools": {sword: 1} if sword else {},
        "materials": {"coal": coal, "sapling": sapling, **(extra or {})},
        "face": face,
        "nearby": rows,
    }


def attempt(success: bool, before: dict[str, Any], **after: Any) -> dict[str, Any]:
    if success:
        changed = {**before, "face": "water", "materials": dict(before["materials"])}
        changed["materials"]["coal"] -= 1
        changed["materials"]["sapling"] += 2
        changed["attributes"] = {**before["attributes"], **after}
    else:
        changed = before
    return {
        "achievement": "collect_sapling",
        "action": "collect_sapling",
        "success": success,
        "before": before,
        "after": changed,
    }


def invented_records() -> list[dict[str, Any]]:
    """Varied successes first, then failures that each miss one part of the law."""
    return [
        attempt(True, state(extra={"wood": 3}, near=("furnace", "table")), food=6),  # drift
        attempt(True, state(coal=4, extra={"stone": 2}, drink=2, near=("furnace", "water"))),
        attempt(True, state(coal=3, sapling=1, drink=4, near=("furnace", "sand", "tree"))),
        attempt(False, state(face="grass")),
        attempt(False, state(sword="wood_sword")),
        attempt(False, state(coal=1)),
        attempt(False, state(near=("table", "tree"))),
        attempt(False, state(drink=6)),
        attempt(True, state(coal=5, extra={"iron": 1}, drink=1, near=("furnace", "stone"))),
    ]


async def test_the_careful_model_learns_an_invented_law_from_the_records(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def forbidden(*_: Any, **__: Any) -> Any:
        raise AssertionError("the scripted model read crafter's truth")

    monkeypatch.setattr("lorekit.laws.experience.oracle_experience", forbidden)
    monkeypatch.setattr("lorekit.envs.crafter.rules.CrafterRules", forbidden)
    model = careful_model()
    exp = await extract_experience({"extractor": model}, invented_records())
    law = exp.laws["collect_sapling"].to_json()
    assert {k: law[k] for k in INVENTED} == INVENTED
    assert exp.source == "llm:scripted-careful" and exp.meta["retries"] == 0
    # each step saw one record: the one precondition prompt per record shows only it
    shown = [c.last for c in model.calls if "Here is the state just before" in c.last]
    assert len(shown) == len(invented_records())


async def test_a_failure_before_any_success_gives_the_careful_model_nothing_to_go_on() -> None:
    """The same records with the facing failure first: one record at a time,
    nothing shows yet what a success faces, so facing is never learned (set
    reasoning over all records at once would find it)."""
    records = invented_records()
    records = [records[3], *records[:3], *records[4:]]
    exp = await extract_experience({"extractor": careful_model()}, records)
    law = exp.laws["collect_sapling"]
    assert law.faced == []
    assert law.requires == INVENTED["requires"] and law.nearby == ["furnace"]


async def test_the_careless_model_is_fed_back_its_malformed_answers_and_retried() -> None:
    model = careless_model(p=0.5, seed=3)
    exp = await extract_experience({"extractor": model}, invented_records(), max_attempts=8)
    retried = [c for c in model.calls if len(c.messages) > 2]
    assert retried and exp.meta["retries"] == len(retried)
    for call in retried:
        assert "could not be used" in call.messages[-1].content
        assert call.messages[-2].content  # its earlier answer is shown back
    assert "collect_sapling" in exp.laws  # the retries ended in usable answers
    # wrong answers are drawn from the conversation, so a rerun answers alike
    again = await extract_experience(
        {"extractor": careless_model(p=0.5, seed=3)}, invented_records(), max_attempts=8
    )
    assert again.to_json() == exp.to_json()


async def test_a_careless_model_that_never_errs_is_the_careful_one() -> None:
    never = ScriptedLLM(fn=careless(p=0.0), model="scripted-careful")
    a = await extract_experience({"extractor": never}, invented_records())
    b = await extract_experience({"extractor": careful_model()}, invented_records())
    assert a.to_json() == b.to_json()


async def test_a_careless_model_sometimes_ignores_the_record_it_is_shown() -> None:
    model = careless_model(p=0.5, seed=3)
    await extract_experience({"extractor": model}, invented_records(), max_attempts=8)
    ignored = 0
    for call in model.calls:
        prompt = call.messages[1].content
        if len(call.messages) > 2 or "Structured: " not in prompt or call.answer is None:
            continue
        current = json.loads(prompt.split("Structured: ", 1)[1].splitlines()[0])
        try:
            form = parse_answer(call.answer, {}).form
        except FormError:
            continue  # a malformed answer: the other kind of mistake
        careful = parse_answer(careful_answer(call.messages), {}).form
        if careful != current and form == current:
            ignored += 1  # the record would have changed it: this answer passed it over
    assert ignored > 0


def test_the_command_extracts_with_the_scripted_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = tmp_path / "r.jsonl"
    records.write_text("".join(json.dumps(r) + "\n" for r in invented_records()))
    out = tmp_path / "exp.json"

    def run(*args: str) -> tuple[int, str, str]:
        try:
            run_cli(extract, [str(records), "-o", str(out), *args])  # type: ignore[arg-type]
            code = 0
        except SystemExit as exc:
            code = int(exc.code or 0)
        stdout, err = capsys.readouterr()
        return code, stdout, err

    code, stdout, err = run("--simulate", "careful")
    assert code == 0, err
    exp = Experience.load(out)
    assert exp.source == "llm:scripted-careful"
    assert exp.laws["collect_sapling"].nearby == ["furnace"]
    assert "1 laws from" in stdout and "$0.0000" in stdout
    code, _, err = run("--simulate", "careless", "--fresh", "--max-attempts", "5")
    assert code == 0, err
    assert Experience.load(out).source.startswith("llm:scripted-careless")
    code, _, err = run("--simulate", "careful", "--model", "gpt-x")
    assert code == 2 and "--simulate answers with a scripted extractor" in err
    code, _, err = run("--simulate", "wise")
    assert code == 2 and "wise" in err
