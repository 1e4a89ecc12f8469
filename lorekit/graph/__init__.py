"""Agent graphs (AgentKit): an agent's thought process as a DAG of prompt nodes.

Build a :class:`Graph` of :class:`Node` objects in code, or load one from a
YAML spec (:func:`lorekit.graph.spec.load_spec`), then ``await
graph.evaluate(db)`` once per step. Nodes whose dependencies are done query
their models concurrently; results, database writes and traces equal those of
a sequential pass. See ``docs/agentkit.md``.
"""

from lorekit.graph.compose import ComposeInput, DepView, default_compose
from lorekit.graph.errors import (
    AccessError,
    AfterQueryError,
    CycleError,
    GraphError,
    MissingValueError,
    NodeFailedError,
    RaceError,
)
from lorekit.graph.graph import Graph, NodeContext
from lorekit.graph.node import DepMode, Node, NodeFailure, OutputKind, Write
from lorekit.graph.parsers import choice_parser, json_parser, regex_parser, text_parser
from lorekit.graph.trace import AttemptTrace, NodeTrace, PassReport

__all__ = [
    "AccessError",
    "AfterQueryError",
    "AttemptTrace",
    "ComposeInput",
    "CycleError",
    "DepMode",
    "DepView",
    "Graph",
    "GraphError",
    "MissingValueError",
    "Node",
    "NodeContext",
    "NodeFailedError",
    "NodeFailure",
    "NodeTrace",
    "OutputKind",
    "PassReport",
    "RaceError",
    "Write",
    "choice_parser",
    "default_compose",
    "json_parser",
    "regex_parser",
    "text_parser",
]
