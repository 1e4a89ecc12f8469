"""``lorekit laws extract`` (the command, run the way the entry point runs it)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from lorekit.cli.errors import run_cli
from lorekit.laws.commands.extract import extract
from lorekit.laws.extract_progress import progress_path


def _state(wood: int, face: str) -> dict[str, Any]:
    return {
        "attributes": {"health": 9, "food": 9, "drink": 9, "energy": 9},
        "tools": {},
        "materials": {"wood": wood} if wood else {},
        "face": face,
        "nearby": [["grass"] * 3, ["grass", "player", "grass"], ["grass"] * 3],
    }


def _records(path: Path) -> Path:
    rows = [
        {
            "achievement": "collect_wood",
            "action": "collect_wood",
            "success": True,
            "before": _state(0, "tree"),
            "after": _state(1, "tree"),
        },
        {
            "achievement": "collect_wood",
            "action": "collect_wood",
            "success": False,
            "before": _state(0, "grass"),
            "after": _state(0, "grass"),
        },
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _form(form: dict[str, Any], words: str = "So it seems.") -> str:
    return f"{words}\n```json\n{json.dumps(form)}\n```"


NOTHING = _form({"costs": {}, "gains": {}})
WOOD = _form({"costs": {}, "gains": {"wood": 1}}, "One wood more.")
TREE = _form({"requires": {}, "nearby": [], "faced": ["tree"]}, "Face a tree.")
STAYS = _form({"leaves": None}, "The tree stays.")
# In order: attributes guess and record, tools guess and record, materials guess
# and record, the faced cell's guess and record, the preconditions guess and its
# two records.
GOOD = [NOTHING, NOTHING, NOTHING, NOTHING, NOTHING, WOOD, STAYS, STAYS, TREE, TREE, TREE]


def _config(tmp_path: Path, answers: list[str]) -> Path:
    cfg = {
        "roles": {"default": {"provider": "scripted", "model": "fake", "answers": answers}},
        "cache": {"mode": "read-write", "path": str(tmp_path / "cache.sqlite3")},
    }
    path = tmp_path / "run.yaml"
    path.write_text(json.dumps(cfg))
    return path


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = 0
    try:
        run_cli(extract, args)  # type: ignore[arg-type]
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_extract_writes_the_experience(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records, out = _records(tmp_path / "r.jsonl"), tmp_path / "exp.json"
    args = [str(records), "-o", str(out), "-c", str(_config(tmp_path, GOOD)), "--jobs", "1"]
    code, stdout, err = _run(args, capsys)
    assert code == 0, err
    data = json.loads(out.read_text())
    law = data["laws"]["collect_wood"]
    assert (law["gains"], law["faced"], law["requires"]) == ({"wood": 1}, ["tree"], {})
    assert data["source"] == "llm:fake" and data["meta"]["calls"] == len(GOOD)
    assert "wrote" in stdout and "1 laws from 11 model calls" in stdout
    assert progress_path(out).is_file()
    # A rerun finds every step done: no model answers are needed at all.
    again = [str(records), "-o", str(out), "-c", str(_config(tmp_path, ["garbage"]))]
    code, stdout, _ = _run(again, capsys)
    assert code == 0 and "this run: 0 model calls" in stdout
    assert json.loads(out.read_text()) == data


def test_after_a_model_error_the_same_command_continues(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A model that stops answering mid-way (its script runs out) ends the run
    with a one-line error; the rerun asks only what is left, from the cache
    where it can."""
    from lorekit.llm.errors import ScriptExhausted
    from lorekit.llm.scripted import ScriptedLLM

    records, out = _records(tmp_path / "r.jsonl"), tmp_path / "exp.json"
    real_init = ScriptedLLM.__init__

    def short_script(self: ScriptedLLM, answers: Any = None, **kw: Any) -> None:
        real_init(self, answers, **{**kw, "default": ScriptExhausted("out of answers")})

    # The config's scripted model answers 5 times and then fails like a dead server.
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ScriptedLLM, "__init__", short_script)
        cut = _config(tmp_path, GOOD[:5])
        code, _, err = _run([str(records), "-o", str(out), "-c", str(cut)], capsys)
    assert code == 1 and "rerun the same command to continue" in err
    assert not out.exists()
    # A list script starts from its first answer: give the rerun what is left.
    rest = _config(tmp_path, GOOD[5:])
    code, stdout, err = _run([str(records), "-o", str(out), "-c", str(rest)], capsys)
    assert code == 0, err
    assert "this run: 6 model calls (0 from the cache)" in stdout
    data = json.loads(out.read_text())
    assert data["meta"]["calls"] == len(GOOD)
    assert data["laws"]["collect_wood"]["gains"] == {"wood": 1}
    assert data["laws"]["collect_wood"]["faced"] == ["tree"]


