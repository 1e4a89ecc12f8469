"""Run configuration: YAML files validated by pydantic, and the model factory.

A run config maps roles to model settings (with one ``default``), chooses a
cache mode and a run store. Errors name the file, the field and what was
expected, because a typo in a config should cost seconds, not a failed run.
CLI flags override the file through :func:`apply_overrides`.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from lorekit import yamlio
from lorekit.llm.accounting import Price
from lorekit.llm.base import LLM
from lorekit.llm.cache import CachedLLM, CacheMode, SQLiteCache
from lorekit.llm.limits import LimitedLLM, Limiter, SlotLimiter
from lorekit.llm.openai_wire import DEFAULT_BASE_URL
from lorekit.llm.roles import DEFAULT_ROLE, Roles
from lorekit.llm.scripted import ScriptedLLM


class ConfigError(ValueError):
    """A config that cannot be used; the message says where and why."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PriceSettings(_Strict):
    """USD per million tokens."""

    prompt: float = Field(0.0, ge=0)
    completion: float = Field(0.0, ge=0)


class ModelSettings(_Strict):
    """How to reach one model.

    ``provider: openai`` covers every OpenAI-compatible server (OpenAI, vLLM,
    Ollama, llama.cpp, DeepSeek): set ``base_url`` for anything but OpenAI.
    ``provider: scripted`` answers from ``answers`` (for offline demos).

    ``timeout_s`` bounds each attempt of a request as a whole;
    ``max_retry_after_s`` is the longest ``Retry-After`` wait honoured (a
    server asking for more makes the call fail at once). ``max_in_flight`` and
    ``rpm`` limit a server, shared by every role on it (``limit_scope:
    server``), or one model on it (``limit_scope: model``).
    """

    provider: Literal["openai", "scripted"] = "openai"
    model: str = Field(min_length=1)
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    timeout_s: float = Field(60.0, gt=0, allow_inf_nan=False)
    max_attempts: int = Field(4, ge=1, le=20)
    max_retry_after_s: float = Field(60.0, ge=0, allow_inf_nan=False)
    max_in_flight: int | None = Field(8, ge=1)
    rpm: float | None = Field(None, gt=0)
    limit_scope: Literal["server", "model"] = "server"
    price: PriceSettings | None = None
    answers: list[str] | None = None
    latency_s: float = Field(0.0, ge=0)

    @field_validator("base_url")
    @classmethod
    def _url(cls, v: str | None) -> str | None:
        if v is not None and not v.startswith(("http://", "https://")):
            raise ValueError("expected an http:// or https:// URL")
        return v


def _file_path(v: str) -> str:
    """A path the filesystem can take: not empty, no NUL byte (which no OS path holds;
    it failed deep inside the first file call instead of naming the setting)."""
    if not v.strip():
        raise ValueError("expected a file path, got an empty one")
    if "\x00" in v:
        raise ValueError("a file path cannot hold a NUL byte (\\x00)")
    return v


class CacheSettings(_Strict):
    mode: Literal["read-write", "replay", "off"] = "off"
    path: str = ".lorekit/cache.sqlite3"

    @field_validator("path")
    @classmethod
    def _path(cls, v: str) -> str:
        return _file_path(v)

    @field_validator("mode", mode="before")
    @classmethod
    def _off(cls, v: object) -> object:
        """``mode: off`` unquoted: YAML 1.1 reads ``off`` as false; take it as meant."""
        return "off" if v is False else v


class RunConfig(_Strict):
    """The model side of a run. Later issues add env and agent sections."""

    roles: dict[str, ModelSettings] = Field(
        default_factory=lambda: {DEFAULT_ROLE: ModelSettings(provider="scripted", model="echo")}
    )
    default_role: str = DEFAULT_ROLE
    cache: CacheSettings = CacheSettings()
    store: str = "runs/lorekit.sqlite3"

    @field_validator("store")
    @classmethod
    def _store(cls, v: str) -> str:
        return _file_path(v)

    @field_validator("roles")
    @classmethod
    def _roles(cls, v: dict[str, ModelSettings]) -> dict[str, ModelSettings]:
        if not v:
            raise ValueError("expected at least one role")
        return v

    def prices(self) -> dict[str, Price]:
        return {
            s.model: Price(s.price.prompt, s.price.completion)
            for s in self.roles.values()
            if s.price is not None
        }


