"""Parent side of the environment API: the gate every proxied call goes through.

The real environment object never leaves the parent. The child sends
``(method, args, kwargs)``; the gate checks the method against the allowlist,
binds the arguments to the method's signature, checks each against its type
annotation (the annotations are the schema), charges the action budget, calls
the real method and turns the result into plain JSON data. Everything the
child sent is untrusted: only JSON values arrive, and only JSON values leave.
"""

from __future__ import annotations

import collections.abc as cabc
import dataclasses
import enum
import inspect
import json
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

MAX_DEPTH = 32
#: Longest JSON text of one argument or result a recorded call keeps.
RECORD_VALUE_CHARS = 4_096
#: JSON text all recorded calls of one run keep together; later values are elided.
RECORD_TOTAL_CHARS = 1 << 18
#: Longest error message a recorded call keeps.
RECORD_ERROR_CHARS = 500
#: Longest rendering of one call in feedback.
RENDER_CHARS = 300


@dataclass(frozen=True)
class Elided:
    """Stands in for a recorded argument or result too large to keep.

    The code may pass up to half a message (512 KB) per call and make a few
    hundred calls; keeping all of it would let one run hold ~100 MB in its
    result. The real value still reached the API (or the code); only the
    record is shortened.
    """

    type_name: str
    chars: int

    def __repr__(self) -> str:
        return f"<{self.type_name} of {self.chars:,} chars, not kept>"


@dataclass(frozen=True)
class ApiCall:
    """One call the code made: what it asked for and what it got back.

    Large arguments and results are recorded as :class:`Elided` markers.
    """

    method: str
    args: tuple[Any, ...]
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    result: Any = None
    error: str | None = None

    def render(self, api_name: str = "api", max_chars: int = RENDER_CHARS) -> str:
        """``api.move('north') -> 'ok'`` style, for feedback to a model; at most ``max_chars``."""
        parts = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs.items()]
        head = f"{api_name}.{self.method}({', '.join(parts)})"
        text = f"{head} -> error: {self.error}" if self.error else f"{head} -> {self.result!r}"
        return shorten(text, max_chars)


def shorten(text: str, max_chars: int) -> str:
    """``text`` cut to ``max_chars`` with a marker saying how much was cut."""
    if len(text) <= max_chars:
        return text
    keep = max(0, max_chars - 32)  # room for the marker
    return text[:keep] + f" ...[{len(text) - keep:,} more chars]"


def conforms(value: Any, hint: Any) -> bool:
    """Whether a JSON value satisfies an annotation (unknown annotations: no)."""
    if hint in (Any, object, inspect.Parameter.empty):
        return True
    if hint is None or hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return any(conforms(value, a) for a in args)
    if origin is typing.Literal:
        return any(value == a and type(value) is type(a) for a in args)
    if hint in (list, tuple) or origin in (list, cabc.Sequence, cabc.Iterable):
        item = args[0] if args else Any
        return isinstance(value, list) and all(conforms(v, item) for v in value)
    if origin is tuple:
        if not isinstance(value, list):
            return False
        if len(args) == 2 and args[1] is Ellipsis:
            return all(conforms(v, args[0]) for v in value)
        return len(value) == len(args) and all(
            conforms(v, a) for v, a in zip(value, args, strict=True)
        )
    if hint is dict or origin in (dict, cabc.Mapping):
        key, item = args if args else (Any, Any)
        return isinstance(value, dict) and all(
            conforms(k, key) and conforms(v, item) for k, v in value.items()
        )
    return False


