"""One strict YAML loader for every YAML file LoreKit reads.

PyYAML's ``safe_load`` keeps the *last* of two equal keys in a mapping and
drops the first without a word, so a spec with two nodes named ``plan``
silently loses one. :class:`StrictLoader` is a ``SafeLoader`` whose mappings
refuse duplicate keys, naming the file and the line of both definitions.
The error is a :class:`yaml.YAMLError` (a ``ConstructorError``), so callers'
existing ``except yaml.YAMLError`` handlers report it like a syntax error.

A scalar PyYAML reads as an int or a date but cannot build (a number of 5,000
digits, past Python's limit on reading ints; ``2020-02-30``) raised a plain
``ValueError`` from deep inside the loader; it is a located YAML error too.

Anchors and aliases (and merge keys) are allowed, but what they add is
capped: an alias repeats a whole subtree, so a few hundred bytes of nested
aliases stand for billions of nodes, which PyYAML shares but everything that
walks the data afterwards (config validation, copies) expands: 370 bytes took
1.7 GB. :class:`AliasExpansionError` refuses a document whose aliases add more
than :data:`MAX_ALIAS_NODES` nodes, or one that contains itself.

:func:`describe_error` turns any YAML error into ``file:line:column: ...``,
pointing at where the problem starts rather than at the end of the file for
errors PyYAML only notices there (an unclosed quote or bracket).
"""

from __future__ import annotations

from typing import IO, Any

import yaml
from yaml.constructor import ConstructorError

_MERGE_TAG = "tag:yaml.org,2002:merge"
MAX_ALIAS_NODES = 100_000
"""Most nodes that aliases may add to a document (beyond the nodes written in it)."""


class AliasExpansionError(ConstructorError):
    """Aliases expand a document too far (an "alias bomb") or make it contain itself."""


class DuplicateKeyError(ConstructorError):
    """A mapping defines the same key twice; both places are in the message."""


class StrictLoader(yaml.SafeLoader):
    """``SafeLoader`` that rejects duplicate mapping keys (merge keys ``<<`` aside)."""

    def construct_document(self, node: yaml.Node) -> Any:
        _check_expansion(node)
        return super().construct_document(node)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, yaml.MappingNode):
            _check_duplicates(self, node)
        return super().construct_mapping(node, deep=deep)

    def construct_checked_int(self, node: yaml.ScalarNode) -> Any:
        """An int, or a located error for one Python refuses to read (over 4,300 digits)."""
        try:
            return self.construct_yaml_int(node)
        except ValueError:
            digits = sum(c.isdigit() for c in str(node.value))
            raise ConstructorError(
                None, None, f"a number of {digits:,} digits is too long to read", node.start_mark
            ) from None

    def construct_checked_timestamp(self, node: yaml.ScalarNode) -> Any:
        """A date, or a located error for text shaped like one that is none (2020-02-30)."""
        try:
            return self.construct_yaml_timestamp(node)
        except ValueError as exc:
            raise ConstructorError(
                None,
                None,
                f"{str(node.value)[:40]!r} reads as a date but is none ({exc}); quote it "
                "if it is meant as text",
                node.start_mark,
            ) from None


StrictLoader.add_constructor("tag:yaml.org,2002:int", StrictLoader.construct_checked_int)
StrictLoader.add_constructor(
    "tag:yaml.org,2002:timestamp", StrictLoader.construct_checked_timestamp
)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _check_expansion(root: yaml.Node) -> None:
    """Refuse ``root`` when aliases make it much bigger than written, or cyclic.

    The expanded size of each distinct node is computed once (an iterative
    post-order walk), so this costs the nodes written, not the nodes meant.
    """
    size: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            on_path.discard(key)
            size[key] = 1 + sum(size[id(c)] for c in _children(node))
            continue
        if key in size:
            continue
        if key in on_path:
            raise AliasExpansionError(
                None, None, "an alias refers to a node that contains it", node.start_mark
            )
        on_path.add(key)
        stack.append((node, True))
        stack.extend((c, False) for c in _children(node) if id(c) not in size)
    added = size[id(root)] - len(size)
    if added > MAX_ALIAS_NODES:
        raise AliasExpansionError(
            None,
            None,
            f"aliases expand the document by {added:,} nodes, more than the "
            f"{MAX_ALIAS_NODES:,} allowed (nested aliases repeat whole subtrees); "
            "write the repeated parts out or use fewer aliases",
            root.start_mark,
        )


