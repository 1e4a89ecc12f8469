"""``lorekit alfworld fetch-data``: archives checked by size and sha256 before
anything is unpacked; a mismatch, an unsafe member or no network installs nothing.

The real archives cannot be downloaded here: these tests give small archives of
the same layout and a manifest of their own hashes (the shipped one is read by
``test_the_shipped_manifest_names_the_three_archives``)."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from _cli import run_cli

from lorekit.envs import make
from lorekit.envs.alfworld import release, variants
from lorekit.envs.alfworld.fetch import FetchError, fetch_release


def _zip(path: Path, members: dict[str, str]) -> dict[str, Any]:
    with zipfile.ZipFile(path, "w") as out:
        for name, text in members.items():
            out.writestr(name, text)
    data = path.read_bytes()
    return {
        "name": path.name,
        "url": "",
        "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
    }


def _archives(folder: Path) -> list[dict[str, Any]]:
    """Three archives laid out like the release's, holding one release game."""
    folder.mkdir()
    game_dir = "json_2.1.1/valid_unseen/pick_and_place_simple-Mug-None-Desk-308/trial_T1"
    grammar = release.grammar_with_goal("put a mug in desk")
    game = {"pddl_domain": release.game_domain(), "grammar": grammar, "solvable": True}
    traj = {"task_type": "pick_and_place_simple", "pddl_params": {"object_target": "Mug"}}
    return [
        _zip(folder / "json_2.1.1_json.zip", {f"{game_dir}/traj_data.json": json.dumps(traj)}),
        _zip(folder / "json_2.1.1_pddl.zip", {f"{game_dir}/initial_state.pddl": "(define)"}),
        _zip(folder / "json_2.1.1_tw-pddl.zip", {f"{game_dir}/game.tw-pddl": json.dumps(game)}),
    ]


def test_the_shipped_manifest_names_the_three_archives() -> None:
    names = [str(spec["name"]) for spec in release.archive_specs()]
    assert names == ["json_2.1.1_json.zip", "json_2.1.1_pddl.zip", "json_2.1.1_tw-pddl.zip"]
    for spec in release.archive_specs():
        assert str(spec["url"]).startswith("https://github.com/alfworld/alfworld/releases/")
        assert len(str(spec["sha256"])) == 64 and int(spec["bytes"]) > 30_000_000


def test_checked_archives_are_installed_whole(tmp_path: Path) -> None:
    specs = _archives(tmp_path / "zips")
    dest = tmp_path / "alfworld"
    assert fetch_release(dest, from_path=tmp_path / "zips", specs=specs) == dest
    root = dest / "json_2.1.1"
    assert variants.folder_variant(root) == "release"
    assert (dest / "logic" / "alfred.twl2").read_text() == release.release_grammar()
    assert (dest / "logic" / "alfred.pddl").read_text() == release.release_domain()
    marker = json.loads((dest / variants.MARKER).read_text())
    assert marker["variant"] == "release" and marker["games_read_as"] == "ALFWorld's 2.1.1 release"
    assert not list(tmp_path.glob(".alfworld-*"))  # no staging folder left behind
    # An earlier install of LoreKit's is replaced; any other folder is not touched.
    fetch_release(dest, from_path=tmp_path / "zips", specs=specs)
    mine = tmp_path / "mine"
    (mine / "notes").mkdir(parents=True)
    with pytest.raises(FetchError, match="not empty and holds no LoreKit install"):
        fetch_release(mine, from_path=tmp_path / "zips", specs=specs)
    assert (mine / "notes").is_dir()


def test_one_archive_off_its_hash_installs_nothing(tmp_path: Path) -> None:
    specs = _archives(tmp_path / "zips")
    specs[2] = {**specs[2], "sha256": "0" * 64}
    dest = tmp_path / "alfworld"
    with pytest.raises(
        FetchError, match=r"json_2\.1\.1_tw-pddl\.zip: .* expected .*nothing installed"
    ):
        fetch_release(dest, from_path=tmp_path / "zips", specs=specs)
    assert not dest.exists() and not list(tmp_path.glob(".alfworld-*"))


def test_a_member_that_climbs_out_refuses_the_archive(tmp_path: Path) -> None:
    specs = _archives(tmp_path / "zips")
    specs[0] = _zip(tmp_path / "zips" / "json_2.1.1_json.zip", {"../outside.txt": "x"})
    with pytest.raises(FetchError, match=r"refusing member '\.\./outside\.txt'"):
        fetch_release(tmp_path / "alfworld", from_path=tmp_path / "zips", specs=specs)
    assert not (tmp_path / "outside.txt").exists() and not (tmp_path / "alfworld").exists()


def test_without_network_the_error_names_from_path(tmp_path: Path) -> None:
    specs = _archives(tmp_path / "zips")
    with pytest.raises(FetchError, match="give their folder with --from PATH"):
        fetch_release(
            tmp_path / "alfworld", url="http://127.0.0.1:9/none", specs=specs, timeout_s=5
        )


def test_the_command_installs_and_the_env_plays_what_it_installed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    specs = _archives(tmp_path / "zips")
    monkeypatch.setattr(release, "archive_specs", lambda: specs)
    monkeypatch.setenv("LOREKIT_DATA", str(tmp_path / "home"))
    dest = tmp_path / "alfworld"
    code, out, err = run_cli(
        ["alfworld", "fetch-data", "--from", str(tmp_path / "zips"), "--dest", str(dest)], capsys
    )
    assert code == 0, err
    assert f"installed ALFWorld's release: {dest}" in out and f"data_dir={dest}" in out
    env = make("alfworld", source="official", data_dir=str(dest), split="test")
    assert "games of ALFWorld's 2.1.1 release" in env.describe_split("test")
    code, out, err = run_cli(["alfworld", "fetch-data", "--from", str(tmp_path / "none")], capsys)
    assert code == 1 and "--from" in err and "json_2.1.1_json.zip" in err
