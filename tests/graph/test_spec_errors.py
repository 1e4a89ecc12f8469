"""Spec errors: every problem reported, each at file:line:column of what it names."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from lorekit.cli.graph import graph
from lorekit.graph.spec import SpecError, load_spec


def errors_of(text: str, tmp_path: Path) -> list[str]:
    path = tmp_path / "s.yaml"
    path.write_text(text)
    with pytest.raises(SpecError) as err:
        load_spec(path)
    assert str(err.value) == "\n".join(err.value.errors)
    return [e.removeprefix(str(path)) for e in err.value.errors]


def test_duplicate_node_keys_are_refused_with_both_lines(tmp_path: Path) -> None:
    text = "nodes:\n  plan:\n    prompt: first\n  act:\n    prompt: A\n  plan:\n    prompt: again\n"
    (line,) = errors_of(text, tmp_path)
    assert line.startswith(":6:3: duplicate key 'plan' (first defined at line 2, column 3)")


def test_yaml_syntax_error_reports_its_line_not_the_end(tmp_path: Path) -> None:
    text = 'nodes:\n  a:\n    prompt: "never closed\n  b:\n    prompt: B\n\n\n\n'
    (line,) = errors_of(text, tmp_path)
    assert line.startswith(":3:13: not valid YAML"), line


def test_every_problem_is_reported(tmp_path: Path) -> None:
    text = """\
nodes:
  a:
    prompt: "x {nope}"
    deps: [zz]
  b:
    prompt: y
    writes: [{key: k, value: "steps"}]
  c d:
    prompt: z
"""
    lines = errors_of(text, tmp_path)  # in the order of the file
    assert len(lines) == 4, lines
    assert ":3:5: node 'a': field 'prompt': reads 'nope'" in lines[0]
    assert ":4:12: node 'a': field 'deps': unknown node 'zz'" in lines[1]
    assert ":7:23: node 'b': field 'writes': write value 'steps' must be 'output'" in lines[2]
    assert "'output.steps'" in lines[2] and "^output" not in lines[2]  # no raw regex
    assert lines[3].startswith(":8:3: node 'c d': node key 'c d' must start")
    assert "field 'prompt'" not in lines[3]  # a bad key is not a prompt problem


def test_cycle_and_race_name_their_line(tmp_path: Path) -> None:
    cycle = "nodes:\n  x:\n    prompt: X\n    deps: [y]\n  y:\n    prompt: Y\n    deps: [x]\n"
    (line,) = errors_of(cycle, tmp_path)
    assert line.startswith(":4:5: node 'x': field 'deps': the graph would have a cycle")
    race = """\
database: {plan: p, kb: []}
nodes:
  w: {prompt: W, writes: [plan], hook_writes: [kb]}
  r:
    prompt: "Plan {plan}"
  s:
    prompt: S
    hook_reads: [kb]
"""
    lines = errors_of(race, tmp_path)
    assert lines[0].startswith(":5:5: node 'r': field 'prompt': race on database key 'plan'")
    assert lines[1].startswith(":8:5: node 's': field 'hook_reads': race on database key 'kb'")


def test_unsatisfiable_schema_is_refused_at_load(tmp_path: Path) -> None:
    text = """\
nodes:
  p:
    prompt: P
    output: json
    schema: {type: object, required: [steps], additionalProperties: false}
"""
    (line,) = errors_of(text, tmp_path)
    assert line.startswith(":5:5: node 'p': field 'schema': ")
    assert "can never be satisfied" in line and "'steps'" in line


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "required": ["a"], "additionalProperties": False},
        {"type": "string", "enum": []},
        {"type": "string", "enum": [1, 2]},
        {"type": "array", "minItems": 3, "maxItems": 1},
        {
            "type": "object",
            "properties": {
                "x": {"type": "object", "required": ["y"], "additionalProperties": False}
            },
        },
    ],
)
def test_unsatisfiable_schemas_are_refused_in_code(schema: dict[str, object]) -> None:
    from lorekit.graph import GraphError, Node

    with pytest.raises(GraphError, match="can never be satisfied") as err:
        Node("p", "P", output="json", schema=schema)
    assert err.value.field == "schema"


def test_cli_counts_the_rest_and_lists_all_on_request(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("nodes:\n  a:\n    prompt: x\n    deps: [zz, yy]\n  b:\n    prompt: '{q}'\n")
    result = CliRunner().invoke(graph, ["show", str(path)])
    assert result.exit_code == 2
    assert "unknown node 'zz'" in result.stderr and "(+2 more)" in result.stderr
    assert "--all-errors" in result.stderr and "unknown node 'yy'" not in result.stderr
    result = CliRunner().invoke(graph, ["show", "--all-errors", str(path)])
    assert result.exit_code == 2
    for needle in ("unknown node 'zz'", "unknown node 'yy'", "reads 'q'", "3 problems"):
        assert needle in result.stderr


def test_missing_run_time_value_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("database:\n  plan: p\n  goal: null\nnodes:\n  a: {prompt: '{goal} {plan}'}\n")
    with pytest.raises(SpecError, match=r"s.yaml:3:3: database: no value for 'goal'"):
        load_spec(path).initial_db()
