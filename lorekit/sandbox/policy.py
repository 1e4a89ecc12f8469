"""What sandboxed code may do and how much of each resource it may use.

``Limits`` bounds a single run (time, memory, output, API calls); ``Policy``
says which modules may be imported and which attribute names are off limits.
Both travel to the child process as plain JSON, so the child holds only
mechanism and the rules live in one place, on the trusted side.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

#: Pure, computation-only modules a model commonly reaches for. Each is
#: imported by the worker *before* untrusted code runs, and the code only ever
#: sees a filtered view of it (public names, no module-valued attributes).
DEFAULT_IMPORTS: tuple[str, ...] = (
    "bisect",
    "collections",
    "copy",
    "dataclasses",
    "datetime",
    "decimal",
    "enum",
    "fractions",
    "functools",
    "heapq",
    "itertools",
    "json",
    "math",
    "operator",
    "random",
    "re",
    "statistics",
    "string",
    "textwrap",
    "typing",
)

#: Public names hidden from a module's view because they reach attributes or
#: evaluate strings behind the syntax checker's back, or rewrite other
#: modules (``enum.global_enum`` updates the globals of the module an enum
#: claims to live in). Functions that take attribute names from the caller
#: and have safe uses (``functools.update_wrapper``, ``wraps``,
#: ``dataclasses.make_dataclass``, ``typing.get_origin``), and
#: ``copy.deepcopy`` (whose ``memo`` argument would collect internals), are
#: not hidden but replaced by checked versions inside the worker.
DEFAULT_HIDDEN_NAMES: Mapping[str, tuple[str, ...]] = {
    "operator": ("attrgetter", "methodcaller"),
    "string": ("Formatter",),
    "functools": ("singledispatchmethod",),
    "enum": ("global_enum", "global_enum_repr", "global_flag_repr", "global_str"),
    # copyreg's table, shared by every copy and pickle in the worker: a reducer
    # registered there is handed the originals that a deep copy walks through
    "copy": ("dispatch_table",),
    # EXCLUDED_ATTRIBUTES: a list typing's Protocol checks read, shared with the worker
    "typing": ("get_type_hints", "ForwardRef", "EXCLUDED_ATTRIBUTES"),
}

#: Attribute names that lead from an ordinary object to frames, code or
#: globals. Every name that starts with ``_`` is rejected as well.
DENIED_ATTRIBUTES: frozenset[str] = frozenset(
    {
        "ag_await",
        "ag_code",
        "ag_frame",
        "cr_await",
        "cr_code",
        "cr_frame",
        "f_back",
        "f_builtins",
        "f_code",
        "f_globals",
        "f_locals",
        "format",
        "format_map",
        "gi_code",
        "gi_frame",
        "gi_yieldfrom",
        "mro",
        "tb_frame",
        "tb_next",
    }
)


@dataclass(frozen=True)
class Limits:
    """Resource bounds of one run.

    ``memory_mb`` is address space the code may add on top of the worker's
    own footprint (the interpreter and the preloaded modules), so the figure
    means the same on every machine. ``wall_s`` is enforced twice: a soft
    timer inside the child that raises at the code (so printed output and
    calls so far are kept) and a hard kill of the whole process group by the
    parent ``grace_s`` later, for code that swallows the soft signal.
    """

    wall_s: float = 5.0
    cpu_s: float = 5.0
    memory_mb: int = 256
    max_output_chars: int = 20_000
    max_api_calls: int = 100
    max_code_chars: int = 100_000
    max_message_bytes: int = 1 << 20
    max_file_bytes: int = 1 << 20
    max_files_written: int = 16
    max_open_files: int = 32
    recursion_limit: int = 1000
    grace_s: float = 0.5

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            if value <= 0:
                raise ValueError(f"Limits.{name} must be positive, got {value!r}")

    def to_wire(self) -> dict[str, Any]:
        """The fields the child needs, as JSON-ready values."""
        return asdict(self)


@dataclass(frozen=True)
class Policy:
    """Which modules may be imported and what the worker preloads.

    ``imports`` must be a subset of ``preload_modules``: workers are started
    before a job is known, and nothing new may be loaded from disk once
    untrusted code runs. ``network_namespace`` asks the worker to move into an
    empty network namespace when it can (root on Linux); it is an extra layer,
    never relied on: sockets are blocked by the audit hook regardless.
    """

    imports: tuple[str, ...] = DEFAULT_IMPORTS
    preload_modules: tuple[str, ...] = DEFAULT_IMPORTS
    hidden_names: Mapping[str, tuple[str, ...]] = field(
        default_factory=lambda: dict(DEFAULT_HIDDEN_NAMES)
    )
    denied_attributes: frozenset[str] = DENIED_ATTRIBUTES
    network_namespace: bool = True

    def __post_init__(self) -> None:
        missing = sorted(set(self.imports) - set(self.preload_modules))
        if missing:
            raise ValueError(
                f"Policy.imports {missing} are not in preload_modules; "
                "a worker cannot load modules once untrusted code runs"
            )

    def narrowed(self, imports: tuple[str, ...]) -> Policy:
        """The same policy allowing only ``imports`` (a subset of this one's)."""
        extra = sorted(set(imports) - set(self.imports))
        if extra:
            raise ValueError(f"cannot widen the import allowlist with {extra}")
        return Policy(
            imports=imports,
            preload_modules=self.preload_modules,
            hidden_names=self.hidden_names,
            denied_attributes=self.denied_attributes,
            network_namespace=self.network_namespace,
        )

    def to_wire(self) -> dict[str, Any]:
        """The rules the child enforces, as JSON-ready values."""
        return {
            "imports": list(self.imports),
            "hidden_names": {k: list(v) for k, v in self.hidden_names.items()},
            "denied_attributes": sorted(self.denied_attributes),
        }


DEFAULT_LIMITS = Limits()
DEFAULT_POLICY = Policy()