def unknown_roles(config: RunConfig, allowed: Iterable[str] | None, owner: str) -> dict[str, str]:
    """Configured roles that ``owner`` never asks for, each with what is wrong.

    ``allowed`` are the roles the agent (or graph) uses; None means it does not
    say, and anything goes. The default role is always valid: it serves every
    role that is not set. The caller decides what a stray role costs: on the
    command line it is a typo (an error), in a shared config file written for
    several agents it is a role this agent simply does not use (a warning).
    """
    if allowed is None:
        return {}
    allowed = set(allowed)
    known = sorted(allowed - {config.default_role})
    out: dict[str, str] = {}
    for name in config.roles:
        if name == config.default_role or name in known:
            continue
        if not known and config.default_role in allowed:
            out[name] = (
                f"unknown role {name!r} for {owner}; it uses only the "
                f"{config.default_role!r} role (set it with --model)"
            )
        elif not known:
            out[name] = f"{owner} uses no model, so it has no role {name!r}"
        else:
            close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
            out[name] = (
                f"unknown role {name!r} for {owner}; its roles are: "
                f"{', '.join(known)} (or {config.default_role!r} for all)"
                + (f"; did you mean {close[0]!r}?" if close else "")
            )
    return out


def _format_validation(source: str, err: ValidationError) -> str:
    lines = []
    for e in err.errors():
        field = ".".join(str(p) for p in e["loc"]) or "(top level)"
        got = e.get("input")
        shown = f" (got {got!r})" if got is not None and not isinstance(got, dict) else ""
        lines.append(f"{source}: {field}: {e['msg']}{shown}")
    return "\n".join(lines)


def parse_config(data: Mapping[str, Any], source: str = "<config>") -> RunConfig:
    """Validate a mapping as a :class:`RunConfig`, with located errors."""
    try:
        config = RunConfig.model_validate(dict(data))
    except ValidationError as err:
        raise ConfigError(_format_validation(source, err)) from None
    try:
        _shared_limiters(config, build=False)
    except ConfigError as err:
        raise ConfigError(f"{source}: {err}") from None
    return config


def load_config(path: str | Path) -> RunConfig:
    """Read and validate a YAML run config."""
    p = Path(path)
    try:
        text = p.read_text()
    except FileNotFoundError:
        raise ConfigError(f"{p}: no such config file") from None
    except OSError as err:
        raise ConfigError(f"{p}: cannot read the config: {err.strerror or err}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{p}: not a text (UTF-8) file") from None
    try:
        data = yamlio.safe_load(text, source=str(p))
    except yaml.YAMLError as err:
        raise ConfigError(yamlio.describe_error(err, str(p))) from None
    if data is None:
        raise ConfigError(
            f"{p}: the config file is empty; give at least one setting (docs/models.md), "
            "or leave out --config"
        )
    if not isinstance(data, dict):
        raise ConfigError(f"{p}: expected a mapping at the top level, got {type(data).__name__}")
    return parse_config(data, str(p))


SCRIPTED_PREFIX = "scripted:"
"""``--model scripted:...``: a scripted model, chosen on the command line (no server)."""