def to_json(value: Any, depth: int = 0) -> Any:
    """Plain JSON data for a method's result; other objects become their ``str``."""
    if depth > MAX_DEPTH:
        return "..."
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, enum.Enum):
        return to_json(value.value, depth + 1)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: to_json(getattr(value, f.name), depth + 1) for f in dataclasses.fields(value)
        }
    if isinstance(value, Mapping):
        return {str(k): to_json(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [to_json(v, depth + 1) for v in value]
    return str(value)


def _signature(method: Callable[..., Any]) -> tuple[inspect.Signature, dict[str, Any]]:
    signature = inspect.signature(method)
    try:
        hints = typing.get_type_hints(method)
    except Exception:  # unresolvable annotations: fall back to accepting JSON values
        hints = {}
    resolved = [
        p.replace(annotation=hints.get(p.name, p.annotation)) for p in signature.parameters.values()
    ]
    returns = hints.get("return", signature.return_annotation)
    return signature.replace(parameters=resolved, return_annotation=returns), hints


class ApiGate:
    """Checks and forwards the calls of one run; records every call."""

    def __init__(
        self,
        api: object,
        methods: Iterable[str] | None,
        max_calls: int,
        *,
        max_result_bytes: int = 1 << 19,
        state: Callable[[], Mapping[str, Any]] | None = None,
    ) -> None:
        names = list(methods) if methods is not None else _public_methods(api)
        self.state = state
        """Reads the API's state attributes (``agent.holding``): sent with every
        reply, so the code reads them as plain attributes of its proxy."""
        self.api = api
        self.max_calls = max_calls
        self.max_result_bytes = max_result_bytes
        self.calls: list[ApiCall] = []
        self.recorded_chars = 0
        self.charged = 0
        self.attempts = 0
        self._methods: dict[str, tuple[Callable[..., Any], inspect.Signature, dict[str, Any]]]
        self._methods = {}
        for name in names:
            if name.startswith("_"):
                raise ValueError(f"API method {name!r}: private methods cannot be exposed")
            method = getattr(api, name, None)
            if not callable(method):
                raise ValueError(f"API has no callable method {name!r}")
            self._methods[name] = (method, *_signature(method))

    def describe(self) -> dict[str, str]:
        """Method name to signature text, for the child's proxy."""
        return {name: str(sig) for name, (_, sig, _) in self._methods.items()}

    def _keep(self, value: Any) -> Any:
        """``value`` if the run's record has room for it, else an :class:`Elided` marker."""
        try:
            chars = len(json.dumps(value))
        except (TypeError, ValueError):
            chars = RECORD_VALUE_CHARS + 1
        if chars > RECORD_VALUE_CHARS or self.recorded_chars + chars > RECORD_TOTAL_CHARS:
            return Elided(type(value).__name__, chars)
        self.recorded_chars += chars
        return value

    def _record(
        self,
        method: str,
        args: list[Any],
        kwargs: dict[str, Any],
        *,
        result: Any = None,
        error: str | None = None,
    ) -> None:
        self.calls.append(
            ApiCall(
                method[:100],
                tuple(self._keep(a) for a in args),
                {str(k)[:100]: self._keep(v) for k, v in kwargs.items()},
                result=self._keep(result),
                error=None if error is None else shorten(error, RECORD_ERROR_CHARS),
            )
        )

    def _reject(
        self, method: str, args: list[Any], kwargs: dict[str, Any], kind: str, message: str
    ) -> dict[str, Any]:
        self._record(method, args, kwargs, error=f"{kind}: {message}")
        return {"ok": False, "kind": kind, "message": message}

    def state_now(self) -> dict[str, Any] | None:
        """The state attributes now, as JSON values (None without a state reader)."""
        if self.state is None:
            return None
        try:
            found = to_json(dict(self.state()))
        except Exception:  # a broken reader must not break the run: no update
            return None
        if not isinstance(found, dict) or len(json.dumps(found)) > self.max_result_bytes // 8:
            return None
        return found

    def handle(self, method: str, args: list[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
        """Check one call and perform it; the reply the child gets (with the state)."""
        reply = self._handle(method, args, kwargs)
        state = self.state_now()
        if state is not None:
            reply["state"] = state
        return reply

    def _handle(self, method: str, args: list[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
        self.attempts += 1
        entry = self._methods.get(method)
        if entry is None:
            known = ", ".join(sorted(self._methods)) or "none"
            return self._reject(
                method,
                args,
                kwargs,
                "ApiCallRejected",
                f"api.{method[:100]} is not an allowed method (allowed: {known})",
            )
        func, signature, hints = entry
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as exc:
            return self._reject(method, args, kwargs, "ApiCallRejected", f"api.{method}: {exc}")
        for name, value in bound.arguments.items():
            param = signature.parameters[name]
            hint = hints.get(name, Any)
            values: Iterable[Any] = [value]
            if param.kind is param.VAR_POSITIONAL:
                values = value
            elif param.kind is param.VAR_KEYWORD:
                values = value.values()
            for item in values:
                if not conforms(item, hint):
                    expected = getattr(hint, "__name__", None) or str(hint)
                    return self._reject(
                        method,
                        args,
                        kwargs,
                        "ApiCallRejected",
                        f"api.{method}: argument {name!r} must be {expected}, "
                        f"got {type(item).__name__} {item!r:.80}",
                    )
        if self.charged >= self.max_calls:
            return self._reject(
                method,
                args,
                kwargs,
                "ActionBudgetExceeded",
                f"the action budget of {self.max_calls} API calls is spent",
            )
        self.charged += 1
        try:
            result = to_json(func(*bound.args, **bound.kwargs))
        except Exception as exc:
            message = shorten(f"api.{method} raised {type(exc).__name__}: {exc}", 2_000)
            self._record(method, args, kwargs, error=message)
            return {"ok": False, "kind": "ApiError", "message": message}
        if len(json.dumps(result)) > self.max_result_bytes:
            return self._reject(
                method, args, kwargs, "ApiError", f"api.{method} returned a value too large to send"
            )
        self._record(method, args, kwargs, result=result)
        return {"ok": True, "result": result}


def flooding(gate: ApiGate) -> bool:
    """Whether the code keeps calling long after its budget is spent."""
    return gate.attempts > 2 * gate.max_calls + 10


def _public_methods(api: object) -> list[str]:
    return sorted(
        name for name in dir(api) if not name.startswith("_") and callable(getattr(api, name))
    )
