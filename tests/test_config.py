"""Run configs: validation errors name file, field and expectation; overrides."""

from pathlib import Path

import pytest

from lorekit.config import (
    ConfigError,
    RunConfig,
    apply_overrides,
    build_roles,
    load_config,
    parse_config,
)
from lorekit.llm import CachedLLM, LimitedLLM, ScriptedLLM


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "run.yaml"
    p.write_text(text)
    return p


def test_valid_config_loads(tmp_path: Path) -> None:
    p = write(
        tmp_path,
        """
roles:
  default: {model: gpt-4o-mini, price: {prompt: 0.15, completion: 0.6}}
  planner: {model: qwen, base_url: "http://127.0.0.1:8000/v1", max_in_flight: 4}
cache: {mode: read-write, path: cache.sqlite3}
""",
    )
    cfg = load_config(p)
    assert cfg.roles["planner"].max_in_flight == 4
    assert cfg.prices()["gpt-4o-mini"].completion == 0.6
    assert cfg.cache.mode == "read-write"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("roles: {default: {model: x, max_in_flight: 0}}", "roles.default.max_in_flight"),
        ("roles: {default: {model: x, base_url: ftp://x}}", "http:// or https://"),
        ("roles: {default: {modle: x}}", "roles.default.modle"),
        ("roles: {}", "at least one role"),
        ("cache: {mode: maybe}", "cache.mode"),
        ("roles: [1, 2]", "roles"),
    ],
)
def test_errors_name_file_and_field(tmp_path: Path, text: str, expected: str) -> None:
    p = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(p)
    msg = str(info.value)
    assert str(p) in msg and expected in msg


def test_yaml_syntax_error_has_line(tmp_path: Path) -> None:
    p = write(tmp_path, "roles:\n  default: {model: x\n")
    with pytest.raises(ConfigError, match=r"run\.yaml:\d+:\d+: not valid YAML"):
        load_config(p)


def test_missing_and_non_mapping(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such config file"):
        load_config(tmp_path / "nope.yaml")
    with pytest.raises(ConfigError, match="expected a mapping"):
        load_config(write(tmp_path, "- a\n- b\n"))


def test_overrides() -> None:
    cfg = RunConfig()
    out = apply_overrides(
        cfg, model="llama3", base_url="http://127.0.0.1:11434/v1", roles=["planner=qwen"]
    )
    assert out.roles["default"].model == "llama3"
    assert out.roles["default"].provider == "openai"
    assert out.roles["planner"].model == "qwen"
    assert out.roles["planner"].base_url == "http://127.0.0.1:11434/v1"
    with pytest.raises(ConfigError, match="ROLE=MODEL"):
        apply_overrides(cfg, roles=["planner"])
    with pytest.raises(ConfigError, match=r"command line: cache\.mode"):
        apply_overrides(cfg, cache="sometimes")


async def test_build_roles_scripted_offline(tmp_path: Path) -> None:
    cfg = parse_config(
        {
            "roles": {"default": {"provider": "scripted", "model": "s", "answers": ["a", "b"]}},
            "cache": {"mode": "read-write", "path": str(tmp_path / "c.sqlite3")},
        }
    )
    roles = build_roles(cfg)
    llm = roles["anything"]
    assert isinstance(llm, CachedLLM) and isinstance(llm.inner, LimitedLLM)
    assert isinstance(llm.inner.inner, ScriptedLLM)
    assert (await llm.complete("x")).text == "a"
    assert (await llm.complete("y")).text == "b"
    assert (await llm.complete("z")).text == "b"  # last answer repeats
    assert (await llm.complete("x")).cached