def _check_duplicates(loader: StrictLoader, node: yaml.MappingNode) -> None:
    seen: dict[Any, yaml.Mark] = {}
    for key_node, _ in node.value:
        if key_node.tag == _MERGE_TAG:
            continue
        key = loader.construct_object(key_node, deep=True)
        try:
            first = seen.get(key)
        except TypeError:  # an unhashable key; the base constructor reports it
            continue
        mark = key_node.start_mark
        if first is not None:
            raise DuplicateKeyError(
                "while constructing a mapping",
                node.start_mark,
                f"duplicate key {key!r} (first defined at line {first.line + 1}, "
                f"column {first.column + 1}); each key may appear once",
                mark,
            )
        seen[key] = mark


class TooDeepError(yaml.YAMLError):
    """YAML nested deeper than the parser can follow (``[[[[...``): a YAMLError,
    so every caller reports it as a bad file instead of crashing."""


_TOO_DEEP = "nested too deeply to read (thousands of levels of [ or {)"


def safe_load(stream: str | bytes | IO[str] | IO[bytes], *, source: str | None = None) -> Any:
    """Like ``yaml.safe_load``, but duplicate keys raise :class:`DuplicateKeyError`.

    ``source`` names the text in error marks (a file path) when ``stream`` is a
    string; an open file already carries its name.
    """
    loader = StrictLoader(stream)
    if source is not None:
        loader.name = source
    try:
        return loader.get_single_data()
    except RecursionError:
        raise TooDeepError(_TOO_DEEP) from None
    finally:
        loader.dispose()


def compose_and_load(text: str, *, source: str | None = None) -> tuple[yaml.Node | None, Any]:
    """The node tree (lines of every key, for error messages) and the data, in one parse."""
    loader = StrictLoader(text)
    if source is not None:
        loader.name = source
    try:
        root = loader.get_single_node()
        data = loader.construct_document(root) if root is not None else None
        return root, data
    except RecursionError:
        raise TooDeepError(_TOO_DEEP) from None
    finally:
        loader.dispose()


def error_mark(err: yaml.YAMLError) -> yaml.Mark | None:
    """Where a YAML error is best reported.

    PyYAML notices an unclosed quote or bracket only at the end of the stream;
    its *context* mark (where the quote or bracket opened) is then the useful one.
    """
    problem = getattr(err, "problem_mark", None)
    context = getattr(err, "context_mark", None)
    at_end = problem is not None and (
        "end of stream" in (getattr(err, "problem", None) or "")
        or (problem.buffer is not None and problem.pointer >= len(problem.buffer.rstrip("\0")))
    )
    if at_end and context is not None:
        return context  # type: ignore[no-any-return]
    return problem if problem is not None else context


def describe_error(err: yaml.YAMLError, source: str) -> str:
    """``source:line:column: not valid YAML: problem (context)`` on one line."""
    mark = error_mark(err)
    where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark is not None else source
    problem = getattr(err, "problem", None) or str(err).splitlines()[0]
    context = getattr(err, "context", None)
    context_mark = getattr(err, "context_mark", None)
    if isinstance(err, DuplicateKeyError):
        return f"{where}: {problem}"  # the problem already names both places
    if context and context_mark is not None and context_mark is not mark:
        problem += f" ({context} at line {context_mark.line + 1})"
    elif context and context_mark is mark:
        problem += f" ({context}, which starts here)"
    return f"{where}: not valid YAML: {problem}"
