"""Where a spec error is: ``file:line: node 'x': field 'y'``.

Validation reports a path inside the document (``nodes.plan.deps``); the
YAML node tree (``yaml.compose``) gives the line that path starts on, so an
author can jump straight to it.
"""

from __future__ import annotations

from typing import Any

import yaml


class Locator:
    """Turns a path inside the document into ``file:line: node 'x': field 'y'``."""

    def __init__(self, source: str, root: yaml.Node | None) -> None:
        self.source = source
        self.root = root

    def line(self, path: tuple[Any, ...]) -> int | None:
        node, line = self.root, None
        for part in path:
            if isinstance(node, yaml.MappingNode):
                hit = [(k, v) for k, v in node.value if getattr(k, "value", None) == str(part)]
                if not hit:
                    break
                line = hit[0][0].start_mark.line + 1
                node = hit[0][1]
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
                if part >= len(node.value):
                    break
                node = node.value[part]
                line = node.start_mark.line + 1
            else:
                break
        return line

    def where(self, path: tuple[Any, ...], message: str) -> str:
        line = self.line(path)
        head = f"{self.source}:{line}" if line else self.source
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