def test_an_achievement_without_usable_answers_fails_the_command_and_is_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records, out = _records(tmp_path / "r.jsonl"), tmp_path / "exp.json"
    args = [str(records), "-o", str(out), "-c", str(_config(tmp_path, ["no idea"]))]
    code, _, err = _run([*args, "--max-attempts", "2"], capsys)
    assert code == 1
    assert "1 achievement(s) gave no usable answer within 2 attempts" in err
    assert "collect_wood at attributes effects, step 0" in err
    assert len(err.strip().splitlines()) == 1
    failures = json.loads(out.read_text())["meta"]["failures"]
    assert failures["collect_wood"]["answer"] == "no idea"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--achievements", "chop_tree"], "unknown achievement 'chop_tree'"),
        (["--achievements", "collect_coal"], "no attempt at 'collect_coal'"),
        (["--achievements", " , "], "--achievements: expected names"),
        (["--role", "planner=x"], "unknown role 'planner' for laws extract"),
    ],
)
def test_bad_arguments_are_one_line_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    records, out = _records(tmp_path / "r.jsonl"), tmp_path / "exp.json"
    args = [str(records), "-o", str(out), "-c", str(_config(tmp_path, GOOD)), *extra]
    code, _, err = _run(args, capsys)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_a_model_is_required(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = _records(tmp_path / "r.jsonl")
    code, _, err = _run([str(records), "-o", str(tmp_path / "e.json")], capsys)
    assert code == 2 and "needs a model" in err


def test_records_that_are_not_law_records_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "r.jsonl"
    bad.write_text('{"state": {}, "action": "do"}\n')
    args = [str(bad), "-o", str(tmp_path / "e.json"), "-c", str(_config(tmp_path, GOOD))]
    code, _, err = _run(args, capsys)
    assert code == 2 and "not a file of law records" in err


def _http_answer(body: dict[str, Any]) -> str:
    """What a well-informed model answers, as a function of the request."""
    prompt = body["messages"][1]["content"]
    if "must hold before" in prompt:
        return TREE
    if '"leaves"' in prompt:  # the faced cell's form
        return STAYS
    if re.search(r"player's\s+materials", prompt) and "before:" in prompt:
        return WOOD
    return NOTHING


def test_over_http_through_the_cache_a_dead_server_costs_nothing_twice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real OpenAI-compatible server that answers 5 times and then refuses
    (after one 503 the client retries), then one that answers the rest;
    finally, with no server at all, --fresh rebuilds the same experience from
    the cache alone (the cache is on by default)."""
    from lorekit.llm.testing import Fault, OpenAICompatServer

    monkeypatch.chdir(tmp_path)
    records, out = _records(tmp_path / "r.jsonl"), tmp_path / "exp.json"

    def args(url: str) -> list[str]:
        return [str(records), "-o", str(out), "--model", "m", "--base-url", url, "--jobs", "1"]

    with OpenAICompatServer(GOOD[:5]) as srv:
        srv.inject(Fault.server_error(503, retry_after=0))
        code, _, err = _run(args(srv.base_url), capsys)
        assert srv.request_count == 1 + 5 + 1
    assert code == 1 and "rerun the same command to continue" in err, err
    assert not out.exists()
    with OpenAICompatServer(_http_answer) as srv:
        code, _, err = _run(args(srv.base_url), capsys)
        assert code == 0, err
        assert srv.request_count == len(GOOD) - 5
    first = json.loads(out.read_text())
    assert first["laws"]["collect_wood"]["gains"] == {"wood": 1}
    assert first["source"] == "llm:m" and first["meta"]["calls"] == len(GOOD)
    code, stdout, err = _run([*args("http://127.0.0.1:9"), "--fresh"], capsys)
    assert code == 0, err
    assert f"this run: {len(GOOD)} model calls ({len(GOOD)} from the cache)" in stdout
    assert json.loads(out.read_text()) == first