def scripted_settings(value: str) -> dict[str, Any] | None:
    """The settings ``scripted:...`` names, or None when ``value`` names a real model.

    ``scripted:echo`` answers each request with its last message; ``scripted:FILE``
    answers with the answers in FILE, in order, repeating the last (a YAML list of
    strings, or a text file with one answer per line); ``scripted:simulate`` stands
    for the scripted models the agent's method registers for the env (the command
    that plays decides them, since it knows the agent and the env)."""
    if not value.startswith(SCRIPTED_PREFIX):
        return None
    what = value[len(SCRIPTED_PREFIX) :].strip()
    if what in ("echo", "simulate"):
        return {"provider": "scripted", "model": what}
    if not what:
        raise ConfigError(
            "--model scripted:KIND: KIND is echo, simulate, or a file of answers; got nothing"
        )
    path = Path(what).expanduser()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(
            f"--model scripted:{what}: cannot read the answers file ({exc.strerror or exc}); "
            "scripted models are echo, simulate, or a file of answers"
        ) from None
    if path.suffix in (".yaml", ".yml"):
        try:
            loaded = yamlio.safe_load(text, source=str(path))
        except (yaml.YAMLError, ValueError) as exc:
            raise ConfigError(f"{path}: {exc}") from None
        if (
            not isinstance(loaded, list)
            or not loaded
            or not all(isinstance(a, str) for a in loaded)
        ):
            raise ConfigError(f"{path}: expected a non-empty YAML list of answers (strings)")
        answers = list(loaded)
    else:
        answers = [line for line in text.splitlines() if line.strip()]
        if not answers:
            raise ConfigError(f"{path}: no answers (one answer per line)")
    return {"provider": "scripted", "model": f"scripted:{path.name}", "answers": answers}


def apply_overrides(
    config: RunConfig,
    *,
    model: str | None = None,
    base_url: str | None = None,
    roles: Iterable[str] = (),
    cache: str | None = None,
    store: str | None = None,
    request_timeout: float | None = None,
) -> RunConfig:
    """Apply CLI flags: ``--model`` and ``--base-url`` set the default role,
    ``--role planner=gpt-4o`` sets one role's model, ``--cache`` the mode,
    ``--request-timeout`` every role's ``timeout_s``."""
    data = config.model_dump()
    role_map: dict[str, dict[str, Any]] = data["roles"]
    default = role_map.setdefault(config.default_role, {"model": model or "echo"})
    if model is not None:
        scripted = scripted_settings(model)
        if scripted is not None:
            default.update(scripted, base_url=None)
        else:
            default["model"] = model
            if default.get("provider") == "scripted" and model != "echo":
                default["provider"] = "openai"
                default["answers"] = None
    if base_url is not None:
        default["base_url"] = base_url
        default["provider"] = "openai"
    for item in roles:
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            raise ConfigError(f"--role: expected ROLE=MODEL, got {item!r}")
        entry = dict(role_map.get(name) or {k: v for k, v in default.items()})
        scripted = scripted_settings(value)
        if scripted is not None:
            entry.update(scripted, base_url=None)
        else:
            entry["model"] = value
            if entry.get("provider") == "scripted" and value != "echo":  # as for --model
                entry["provider"] = "openai"
                entry["answers"] = None
        role_map[name] = entry
    if request_timeout is not None:
        for entry in role_map.values():
            entry["timeout_s"] = request_timeout
    if cache is not None:
        data["cache"]["mode"] = cache
    if store is not None:
        data["store"] = store
    return parse_config(data, "command line")


def build_model(settings: ModelSettings, limiter: SlotLimiter | None = None) -> LLM:
    """One backend from its settings (no cache, no metering)."""
    if settings.provider == "scripted":
        if settings.model == "simulate" and not settings.answers:
            raise ConfigError(
                "model scripted:simulate stands for a method's scripted test models, which "
                "only `lorekit run` plays (and `reproduce run --simulate`); here use "
                "scripted:echo or scripted:FILE"
            )
        answers = settings.answers
        latency = settings.latency_s or None
        scripted = (
            ScriptedLLM(answers, default=answers[-1], model=settings.model, latency=latency)
            if answers
            else ScriptedLLM(
                fn=lambda msgs: msgs[-1].content, model=settings.model, latency=latency
            )
        )
        model: LLM = scripted
        return LimitedLLM(model, limiter) if limiter is not None else model
    from lorekit.llm.openai_compat import OpenAICompatLLM
    from lorekit.llm.retry import RetryPolicy

    return OpenAICompatLLM(
        settings.model,
        base_url=settings.base_url,
        api_key=os.environ.get(settings.api_key_env),
        timeout_s=settings.timeout_s,
        retry=RetryPolicy(
            max_attempts=settings.max_attempts, max_retry_after_s=settings.max_retry_after_s
        ),
        limiter=limiter,
    )


