"""The Formulator (rules to a Markdown manual) and the manual storage."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from lorekit.agents.automanual.core import Rule, RuleType
from lorekit.agents.automanual.formulator import (
    Formulator,
    FormulatorError,
    Manual,
    ManualGroup,
    parse_manual,
)
from lorekit.agents.automanual.manuals import (
    fence,
    latest_manual,
    load_manual,
    manual_versions,
    save_manual,
)
from lorekit.agents.automanual.store import open_db
from lorekit.llm import ScriptedLLM
from lorekit.llm.roles import Roles

RULES = [
    Rule(
        "rule_0",
        RuleType.SPECIAL_PHENOMENON,
        "When searching for an object, it may be in any receptacle, even unusual ones.",
        "for r in receptacles:\n    agent.go_to(r)  # check every one",
        logs=["ep/3: written", "ep/7: confirmed"],
    ),
    Rule(
        "rule_1",
        RuleType.SPECIAL_MECHANISM,
        "When holding an object, the agent cannot take another one.",
        "agent.put('apple_1', 'countertop_1')  # free the hands first",
        logs=["ep/4: LOG-SECRET"],
    ),
    Rule(
        "rule_2",
        RuleType.SUCCESS_PROCESS,
        "When heating an object: find it, take it, heat it with microwave_1, then place it.",
        "",
    ),
    Rule(
        "rule_3",
        RuleType.UNSOLVED_ERROR,
        "When a receptacle is closed, its contents are hidden until it is opened.",
        "agent.open('fridge_1')",
    ),
]
IDS = [r.rule_id for r in RULES]


def answer(*sections: tuple[str, str, list[str]], overview: str = "Read this first.") -> str:
    """A well-formed Formulator answer with the given (title, intro, ids) groups."""
    body = [f"# Household Manual\n{overview}"]
    for title, intro, ids in sections:
        listed = "\n".join(f"- **{rid}**: paraphrased and shortened" for rid in ids)
        body.append(f"## {title}\n{intro}\n{listed}")
    manual = "\n\n".join(body)
    return (
        "Understanding: finding things and handling them are the core.\n"
        "Grouping: search vs handling.\n"
        f"```markdown\n{manual}\n```\nDone."
    )


GOOD = answer(
    ("Finding things", "Look everywhere and open what is closed.", ["rule_0", "rule_3"]),
    ("Handling objects", "One object at a time; heat with the microwave.", ["rule_1", "rule_2"]),
)


def formulator(llm: ScriptedLLM, *, max_retries: int = 2, max_tokens: int = 4096) -> Formulator:
    return Formulator(
        Roles({"formulator": llm}),
        world="ALFWorld household API",
        max_retries=max_retries,
        max_tokens=max_tokens,
    )


async def test_manual_uses_model_groups_and_the_rules_own_text() -> None:
    llm = ScriptedLLM([GOOD])
    manual = await formulator(llm).formulate(RULES, rules_version=7)
    assert manual.calls == 1 and manual.rules_version == 7
    assert manual.title == "Household Manual" and manual.overview == "Read this first."
    assert manual.groups == [
        ManualGroup(
            "Finding things", "Look everywhere and open what is closed.", ("rule_0", "rule_3")
        ),
        ManualGroup(
            "Handling objects",
            "One object at a time; heat with the microwave.",
            ("rule_1", "rule_2"),
        ),
    ]
    assert manual.understanding.startswith("Understanding: finding things")
    md = manual.markdown
    assert md.startswith("# Household Manual\n\nRead this first.\n\n## Finding things\n")
    for rule in RULES:
        assert f"**{rule.rule_id}** ({rule.type.value}): {rule.content}" in md
        if rule.example:
            assert rule.example in md
    assert "paraphrased" not in md  # the model's wording of a rule is not kept
    assert md.index("**rule_0**") < md.index("**rule_3**") < md.index("## Handling objects")
    assert "LOG-SECRET" not in md and all(r.logs == [] for r in manual.rules)
    # the prompt: rules without validation logs, the world, temperature 0
    call = llm.calls[0]
    assert call.params.temperature == 0.0 and call.params.max_tokens == 4096
    assert "ALFWorld household API" in call.messages[0].content
    assert "from basic to complex" in call.prompt  # the groups' order, as published
    assert "4 in all: rule_0, rule_1, rule_2, rule_3" in call.last
    assert "heat it with microwave_1" in call.last and "LOG-SECRET" not in call.prompt


async def test_manual_renders_at_a_deeper_heading_level_for_prompts() -> None:
    manual = await formulator(ScriptedLLM([GOOD])).formulate(RULES, rules_version=1)
    assert manual.render() == manual.markdown
    nested = manual.render(level=3)
    headings = [line for line in nested.splitlines() if line.startswith("#")]
    assert headings == ["### Household Manual", "#### Finding things", "#### Handling objects"]
    assert nested.replace("#### ", "## ").replace("### ", "# ") == manual.markdown
    with pytest.raises(ValueError, match="heading level"):
        manual.render(level=0)


async def test_role_falls_back_to_the_default_model() -> None:
    llm = ScriptedLLM([GOOD])
    manual = await Formulator(Roles({"default": llm})).formulate(RULES, rules_version=1)
    assert manual.calls == 1 and len(llm.calls) == 1


@pytest.mark.parametrize(
    ("bad", "complaint"),
    [
        ("I would group them by topic but forgot the manual.", "no ```markdown block"),
        (
            answer(("All", "Everything.", ["rule_0", "rule_1", "rule_2"])),
            "in no group: rule_3",
        ),
        (
            answer(("All", "See rule_9 too.", ["rule_0", "rule_1", "rule_2", "rule_3"])),
            "rule_9, which do not exist",
        ),
        (
            answer(
                ("Finding", "Search.", ["rule_0", "rule_3"]),
                ("Handling", "Hold one.", ["rule_1", "rule_2", "rule_3"]),
            ),
            "rule_3 ('Finding', 'Handling')",
        ),
        ("```markdown\n# Manual\nJust an overview, no groups.\n```", "no ## group section"),
    ],
    ids=["no-block", "missing-id", "unknown-id", "two-groups", "no-groups"],
)
async def test_malformed_answers_are_fed_back_and_retried(bad: str, complaint: str) -> None:
    llm = ScriptedLLM([bad, GOOD])
    manual = await formulator(llm).formulate(RULES, rules_version=3)
    assert manual.calls == 2 and len(manual.groups) == 2
    retry = llm.calls[1].messages
    assert [m.role for m in retry] == ["system", "user", "assistant", "user"]
    assert retry[2].content == bad
    assert complaint in retry[3].content
    assert "rule_0, rule_1, rule_2, rule_3" in retry[3].content


async def test_exhausted_retries_raise_a_clear_error() -> None:
    bad = answer(("All", "Everything.", ["rule_0"]))
    llm = ScriptedLLM([bad, "no manual", bad])
    with pytest.raises(FormulatorError) as info:
        await formulator(llm).formulate(RULES, rules_version=1)
    assert len(llm.calls) == 3
    assert "'formulator' model gave no usable manual in 3 answers" in str(info.value)
    assert "in no group: rule_1, rule_2, rule_3" in str(info.value)
    once = ScriptedLLM(["no manual"])
    with pytest.raises(FormulatorError, match="in 1 answers"):
        await formulator(once, max_retries=0).formulate(RULES, rules_version=1)


async def test_an_answer_cut_off_at_the_token_limit_is_explained() -> None:
    long_answer = GOOD.replace("Done.", "").rstrip().removesuffix("```") + " filler" * 400
    llm = ScriptedLLM([long_answer, GOOD])
    manual = await formulator(llm, max_tokens=300).formulate(RULES, rules_version=1)
    assert manual.calls == 2
    assert "cut off" in llm.calls[1].last


async def test_no_rules_is_an_error_without_a_model_call() -> None:
    llm = ScriptedLLM([GOOD])
    with pytest.raises(FormulatorError, match="no rules"):
        await formulator(llm).formulate([], rules_version=0)
    assert llm.calls == []


def test_parsing_tolerates_labels_nested_code_and_plain_references() -> None:
    block = "\n".join(
        [
            "```markdown",
            "# Guide",
            "Overview line.",
            "## Search and Find ##",
            "### Introduction",
            "**Introduction:** Search every place. Unlike rule_1, this is about looking.",
            "```python",
            "## not a section: a comment in code",
            "for r in places: agent.go_to(r)",
            "```",
            "",
            "Rules:",
            "1. **rule_0** (Special Phenomenon) anything",
            "2. **Rule_3**",
            "## Closing words",
            "Good luck!",
            "## Objects",
            "* **rule_1** and **rule_2**",
            "```",
        ]
    )
    parsed = parse_manual(f"My view.\n{block}\ntrailing text with ```python\nx\n```", IDS)
    assert parsed.problems == []
    assert parsed.understanding == "My view."
    assert (parsed.title, parsed.overview) == ("Guide", "Overview line.")
    assert [g.title for g in parsed.groups] == ["Search and Find", "Objects"]
    assert parsed.groups[0].rule_ids == ("rule_0", "rule_3")
    assert parsed.groups[0].intro == (
        "Search every place. Unlike rule_1, this is about looking.\n"
        "```python\n## not a section: a comment in code\nfor r in places: agent.go_to(r)\n```"
    )
    assert parsed.groups[1] == ManualGroup("Objects", "", ("rule_1", "rule_2"))
    assert parsed.notes == ["dropped the section 'Closing words': it lists no rule"]


def test_examples_with_backticks_get_a_longer_fence() -> None:
    assert fence("x = 1") == "```\nx = 1\n```"
    assert fence("see ```python``` here") == "````\nsee ```python``` here\n````"


@pytest.fixture
def db() -> Iterator[sqlite3.Connection]:
    conn = open_db(None)
    yield conn
    conn.close()


async def test_manuals_are_versioned_per_build(db: sqlite3.Connection) -> None:
    first = await formulator(ScriptedLLM([GOOD])).formulate(RULES, rules_version=5)
    assert latest_manual(db, "b") is None and manual_versions(db, "b") == []
    assert save_manual(db, "b", first) == 1
    second = await formulator(ScriptedLLM(["bad", GOOD])).formulate(RULES[:4], rules_version=9)
    assert save_manual(db, "b", second) == 2
    assert save_manual(db, "other", first) == 1
    latest = latest_manual(db, "b")
    assert latest == second and latest is not None and latest.calls == 2
    assert load_manual(db, "b", 1) == first
    assert load_manual(db, "b", 3) is None
    versions = manual_versions(db, "b")
    assert [(v.version, v.rules_version, v.groups, v.rules) for v in versions] == [
        (1, 5, 2, 4),
        (2, 9, 2, 4),
    ]


def test_manual_survives_the_file_and_round_trips(tmp_path: Path) -> None:
    rules = [Rule(r.rule_id, r.type, r.content, r.example) for r in RULES]
    groups = [ManualGroup("All", "Everything.", tuple(IDS))]
    manual = Manual("# M\n", groups, 4, calls=1, rules=rules, notes=["n"])
    assert Manual.from_dict(manual.to_dict()) == manual
    path = tmp_path / "runs.sqlite"
    conn = open_db(path)
    save_manual(conn, "b", manual)
    conn.close()
    reopened = open_db(path)
    assert latest_manual(reopened, "b") == manual
    reopened.close()
