"""Tool calls are parsed with ast, never run: only known calls with literal arguments pass."""

from __future__ import annotations

import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lorekit.agents.automanual.toolcalls import (
    ToolCall,
    ToolCallError,
    ToolSpec,
    code_blocks,
    parse_tool_calls,
)

TOOLS = {
    "write_rule": ToolSpec(
        "write_rule", ("rule", "type", "example", "validation_record"), ("rule", "type")
    ),
    "delete_rule": ToolSpec("delete_rule", ("rule_id",), ("rule_id",)),
    "stop_generating": ToolSpec("stop_generating", ()),
}


def block(code: str) -> str:
    return f"### Codes\nSome words first.\n```python\n{code}\n```\nAnd after.\n"


def refused(code: str, **kw: object) -> ToolCallError:
    with pytest.raises(ToolCallError) as info:
        parse_tool_calls(block(code), TOOLS, **kw)  # type: ignore[arg-type]
    return info.value


# -- accepted ---------------------------------------------------------------------


def test_paper_style_answer_with_triple_quoted_example() -> None:
    answer = block(
        "# a new rule\n"
        "rule_system.write_rule(\n"
        '    rule="Before heating, go to the microwave.",\n'
        '    type="Corrected Error",\n'
        '    example="""# go there first\n'
        "observation = agent.go_to('microwave_1')\n"
        "observation = agent.heat('mug_1', 'microwave_1')\"\"\",\n"
        "    validation_record='from ep 3',\n"
        ")\n"
        "\n"
        "rule_system.stop_generating()"
    )
    calls = parse_tool_calls(answer, TOOLS)
    assert [c.name for c in calls] == ["write_rule", "stop_generating"]
    first = calls[0]
    assert first.kwargs["type"] == "Corrected Error"
    assert first.kwargs["example"].splitlines()[1] == "observation = agent.go_to('microwave_1')"
    assert (first.line, calls[1].line) == (2, 11)
    assert first.source.startswith("rule_system.write_rule(") and first.source.endswith(")")


def test_positional_arguments_are_bound_by_the_spec() -> None:
    (call,) = parse_tool_calls(block('write_rule("r", "Special Mechanism", "ex")'), TOOLS)
    assert call == ToolCall(
        "write_rule",
        {"rule": "r", "type": "Special Mechanism", "example": "ex"},
        1,
        'write_rule("r", "Special Mechanism", "ex")',
    )


def test_implicit_concatenation_and_parenthesised_strings() -> None:
    code = 'rule_system.write_rule(rule=("one "\n    "two " \'three\'), type="x")'
    (call,) = parse_tool_calls(block(code), TOOLS)
    assert call.kwargs["rule"] == "one two three"


def test_literal_containers_numbers_and_constants() -> None:
    code = "rule_system.delete_rule(rule_id=[1, -2.5, {'a': (None, True)}, b'x'])"
    (call,) = parse_tool_calls(block(code), TOOLS)
    assert call.kwargs["rule_id"] == [1, -2.5, {"a": (None, True)}, b"x"]


def test_bare_code_without_fences_is_accepted_when_it_is_only_calls() -> None:
    calls = parse_tool_calls("rule_system.delete_rule('rule_1')\nstop_generating()", TOOLS)
    assert [c.kwargs for c in calls] == [{"rule_id": "rule_1"}, {}]


def test_calls_from_several_blocks_in_order_and_other_languages_ignored() -> None:
    text = (
        "```python\nrule_system.delete_rule('rule_1')\n```\n"
        '```json\n{"a": 1}\n```\n'
        "  ```py\n  rule_system.delete_rule('rule_2')\n  ```\n"
    )
    calls = parse_tool_calls(text, TOOLS)
    assert [c.kwargs["rule_id"] for c in calls] == ["rule_1", "rule_2"]


def test_code_blocks_handles_long_fences_tildes_and_an_unclosed_last_block() -> None:
    text = "````python\na = '```'\n```\nb\n````\n~~~Python\nc\n~~~\n```python\nd = 1\n"
    assert code_blocks(text) == ["a = '```'\n```\nb", "c", "d = 1"]
    assert code_blocks("```json\n{}\n```", "json") == ["{}"]


