"""The scripted planner that replays a shown skill, adapted to its task
(:mod:`lorekit.agents.automanual.testing.published`): how it adapts a MiniWoB++ skill
and how it deals the skill's parts out over the turns. Needs no published files."""

from __future__ import annotations

from lorekit.agents.automanual.planner_prompt import first_message
from lorekit.agents.automanual.testing.published import adapt_text, parts, replay_model
from lorekit.llm import Message

FORWARD = 'x = "//*[text()=\'Felicdad\']"\nagent.type("Tory")'


def test_a_word_of_the_same_template_is_replaced_with_the_sentence_full_stop_apart() -> None:
    was = "Find the email by Felicdad and forward that email to Tory."
    now = "Find the email by Chiquita and forward that email to Kelila."
    assert adapt_text(FORWARD, was, now) == 'x = "//*[text()=\'Chiquita\']"\nagent.type("Kelila")'
    terminal = 'agent.type("ls *.png")'
    assert (
        adapt_text(
            terminal,
            "Use the terminal below to delete a file ending with the extension .png",
            "Use the terminal below to delete a file ending with the extension .jpg",
        )
        == 'agent.type("ls *.jpg")'
    )


def test_an_email_task_of_another_template_maps_sender_and_recipient_by_role() -> None:
    was = "Send to Martelle an email found in the app that is written by Saudra."
    code = 'a = "text()=\'Saudra\'"\nagent.type("Martelle")'
    for now in (
        "Find the email from Zorah and forward it to Lura.",
        "forward Zorah's email to Lura",
        "Send Lura the email you got from Zorah.",
        "Please forward the email Zorah sent today to Lura",
    ):
        assert adapt_text(code, was, now) == 'a = "text()=\'Zorah\'"\nagent.type("Lura")', now


def test_an_ordinal_moves_the_index_counted_from_zero_inside_strings_only() -> None:
    code = "pick = \"//a[@data-result='1']\"\nn = 1"
    was = 'Use the textbox to enter "Tora" and press "Search", then click the 2nd search result.'
    now = 'Use the textbox to enter "Juan" and press "Search", then click the 3rd search result.'
    assert adapt_text(code, was, now) == "pick = \"//a[@data-result='2']\"\nn = 1"
    assert adapt_text(code, was, was) == code  # nothing differs: nothing changes


def test_a_skill_is_played_one_part_per_answer_then_nothing() -> None:
    skill = "a = 1\n```\n```python\nif a:\n    b = 2\n```\n```python\nelse:\n    b = 3\n```\n# done"
    # an `else:` cut from its `if` at a pause is joined to it; a comment alone is no part
    assert parts(skill) == ["a = 1", "if a:\n    b = 2\nelse:\n    b = 3"]
    prompt = first_message(
        'Task: Find the email by Chiquita and forward that email to Kelila.\n<div id="wrap">',
        rules_text="(none)",
        retrieved=_Skill("a = 'Tory'\n```\n```python\nb = 'Felicdad'"),
    )
    model = replay_model("miniwob")
    said: list[Message] = [Message("system", "s"), Message("user", prompt)]
    codes = []
    for _ in range(3):
        answer = model(tuple(said))
        codes.append(answer.split("```python\n", 1)[1].split("\n```", 1)[0])
        said += [Message("assistant", answer), Message("user", "feedback")]
    assert codes == ["a = 'Kelila'", "b = 'Chiquita'", "pass"]


class _Skill:
    kind = "skill"
    task_type = "email-inbox"
    goal = "Find the email by Felicdad and forward that email to Tory."

    def __init__(self, text: str) -> None:
        self.text = text
