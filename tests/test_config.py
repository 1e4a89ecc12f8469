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
from lorekit.llm import CachedLLM, LimitedLLM, Limiter, ScriptedLLM


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


# ------------------------------------------------------------ limiter keys
def _limiter(llm: object) -> object:
    from lorekit.llm.openai_compat import OpenAICompatLLM

    assert isinstance(llm, OpenAICompatLLM)
    return llm._limiter


def test_roles_on_one_server_share_one_limiter_by_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    cfg = parse_config(
        {
            "roles": {
                "default": {"model": "small", "base_url": "http://127.0.0.1:8000/v1"},
                "planner": {"model": "big", "base_url": "http://127.0.0.1:8000/v1/"},
                "other": {"model": "small", "base_url": "http://127.0.0.1:9000/v1"},
            }
        }
    )
    roles = build_roles(cfg)
    shared = _limiter(roles["default"])
    assert isinstance(shared, Limiter) and shared.max_in_flight == 8
    assert _limiter(roles["planner"]) is shared  # another model, same server
    assert _limiter(roles["other"]) is not shared  # another server


def test_limit_scope_model_gives_each_model_its_own_limiter() -> None:
    url = "http://127.0.0.1:8000/v1"
    cfg = parse_config(
        {
            "roles": {
                "default": {"model": "a", "base_url": url, "limit_scope": "model"},
                "planner": {
                    "model": "b",
                    "base_url": url,
                    "limit_scope": "model",
                    "max_in_flight": 2,
                },
                "twin": {"model": "b", "base_url": url, "limit_scope": "model", "max_in_flight": 2},
            }
        }
    )
    roles = build_roles(cfg)
    a, b = _limiter(roles["default"]), _limiter(roles["planner"])
    assert a is not b and _limiter(roles["twin"]) is b
    assert isinstance(b, Limiter) and b.max_in_flight == 2


def test_unset_base_url_means_the_same_server_as_its_resolved_url(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:7000/v1")
    roles = build_roles(
        parse_config(
            {
                "roles": {
                    "default": {"model": "a"},
                    "planner": {"model": "b", "base_url": "http://127.0.0.1:7000/v1"},
                }
            }
        )
    )
    assert _limiter(roles["default"]) is _limiter(roles["planner"])


def test_conflicting_limits_on_one_server_are_refused_naming_both(tmp_path: Path) -> None:
    p = write(
        tmp_path,
        """
roles:
  default: {model: a, base_url: "http://127.0.0.1:8000/v1"}
  planner: {model: b, base_url: "http://127.0.0.1:8000/v1", max_in_flight: 2}
""",
    )
    with pytest.raises(ConfigError) as info:
        load_config(p)
    msg = str(info.value)
    assert str(p) in msg and "roles.planner" in msg and "roles.default" in msg
    assert "limit_scope: model" in msg and "\n" not in msg


def test_request_timeout_and_retry_after_cap_reach_the_backend() -> None:
    cfg = parse_config(
        {"roles": {"default": {"model": "a", "base_url": "http://127.0.0.1:8000/v1"}}}
    )
    cfg = apply_overrides(cfg, roles=["planner=b"], request_timeout=2.5)
    assert {s.timeout_s for s in cfg.roles.values()} == {2.5}
    cfg = parse_config(
        {
            "roles": {
                "default": {
                    "model": "a",
                    "base_url": "http://127.0.0.1:8000/v1",
                    "timeout_s": 3,
                    "max_retry_after_s": 5,
                }
            }
        }
    )
    llm = build_roles(cfg)["default"]
    from lorekit.llm.openai_compat import OpenAICompatLLM

    assert isinstance(llm, OpenAICompatLLM)
    assert llm._timeout_s == 3.0 and llm.retry_policy.max_retry_after_s == 5.0


@pytest.mark.parametrize("value", [0, -1, float("inf"), float("nan")])
def test_bad_request_timeouts_are_refused(value: float) -> None:
    with pytest.raises(ConfigError, match="timeout_s"):
        apply_overrides(RunConfig(), model="m", request_timeout=value)


def test_cache_mode_off_unquoted_is_off(tmp_path: Path) -> None:
    # YAML 1.1 reads a bare `off` as false: the config means the mode "off".
    p = write(tmp_path, "cache: {mode: off}\n")
    assert load_config(p).cache.mode == "off"
    p = write(tmp_path, "cache:\n  mode: off\n  path: c.sqlite3\n")
    assert load_config(p).cache.mode == "off"
    with pytest.raises(ConfigError, match="mode"):
        load_config(write(tmp_path, "cache: {mode: on}\n"))  # `on` is true: still refused
