"""Run model-written code without trusting it.

- :func:`run_code` executes untrusted Python in a separate, limited worker
  process; environment calls are proxied back and checked here.
- :func:`compile_predicate` turns a small, pure, syntax-checked function
  (a reward predicate) into a fast in-process callable.

See ``docs/sandbox.md`` for the threat model and the exact rules.
"""

from lorekit.sandbox.errors import (
    ActionBudgetExceeded,
    ApiCallRejected,
    AssertionFailed,
    CodeError,
    CpuLimitExceeded,
    ForbiddenImport,
    ForbiddenOperation,
    ForbiddenSyntax,
    LimitExceeded,
    MemoryLimitExceeded,
    NoOSSandbox,
    OutputLimitExceeded,
    PolicyViolation,
    PredicateError,
    PredicateRejected,
    ProtocolViolation,
    SandboxCrashed,
    SandboxError,
    SandboxUnavailable,
    TimeLimitExceeded,
    WorkerKilled,
)
from lorekit.sandbox.isolation import UnsafeSandboxWarning
from lorekit.sandbox.policy import DEFAULT_IMPORTS, Limits, Policy
from lorekit.sandbox.pool import WorkerPool, check_os_layer, shared_pool
from lorekit.sandbox.predicate import Predicate, PredicateLimits, compile_predicate
from lorekit.sandbox.proxy import ApiCall
from lorekit.sandbox.result import SandboxResult
from lorekit.sandbox.runner import run_code, run_code_async
from lorekit.sandbox.session import SandboxSession

__all__ = [
    "DEFAULT_IMPORTS",
    "ActionBudgetExceeded",
    "ApiCall",
    "ApiCallRejected",
    "AssertionFailed",
    "CodeError",
    "CpuLimitExceeded",
    "ForbiddenImport",
    "ForbiddenOperation",
    "ForbiddenSyntax",
    "LimitExceeded",
    "Limits",
    "MemoryLimitExceeded",
    "NoOSSandbox",
    "OutputLimitExceeded",
    "Policy",
    "PolicyViolation",
    "Predicate",
    "PredicateError",
    "PredicateLimits",
    "PredicateRejected",
    "ProtocolViolation",
    "SandboxCrashed",
    "SandboxError",
    "SandboxResult",
    "SandboxSession",
    "SandboxUnavailable",
    "TimeLimitExceeded",
    "UnsafeSandboxWarning",
    "WorkerKilled",
    "WorkerPool",
    "check_os_layer",
    "compile_predicate",
    "run_code",
    "run_code_async",
    "shared_pool",
]
