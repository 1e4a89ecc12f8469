"""The model layer: the ``LLM`` protocol, backends and composable wrappers.

It imports nothing from the rest of LoreKit. Typical stack for one role:
``MeteredLLM(CachedLLM(OpenAICompatLLM(..., limiter=Limiter(8))), role)``.
"""

from lorekit.llm.accounting import (
    MeteredLLM,
    Price,
    PriceTable,
    RoleUsage,
    UsageLedger,
    tokens_label,
)
from lorekit.llm.ask import Answer, Attempt, NoAnswer, ParseError, ask
from lorekit.llm.base import (
    DEFAULT_PARAMS,
    LLM,
    Completion,
    Message,
    MessageLike,
    RequestParams,
    Usage,
    as_messages,
)
from lorekit.llm.cache import CachedLLM, CacheMode, SQLiteCache, request_key
from lorekit.llm.calls import CallRecord, CallSink
from lorekit.llm.errors import (
    CacheMiss,
    LLMAnswerError,
    LLMAuthError,
    LLMConnectionError,
    LLMError,
    LLMLengthError,
    LLMProtocolError,
    LLMRateLimitError,
    LLMRefusalError,
    LLMRequestError,
    LLMResponseError,
    LLMServerError,
    LLMTimeoutError,
    LLMToolCallError,
    ScriptExhausted,
)
from lorekit.llm.limits import LimitedLLM, Limiter
from lorekit.llm.roles import DEFAULT_ROLE, Roles
from lorekit.llm.scripted import Latency, ScriptedCall, ScriptedLLM


def __getattr__(name: str) -> object:
    # The openai SDK is slow to import; load the HTTP backend only when asked.
    if name == "OpenAICompatLLM":
        from lorekit.llm.openai_compat import OpenAICompatLLM

        return OpenAICompatLLM
    if name in ("RetryPolicy", "call_with_retries"):
        from lorekit.llm import retry

        return getattr(retry, name)
    raise AttributeError(f"module 'lorekit.llm' has no attribute {name!r}")


__all__ = [
    "DEFAULT_PARAMS",
    "DEFAULT_ROLE",
    "LLM",
    "Answer",
    "Attempt",
    "CacheMiss",
    "CacheMode",
    "CachedLLM",
    "CallRecord",
    "CallSink",
    "Completion",
    "LLMAnswerError",
    "LLMAuthError",
    "LLMConnectionError",
    "LLMError",
    "LLMLengthError",
    "LLMProtocolError",
    "LLMRateLimitError",
    "LLMRefusalError",
    "LLMRequestError",
    "LLMResponseError",
    "LLMServerError",
    "LLMTimeoutError",
    "LLMToolCallError",
    "Latency",
    "LimitedLLM",
    "Limiter",
    "Message",
    "MessageLike",
    "MeteredLLM",
    "NoAnswer",
    "OpenAICompatLLM",
    "ParseError",
    "Price",
    "PriceTable",
    "RequestParams",
    "RetryPolicy",
    "RoleUsage",
    "Roles",
    "SQLiteCache",
    "ScriptExhausted",
    "ScriptedCall",
    "ScriptedLLM",
    "Usage",
    "UsageLedger",
    "as_messages",
    "ask",
    "call_with_retries",
    "request_key",
    "tokens_label",
]
