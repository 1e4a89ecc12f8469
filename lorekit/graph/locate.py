"""Where a spec error is: ``file:line:column: node 'x': field 'y'``.

Validation reports a path inside the document (``nodes.plan.deps``); the
YAML node tree (``yaml.compose``) gives the line that path starts on, so an
author can jump straight to it.
"""

from __future__ import annotations

from typing import Any

import yaml


class Locator:
    """Turns a path inside the document into ``file:line:column: node 'x': field 'y'``."""

    def __init__(self, source: str, root: yaml.Node | None) -> None:
        self.source = source
        self.root = root

    def position(self, path: tuple[Any, ...]) -> tuple[int, int] | None:
        """1-based (line, column) of the deepest part of ``path`` found in the file."""
        node, pos = self.root, None
        for part in path:
            if isinstance(node, yaml.MappingNode):
                hit = [(k, v) for k, v in node.value if getattr(k, "value", None) == str(part)]
                if not hit:
                    break
                mark = hit[0][0].start_mark
                pos = (mark.line + 1, mark.column + 1)
                node = hit[0][1]
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
                if part >= len(node.value):
                    break
                node = node.value[part]
                pos = (node.start_mark.line + 1, node.start_mark.column + 1)
            else:
                break
        return pos

    def line(self, path: tuple[Any, ...]) -> int | None:
        pos = self.position(path)
        return pos[0] if pos else None

    def where(self, path: tuple[Any, ...], message: str) -> str:
        pos = self.position(path)
        head = f"{self.source}:{pos[0]}:{pos[1]}" if pos else self.source
        if len(path) >= 2 and path[0] == "nodes":
            what = f"node {path[1]!r}"
            rest = [str(p) for p in path[2:] if not isinstance(p, int)][:1]
            if rest:
                what += f": field {_alias(rest[0])!r}"
        elif len(path) >= 2 and path[0] == "branches":
            what = f"branches[{path[1]}]"
            if len(path) > 2:
                what += f": field {_alias(str(path[2]))!r}"
        else:
            what = f"field {'.'.join(map(str, path))!r}" if path else "top level"
        return f"{head}: {what}: {message}"


def _alias(name: str) -> str:
    return {"json_schema": "schema", "otherwise": "else"}.get(name, name)