def test_comments_and_blank_lines_are_fine() -> None:
    code = "# nothing yet\n\n   \nrule_system.stop_generating()  # done"
    calls = parse_tool_calls(block(code), TOOLS)
    assert [c.name for c in calls] == ["stop_generating"]


def test_custom_receiver() -> None:
    calls = parse_tool_calls(block("rules.stop_generating()"), TOOLS, receiver="rules")
    assert calls[0].name == "stop_generating"
    err = refused("rule_system.stop_generating()", receiver="rules")
    assert "unknown receiver 'rule_system'" in str(err)


# -- refused, with the reason --------------------------------------------------------

REFUSALS = [
    ("import os", "imports are not allowed"),
    ("from os import system", "imports are not allowed"),
    ("os.system('rm -rf /')", "unknown receiver 'os'"),
    ("rule_system.__class__.__init__('x')", "attribute chains are not allowed"),
    ("rule_system.__class__()", "has no function '__class__'"),
    ("rule_system._db.execute('DROP TABLE x')", "attribute chains are not allowed"),
    ("__import__('os').system('ls')", "attribute chains are not allowed"),
    ("__import__('os')", "unknown function '__import__'"),
    ("eval('1')", "unknown function 'eval'"),
    ("rule_system.exec_rule('x')", "has no function 'exec_rule'"),
    ("getattr(rule_system, 'write_rule')('a', 'b')", "must be named directly"),
    ("x = rule_system.stop_generating()", "assignments are not allowed"),
    ("rule = 'a'", "assignments are not allowed"),
    ("n += 1", "assignments are not allowed"),
    ("rule_system.write_rule(rule=open('/etc/passwd').read(), type='a')", "nested calls"),
    ("rule_system.write_rule(rule=str(1), type='a')", "nested calls"),
    ("rule_system.write_rule(rule=text, type='a')", "names/variables are not allowed ('text')"),
    ("rule_system.write_rule(rule=f'{1}', type='a')", "f-strings are not allowed"),
    ("rule_system.write_rule(rule=f'plain', type='a')", "f-strings are not allowed"),
    ("rule_system.write_rule(rule=lambda: 1, type='a')", "lambdas are not allowed"),
    ("rule_system.write_rule(rule=[c for c in 'ab'], type='a')", "comprehensions"),
    ("rule_system.write_rule(rule={k: 1 for k in 'ab'}, type='a')", "comprehensions"),
    ("rule_system.write_rule(rule=(c for c in 'ab'), type='a')", "comprehensions"),
    ("rule_system.write_rule(rule=(r := 'a'), type='a')", "assignment expressions"),
    ("rule_system.write_rule(*['a', 'b'])", "*args are not allowed"),
    ("rule_system.write_rule(rule=[*'ab'], type='a')", "*-unpacking is not allowed"),
    ("rule_system.write_rule(**{'rule': 'a', 'type': 'b'})", "**kwargs are not allowed"),
    ("rule_system.write_rule(rule='a', type='b', kind='c')", "has no argument 'kind'"),
    ("rule_system.write_rule('a', 'b', rule='c')", "'rule' of write_rule is given twice"),
    ("rule_system.write_rule(rule='a')", "missing required argument(s): type"),
    ("rule_system.delete_rule()", "missing required argument(s): rule_id"),
    ("rule_system.stop_generating('now')", "at most 0 positional"),
    ("rule_system.write_rule('a', 'b', 'c', 'd', 'e')", "at most 4 positional"),
    ("rule_system.write_rule(rule='a' + 'b', type='c')", "only literal values"),
    ("rule_system.write_rule(rule='a' * 10**9, type='c')", "only literal values"),
    ("rule_system.write_rule(rule='a' if 1 else 'b', type='c')", "expressions are not allowed"),
    ("rule_system.write_rule(rule=x.y, type='c')", "attribute access is not allowed"),
    ("rule_system.write_rule(rule=d['k'], type='c')", "subscripts are not allowed"),
    ("rule_system.delete_rule(rule_id={1, 2} | {3})", "only literal values"),
    ("@decorator\ndef f():\n    pass", "definitions are not allowed"),
    ("def f():\n    rule_system.stop_generating()", "definitions are not allowed"),
    ("class A:\n    pass", "definitions are not allowed"),
    ("with open('f') as fh:\n    pass", "control flow is not allowed"),
    ("for i in range(3):\n    rule_system.stop_generating()", "control flow is not allowed"),
    ("while True:\n    pass", "control flow is not allowed"),
    ("if True:\n    rule_system.stop_generating()", "control flow is not allowed"),
    ("try:\n    pass\nexcept Exception:\n    pass", "control flow is not allowed"),
    ("del rule_system", "only calls are allowed"),
    ("global rule_system", "only calls are allowed"),
    ("pass", "only calls are allowed"),
    ("'a docstring'", "only calls are allowed, not a Constant"),
    ("rule_system", "only calls are allowed, not a Name"),
    ("rule_system.stop_generating", "only calls are allowed, not a Attribute"),
    ("await rule_system.stop_generating()", "await is not allowed"),
    ("rule_system.stop_generating()()", "must be named directly"),
]


