"""``lorekit textcraft fetch-data``: ADaPT's recipe data pack, fetched on request,
checked against the shipped sha256 sums, found by the env without ``../shared``."""

from __future__ import annotations

import functools
import http.server
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from _cli import run_cli

from lorekit.envs.textcraft import datapack

REAL = datapack.find_datapack()  # the project's copy (shared/ or $LOREKIT_TEXTCRAFT_DATAPACK)


@pytest.fixture
def serve() -> Iterator[functools.partial[str]]:
    """Serve a folder on 127.0.0.1, as the public source serves the files."""
    servers: list[http.server.ThreadingHTTPServer] = []

    def start(folder: Path) -> str:
        handler = functools.partial(QuietHandler, directory=str(folder))
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/recipes/"

    yield functools.partial(start)
    for server in servers:
        server.shutdown()
        server.server_close()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def no_pack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user without the pack: an empty data folder, no shared/ copy."""
    monkeypatch.setenv("LOREKIT_DATA", str(tmp_path / "data"))
    monkeypatch.delenv(datapack.URL_ENV_VAR, raising=False)
    monkeypatch.delenv(datapack.DATAPACK_ENV_VAR, raising=False)
    monkeypatch.setattr(datapack, "_shared_copy", lambda: tmp_path / "no-shared")
    return tmp_path / "data" / datapack.PACK_NAME


COMPAT = ["--env-opt", "source=datapack", "--env-opt", "compat=true", "--split", "adapt-200"]


def test_without_the_pack_the_error_names_the_command_and_source(
    no_pack: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["run", "textcraft", "-a", "oracle", "-n", "1", *COMPAT, "--store", str(tmp_path / "s")]
    code, _, err = run_cli(args, capsys)
    assert code == 2
    assert "lorekit textcraft fetch-data" in err and "InventivetalentDev/minecraft-assets" in err
    assert str(no_pack) in err


@pytest.mark.skipif(not REAL.is_dir(), reason=f"the project's copy {REAL} is not here to serve")
def test_fetch_over_http_installs_a_pack_the_compat_env_plays(
    no_pack: Path, tmp_path: Path, serve: functools.partial[str], capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(REAL, tmp_path / "site" / "recipes")
    url = serve(tmp_path / "site")
    code, out, err = run_cli(["textcraft", "fetch-data", "--url", url], capsys)
    assert code == 0, err
    assert str(no_pack) in out and len(list(no_pack.glob("*.json"))) == 860
    args = ["run", "textcraft", "-a", "oracle", "-n", "2", *COMPAT, "--store", str(tmp_path / "s")]
    code, out, err = run_cli([*args, "--no-progress"], capsys)
    assert code == 0, err
    assert "100.0%" in out


def test_a_file_that_does_not_match_its_checksum_installs_nothing(
    no_pack: Path, tmp_path: Path, serve: functools.partial[str], capsys: pytest.CaptureFixture[str]
) -> None:
    site = tmp_path / "site" / "recipes"
    site.mkdir(parents=True)
    for name in sorted(datapack.checksums()):
        (site / name).write_text('{"type": "minecraft:crafting_shaped"}\n', encoding="utf-8")
    url = serve(tmp_path / "site")
    code, _, err = run_cli(["textcraft", "fetch-data", "--url", url], capsys)
    assert code == 1 and "checksum mismatch" in err and "nothing installed" in err
    assert not no_pack.exists() and not list(no_pack.parent.iterdir())


@pytest.mark.skipif(not REAL.is_dir(), reason=f"the project's copy {REAL} is not here to copy")
def test_fetch_from_a_local_copy(
    no_pack: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clone = tmp_path / "minecraft-assets" / "data" / "minecraft" / "recipes"
    shutil.copytree(REAL, clone)
    dest = tmp_path / "elsewhere"
    code, out, err = run_cli(
        [
            "textcraft",
            "fetch-data",
            "--from",
            str(tmp_path / "minecraft-assets"),
            "--dest",
            str(dest),
        ],
        capsys,
    )
    assert code == 0, err
    assert len(list(dest.glob("*.json"))) == 860 and "LOREKIT_TEXTCRAFT_DATAPACK" in out


def test_without_network_the_error_says_how_to_install_from_a_folder(
    no_pack: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    closed = "http://127.0.0.1:9/recipes/"  # the discard port: nothing listens
    args = ["textcraft", "fetch-data", "--url", closed, "--dest", str(tmp_path / "d")]
    code, _, err = run_cli(args, capsys)
    assert code == 1 and len(err.strip().splitlines()) == 1, err
    assert "could not download" in err and "fetch-data --from PATH" in err
    assert not (tmp_path / "d").exists() or not list((tmp_path / "d").glob("*.json"))