LimitKey = tuple[str, ...]


def limit_key(settings: ModelSettings) -> LimitKey:
    """Which limiter a role's requests count against.

    A server's capacity (GPU slots of a vLLM server, an account's rate limit
    at a gateway) is usually shared by all the models it serves, so by default
    every role on one server shares one limiter. ``limit_scope: model`` gives
    each model on the server its own (providers that limit per model).
    A scripted model is its own "server".
    """
    if settings.provider == "scripted":
        return ("scripted", settings.model)
    url = settings.base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
    server = url.rstrip("/")
    return (server, settings.model) if settings.limit_scope == "model" else (server,)


LimiterFactory = Callable[[LimitKey, ModelSettings], SlotLimiter]
"""Builds the one limiter of a :func:`limit_key` (a cluster-wide one, say) from its settings."""


def local_limiter(_key: LimitKey, settings: ModelSettings) -> SlotLimiter:
    """The limiter of one process: a :class:`~lorekit.llm.limits.Limiter`."""
    return Limiter(settings.max_in_flight, settings.rpm)


def _shared_limiters(
    config: RunConfig, *, build: bool = True, factory: LimiterFactory = local_limiter
) -> dict[str, SlotLimiter | None]:
    """One limiter per :func:`limit_key`, by role; roles that share one must
    agree on its limits, or the config is refused naming both."""
    first: dict[LimitKey, tuple[str, ModelSettings]] = {}
    limiters: dict[LimitKey, SlotLimiter | None] = {}
    out: dict[str, SlotLimiter | None] = {}
    for role, s in config.roles.items():
        key = limit_key(s)
        if key in first:
            other, o = first[key]
            if (o.max_in_flight, o.rpm) != (s.max_in_flight, s.rpm):
                scope = "model" if s.limit_scope == "model" else "server"
                raise ConfigError(
                    f"roles.{role}: max_in_flight={s.max_in_flight}, rpm={s.rpm} differ from "
                    f"roles.{other} (max_in_flight={o.max_in_flight}, rpm={o.rpm}), which "
                    f"shares its limits (one per {scope}: {key[0]}); make them equal"
                    + (" or set limit_scope: model on both" if scope == "server" else "")
                )
        else:
            first[key] = (role, s)
            wanted = build and (s.max_in_flight or s.rpm)
            limiters[key] = factory(key, s) if wanted else None
        out[role] = limiters[key]
    return out


def build_roles(config: RunConfig, *, limiter_factory: LimiterFactory = local_limiter) -> Roles:
    """All role models of a run. Roles on one server share one limiter (the
    limit is the server's, not the role's; see :func:`limit_key`) and all
    share one cache. ``limiter_factory`` builds those limiters: the default
    holds in this process; the Ray backend passes one that holds across a
    cluster (:mod:`lorekit.eval.ray_backend`)."""
    return roles_factory(config, limiter_factory=limiter_factory)()


def roles_factory(
    config: RunConfig, *, limiter_factory: LimiterFactory = local_limiter
) -> Callable[[], Roles]:
    """A builder of fresh role models, for runs whose episodes must share nothing
    but the server's limits and the cache: each call builds new model objects
    (new HTTP clients, scripted answers from their start), while the limiters
    and the cache are made once here, so a limit still holds across episodes
    played side by side. :func:`build_roles` is one call of it."""
    limiters = _shared_limiters(config, factory=limiter_factory)
    cache = SQLiteCache(config.cache.path) if config.cache.mode != "off" else None

    def build() -> Roles:
        built: dict[str, LLM] = {}
        for role, s in config.roles.items():
            llm = build_model(s, limiters[role])
            if cache is not None:
                mode: CacheMode = config.cache.mode
                llm = CachedLLM(llm, cache, mode)
            built[role] = llm
        return Roles(built, config.default_role)

    return build