@pytest.mark.parametrize(("code", "reason"), REFUSALS, ids=[c for c, _ in REFUSALS])
def test_refused_with_reason(code: str, reason: str) -> None:
    err = refused(code)
    assert reason in str(err)
    assert "nothing was applied" in str(err)
    assert len(err.problems) == 1


def test_every_refused_statement_is_reported_with_its_line_and_nothing_passes() -> None:
    code = (
        "rule_system.delete_rule('rule_0')\n"  # fine
        "import os\n"
        "rule_system.stop_generating()\n"  # fine
        "\n"
        "os.system('ls')\n"
        "rule_system.write_rule(\n"
        "    rule=name,\n"
        "    type='a')\n"
    )
    err = refused(code)
    assert [line for line, _ in err.problems] == [2, 5, 6]
    text = str(err)
    assert "refused 3 statement(s)" in text
    assert "- line 2: `import os`: imports are not allowed" in text
    assert "- line 5: `os.system('ls')`: unknown receiver 'os'" in text
    assert "- line 6: `rule_system.write_rule( rule=name, type='a')`" in text


def test_lines_are_per_block_when_there_are_several() -> None:
    text = "```python\nstop_generating()\n```\n```python\nstop_generating()\nimport os\n```"
    with pytest.raises(ToolCallError) as info:
        parse_tool_calls(text, TOOLS)
    assert "- block 2, line 2: `import os`" in str(info.value)


def test_syntax_error_reports_its_line() -> None:
    err = refused("rule_system.stop_generating()\nrule_system.write_rule(rule='a', type=\n")
    assert err.problems[0][0] == 2
    assert "syntax error" in str(err)


def test_a_syntax_error_in_one_block_still_reports_the_others() -> None:
    text = "```python\nwrite_rule('a'\n```\n```python\nimport os\n```"
    with pytest.raises(ToolCallError) as info:
        parse_tool_calls(text, TOOLS)
    assert len(info.value.problems) == 2


def test_too_many_calls() -> None:
    err = refused("\n".join(["rule_system.stop_generating()"] * 5), max_calls=4)
    assert "5 statements, more than the 4 calls allowed" in str(err)
    three = "```python\n" + "stop_generating()\n" * 3 + "```\n"
    with pytest.raises(ToolCallError, match="6 calls, more than the 4 allowed"):
        parse_tool_calls(three + three, TOOLS, max_calls=4)
    assert len(parse_tool_calls(block("stop_generating()\n" * 4), TOOLS, max_calls=4)) == 4


def test_giant_answers_are_refused_before_parsing() -> None:
    huge = block("rule_system.write_rule(rule='" + "a" * 200_000 + "', type='x')")
    with pytest.raises(ToolCallError, match="more than the 100000 accepted"):
        parse_tool_calls(huge, TOOLS)
    with pytest.raises(ToolCallError, match="more than the 50 accepted"):
        parse_tool_calls("x" * 51, TOOLS, max_chars=50)


@pytest.mark.parametrize(
    "code",
    [
        "rule_system.delete_rule(rule_id=" + "[" * 150 + "]" * 150 + ")",
        "rule_system.delete_rule(rule_id=" + "[" * 5000 + "]" * 5000 + ")",
        "rule_system.delete_rule(rule_id=" + "-" * 30_000 + "1)",
        "rule_system.delete_rule(rule_id=" + "(" * 30_000 + ")" * 30_000 + ")",
    ],
    ids=["nested-150", "nested-5000", "unary-30000", "parens-30000"],
)
def test_deep_nesting_is_an_error_or_a_value_never_a_crash(code: str) -> None:
    try:
        calls = parse_tool_calls(block(code), TOOLS)
    except ToolCallError as exc:
        assert exc.problems
    else:
        assert calls[0].name == "delete_rule"


