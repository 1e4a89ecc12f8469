"""The YAML graph spec's schema (pydantic models) and its error type.

Kept apart from :mod:`lorekit.graph.spec`, which turns a validated model into
nodes; these models only say which fields exist and what types they take.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from lorekit.graph.errors import GraphError


class SpecError(GraphError):
    """A graph spec that cannot be used; each line says file, node, field and why.

    ``errors`` holds every problem found (one line each); ``str()`` joins them.
    """

    def __init__(self, message: str, errors: list[str] | None = None) -> None:
        super().__init__(message)
        self.errors = errors if errors is not None else message.splitlines()


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


def _yes_no(value: Any) -> Any:
    """YAML 1.1 reads a bare yes/no as a boolean; a spec author meant the word."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return [_yes_no(v) for v in value]
    return value


class WriteSpec(_Strict):
    key: str
    value: str = "output"
    mode: Literal["set", "append", "extend", "merge"] = "set"


class NodeSpec(_Strict):
    prompt: str = Field(min_length=1)
    description: str = ""
    deps: list[str] = []
    role: str = Field("default", min_length=1)
    system: str | None = None
    output: Literal["text", "json", "choice", "regex"] = "text"
    json_schema: dict[str, Any] | None = Field(None, alias="schema")
    choices: list[str] = []
    pattern: str | None = None
    parser: str | None = None
    compose: str | None = None
    after_query: str | None = None
    writes: list[WriteSpec | str] = []
    context: list[str] = []
    shorthand: bool | list[str] = False
    hidden: list[str] = []
    max_retries: int | None = Field(None, ge=0, le=20)
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    max_tokens: int | None = Field(None, gt=0)
    hook_reads: list[str] = []
    hook_writes: list[str] = []
    max_dep_chars: int | None = Field(None, ge=100)
    dep_overflow: Literal["keep_end", "keep_start", "keep_both", "summarize"] = "keep_end"
    summary_role: str | None = Field(None, min_length=1)
    json_take: Literal["whole", "last"] = "whole"
    when: str | None = None

    _choices = field_validator("choices", mode="before")(_yes_no)


class BranchSpec(_Strict):
    gate: str
    when: str | list[str]
    run: list[str] = []
    otherwise: list[str] = Field([], alias="else")

    _when = field_validator("when", mode="before")(_yes_no)


class GraphSpecModel(_Strict):
    name: str | None = None
    description: str = ""
    system: str | None = None
    max_retries: int = Field(2, ge=0, le=20)
    database: dict[str, Any] = {}
    nodes: dict[str, NodeSpec] = Field(min_length=1)
    branches: list[BranchSpec] = []
