"""``reproduce run --model local``: a row whose prompt would outgrow the bundled
model's 8,192-token context is refused before anything starts (issue 42: the HTTP
400 came 8 minutes in), with a turn cap that fits; that cap holds against a served
model answering as long as the agent lets it. None of this needs the ``local``
extra: the context size and the saved estimate are enough."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from _cli import run_cli

from lorekit.eval.reproduce import find_experiment
from lorekit.eval.store import RunStore
from lorekit.llm.testing import OpenAICompatServer

LONG_THOUGHT = "think: " + "abc " * 300
"""An answer longer than any ``max_tokens`` the rows allow (about 4 characters a token)."""


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LOREKIT_STORE", raising=False)
    return tmp_path


def _no_server(*_args: Any, **_kwargs: Any) -> None:
    raise AssertionError("the bundled model's server was started")


def test_a_row_that_outgrows_the_context_is_refused_up_front(
    here: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from lorekit.llm import local_server

    monkeypatch.setattr(local_server.LocalServer, "__init__", _no_server)
    args = ["reproduce", "run", "adapt-table2-textcraft", "--rows", "react", "--model", "local"]
    opts = ["-n", "1", "--store", str(here / "s.sqlite3"), "--no-progress"]
    code, _out, err = run_cli([*args, *opts], capsys)
    assert code == 2 and err.count("\n") == 1, err
    assert "row 'react' does not fit the bundled model" in err and "at 60 turns" in err
    assert "over the model's 8,192-token context" in err
    assert not (here / "s.sqlite3").exists()  # nothing started, nothing written
    cap = re.search(r"--agent-opt max_turns=(\d+)", err)
    assert cap is not None and 5 < int(cap.group(1)) < 60
    # the whole experiment: every row that does not fit is named in the one line
    code, _out, err = run_cli(["reproduce", "run", "adapt-table2-webshop", "--model", "local",
                               *opts], capsys)  # fmt: skip
    assert code == 2 and "does not fit" in err and err.count("\n") == 1


def test_a_key_no_chosen_row_takes_is_refused(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["reproduce", "run", "adapt-table2-textcraft", "--rows", "react", "--dry-run"]
    code, _out, err = run_cli([*args, "--agent-opt", "d_max=2"], capsys)
    assert code == 2
    assert err == "lorekit: error: --agent-opt: no chosen row's agent (react) takes 'd_max'\n"


def _longest_served(here: Path, capsys: pytest.CaptureFixture[str], turns: int, answer: Any) -> int:
    """The longest prompt plus answer (tokens, about 4 characters each) ReAct's row sends
    at ``turns`` turns to a fake server answering ``answer``."""
    exp = find_experiment("adapt-table2-textcraft")
    store = here / f"{turns}-{len(list(here.glob('*.sqlite3')))}.sqlite3"  # a run of its own
    with OpenAICompatServer(answer, report_usage=False) as srv:
        args = ["run", "textcraft", "--agent", "react", "--agent-opt", "profile=paper",
                "--agent-opt", f"max_turns={turns}", "--split", exp.split, "-n", "1"]  # fmt: skip
        for key, value in exp.env_options.items():
            args += ["--env-opt", f"{key}={'none' if value is None else value}"]
        code, _out, err = run_cli([*args, "--model", "m", "--base-url", srv.base_url,
                                   "--store", str(store), "--run-id", "x", "--no-progress"],
                                  capsys)  # fmt: skip
        assert code == 0, err
    with RunStore.open_readonly(store) as db:
        calls = db.llm_calls("x")
    return max(int(c["prompt_tokens"]) + int(c["completion_tokens"]) for c in calls)


def test_the_longest_prompt_is_what_a_served_run_sends(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The check's figure against served models playing ReAct's row: one that answers a
    short action for all 60 turns (predicted within 15%), one that thinks aloud as long
    as the agent allows every other turn (the check's figure bounds it from above), and
    the same at the advised cap (within the context)."""
    from lorekit.cli.reproduce_estimates import saved_for
    from lorekit.cli.reproduce_local import ANSWER_TOKENS, MARGIN
    from lorekit.eval.cost_range import longest_prompt, turns_that_fit
    from lorekit.llm.local_server import LOCAL_CONTEXT

    exp = find_experiment("adapt-table2-textcraft")
    est = saved_for(exp, exp.runnable_rows, 200)
    assert est is not None
    context = est.rows["react"].context
    answer = int(context.get("answer_cap", ANSWER_TOKENS))
    assert answer == 150  # the paper profile's executor answers (ADaPT's code: 150 tokens)
    served = _longest_served(here, capsys, 60, lambda _body: "inventory")
    assert longest_prompt(context, 3, 60) == pytest.approx(served, rel=0.15), (context, served)
    answers = iter([LONG_THOUGHT, "inventory"] * 60)
    thinking = _longest_served(here, capsys, 60, lambda _body: next(answers))
    assert served * 2 < thinking <= longest_prompt(context, answer, 60)
    cap = turns_that_fit(context, answer, LOCAL_CONTEXT / MARGIN)
    answers = iter([LONG_THOUGHT, "inventory"] * cap)
    assert _longest_served(here, capsys, cap, lambda _body: next(answers)) <= LOCAL_CONTEXT


def test_a_row_option_changed_on_the_command_line_gets_no_verdict(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A turn cap the paper did not use is another setup: it is recorded and named, and
    the comparison gives no verdict."""
    import json

    with OpenAICompatServer(lambda _body: "inventory", report_usage=False) as srv:
        args = ["reproduce", "run", "adapt-table2-textcraft", "--rows", "react", "-n", "1",
                "--agent-opt", "max_turns=3", "--model", "m", "--base-url", srv.base_url,
                "--store", str(here / "s.sqlite3"), "--run-id", "cap", "--no-progress"]  # fmt: skip
        code, _out, err = run_cli(args, capsys)
    assert code == 0, err
    saved = json.loads((here / "reproduce" / "adapt-table2-textcraft-cap.json").read_text())
    assert saved["setup_differs"] == ["row react: max_turns=3, the experiment sets none"]
    assert saved["reproduction"] is False
    with RunStore.open_readonly(here / "s.sqlite3") as db:
        assert len(db.llm_calls("cap.react")) == 3  # the cap held