def test_no_python_block() -> None:
    for text in ["I think we should write a rule.", "", "```text\nstop_generating()\n```"]:
        with pytest.raises(ToolCallError, match="no ```python block with calls"):
            parse_tool_calls(text, TOOLS)


def test_prose_mixed_with_calls_without_fences_is_not_code() -> None:
    with pytest.raises(ToolCallError, match="no ```python block"):
        parse_tool_calls("Let me stop.\nrule_system.stop_generating()", TOOLS)


def test_bare_text_that_parses_but_is_not_only_calls_is_not_code() -> None:
    with pytest.raises(ToolCallError, match="no ```python block"):
        parse_tool_calls("x = 1\nrule_system.stop_generating()", TOOLS)


def test_a_block_with_only_comments_is_no_calls() -> None:
    with pytest.raises(ToolCallError, match="no ```python block with calls"):
        parse_tool_calls(block("# nothing to add"), TOOLS)


def test_nothing_is_executed(tmp_path: object) -> None:
    # A call that would have side effects if run is refused and leaves no trace.
    import builtins

    before = set(vars(builtins))
    refused("__import__('os').system('touch /tmp/lorekit_toolcalls_pwned')")
    assert set(vars(builtins)) == before
    import os

    assert not os.path.exists("/tmp/lorekit_toolcalls_pwned")


def test_a_fence_inside_a_triple_quoted_example_does_not_end_the_block() -> None:
    text = (
        "```python\n"
        "rule_system.write_rule(rule='r', type='Special Phenomenon', example='''Like this:\n"
        "```\n"
        "agent.look()\n"
        "```\n"
        "''')\n"
        "rule_system.stop_generating()\n"
        "```\n"
        "Done."
    )
    calls = parse_tool_calls(text, TOOLS)
    assert [c.name for c in calls] == ["write_rule", "stop_generating"]
    assert calls[0].kwargs["example"] == "Like this:\n```\nagent.look()\n```\n"


def test_statement_count_is_bounded_before_any_per_statement_work() -> None:
    err = refused("x\n" * 5000, max_calls=40)
    assert err.problems == [(41, "5000 statements, more than the 40 calls allowed")]


def test_long_refusal_lists_are_capped() -> None:
    err = refused("import os\n" * 30)
    assert len(err.problems) == 30
    assert "- ... and 10 more" in str(err)
    assert str(err).count("imports are not allowed") == 20


def test_source_of_calls_with_non_ascii_text() -> None:
    (call,) = parse_tool_calls(block("  rule_system.delete_rule('rège_1')  # ü"), TOOLS)
    assert call.source == "rule_system.delete_rule('rège_1')"


_PIECES = [
    "rule_system",
    ".",
    "write_rule",
    "delete_rule",
    "stop_generating",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ":",
    "=",
    "rule=",
    "type=",
    "'a'",
    '"""x\n"""',
    "1",
    "-",
    "+",
    "*",
    "**",
    "lambda",
    "import",
    "os",
    "f'{a}'",
    "for",
    "in",
    "\n",
    " ",
    "#",
    "```",
    "```python\n",
    "__class__",
    ":=",
    "\\",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=40))
def test_any_text_gives_literal_calls_or_a_tool_call_error(pieces: list[str]) -> None:
    text = "".join(pieces)
    try:
        calls = parse_tool_calls(text, TOOLS)
    except ToolCallError as exc:
        assert str(exc)
        return
    assert calls
    for call in calls:
        assert call.name in TOOLS
        assert set(call.kwargs) <= set(TOOLS[call.name].params)
        assert set(TOOLS[call.name].required) <= set(call.kwargs)


def test_model_text_raises_no_warnings() -> None:
    code = (
        "rule_system.write_rule(rule='match \\d+ digits', type='x')\n"
        "rule_system.delete_rule(1if 1 else 2)"
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(ToolCallError):
            parse_tool_calls(block(code), TOOLS)
    assert caught == []
