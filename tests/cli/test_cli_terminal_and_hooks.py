"""Model text never acts on the terminal; graph hooks load only from where they may.

A recorded episode whose model answers hold OSC 52 (clipboard), OSC 0 (title),
CSI 2J (clear screen), a C1 CSI and a bidi override is printed by ``lorekit
show``, ``runs list`` and ``runs show``: none of those raw characters reaches
stdout. ``graph show`` only draws (a hook that writes a marker when imported
leaves none), and ``graph run`` refuses a hook outside the spec's folder unless
``--allow-hooks`` names it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli import run_cli

from lorekit.eval.store import RunStore
from lorekit.textsafe import safe_json, safe_line, safe_text

EVIL = "craft \x1b]52;c;aGVsbG8=\x07 \x1b]0;pwned\x07 \x1b[2J \u202etxt.exe \x9b31m"
RAW = ("\x1b", "\x07", "\u202e", "\x9b")


@pytest.fixture(autouse=True)
def _here(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for var in ("OPENAI_API_KEY", "LOREKIT_STORE", "LOREKIT_DEBUG"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.chdir(tmp_path)


def assert_no_raw(text: str) -> None:
    for raw in RAW:
        assert raw not in text, f"{raw!r} reached the terminal"


def test_textsafe_escapes_controls_and_keeps_layout() -> None:
    assert safe_text("a\nb\tc\x1b[2J\u202e\x07") == "a\nb\tc\\x1b[2J\\u202e\\x07"
    assert safe_line("a\nb") == "a\\x0ab"
    assert json.loads(safe_json(json.dumps({"k": EVIL}, ensure_ascii=False)))["k"] == EVIL
    assert_no_raw(safe_json(json.dumps({"k": EVIL}, ensure_ascii=False)))


def test_show_prints_model_escape_sequences_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answer = f"Think: {EVIL}\nAction: {EVIL}"
    config = tmp_path / "evil.yaml"
    config.write_text(
        json.dumps(
            {"roles": {"default": {"provider": "scripted", "model": "x", "answers": [answer]}}}
        )
    )
    store = str(tmp_path / "s.sqlite3")
    args = ["run", "textcraft", "-a", "adapt", "-c", str(config), "-n", "1", "--run-id", "e1"]
    code, _, err = run_cli([*args, "--store", store, "--agent-opt", "max_calls=6"], capsys)
    assert code == 0, err
    code, out, err = run_cli(["show", "e1", "--store", store], capsys)
    assert code == 0, err
    assert "\\x1b]52;c;aGVsbG8=\\x07" in out  # shown, as text
    assert_no_raw(out + err)
    with RunStore(store) as db:  # a run id from before ids were checked
        db.create_run("old\x1b]0;t\x07", env="textcraft", agent="random", config={})
    for command in (["runs", "list"], ["runs", "show", "e1"], ["runs", "show", "e1", "--json"]):
        code, out, err = run_cli([*command, "--store", store], capsys)
        assert code == 0, err
        assert_no_raw(out + err)


def test_error_lines_escape_what_they_quote(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = str(tmp_path / "s.sqlite3")
    with RunStore(store) as db:  # a run id from before ids were checked
        db.create_run("old\x1b]0;t\x07\u202e", env="textcraft", agent="random", config={})
    code, _, err = run_cli(["report", "nope", "--store", store], capsys)
    assert code == 2 and err.startswith("lorekit: error: RUN: no run 'nope'")
    assert "old\\x1b]0;t\\x07" in err  # the recent runs it lists, escaped
    assert_no_raw(err)


def _hook_dir(tmp_path: Path) -> tuple[Path, Path]:
    """A spec folder whose hook writes a marker file when imported, and the marker."""
    folder = tmp_path / "spec"
    folder.mkdir()
    marker = tmp_path / "imported.txt"
    code = f"open({str(marker)!r}, 'w').write('x')\ndef h(ctx, out):\n    return out\n"
    (folder / "hooks.py").write_text(code)
    (tmp_path / "outside.py").write_text(code)
    (folder / "in.yaml").write_text("nodes:\n  a: {prompt: Hi, after_query: hooks.py:h}\n")
    (folder / "out.yaml").write_text("nodes:\n  a: {prompt: Hi, after_query: ../outside.py:h}\n")
    return folder, marker


def test_graph_show_imports_no_hook(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder, marker = _hook_dir(tmp_path)
    code, out, err = run_cli(["graph", "show", str(folder / "in.yaml")], capsys)
    assert code == 0, err
    assert "a" in out
    assert not marker.exists(), "graph show imported a hook"
    code, _, err = run_cli(["graph", "show", str(folder / "out.yaml")], capsys)
    assert code == 2 and "outside the spec's folder" in err
    assert not marker.exists()


def test_graph_run_refuses_hooks_outside_the_spec_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder, marker = _hook_dir(tmp_path)
    spec = str(folder / "out.yaml")
    code, _, err = run_cli(["graph", "run", spec, "-m", "echo"], capsys)
    assert code == 2, err
    line = err.strip()
    assert line.startswith("lorekit: error: ") and "outside the spec's folder" in line
    assert "--allow-hooks" in line
    assert not marker.exists()
    code, _, err = run_cli(
        ["graph", "run", spec, "-m", "echo", "--allow-hooks", str(tmp_path)], capsys
    )
    assert code == 0, err
    assert marker.exists()  # allowed by name: loaded


def test_a_symlink_out_of_the_folder_is_outside(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder, marker = _hook_dir(tmp_path)
    (folder / "link.py").symlink_to(tmp_path / "outside.py")
    (folder / "sym.yaml").write_text("nodes:\n  a: {prompt: Hi, after_query: link.py:h}\n")
    code, _, err = run_cli(["graph", "run", str(folder / "sym.yaml"), "-m", "echo"], capsys)
    assert code == 2 and "outside the spec's folder" in err
    assert not marker.exists()


def test_dotted_hooks_outside_lorekit_need_allowing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, marker = _hook_dir(tmp_path)
    pkg = tmp_path / "site" / "userhooks_pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(f"open({str(marker)!r}, 'w').write('x')\n")
    (pkg / "mod.py").write_text("def h(ctx, out):\n    return out\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    spec = tmp_path / "spec" / "dotted.yaml"
    spec.write_text("nodes:\n  a: {prompt: Hi, after_query: userhooks_pkg.mod.h}\n")
    code, _, err = run_cli(["graph", "run", str(spec), "-m", "echo"], capsys)
    assert code == 2 and "--allow-hooks userhooks_pkg" in err, err
    assert not marker.exists(), "the package's __init__ ran before the refusal"
    args = ["graph", "run", str(spec), "-m", "echo", "--allow-hooks", "userhooks_pkg"]
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
