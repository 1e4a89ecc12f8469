"""Declared database access for Python hooks and custom composes.

A concurrent pass equals a sequential one only if every database read that
happens while prompts are composed is ordered after every write of that key
(the race check). The check can only see what is declared, so Python code
gets a :class:`DbView` that holds exactly what its node declared:

- reads of other keys raise :class:`AccessError` naming the node and the key;
- writes of undeclared keys raise the same way;
- values of keys the code may only read come as deep read-only copies
  (:class:`FrozenList`, :class:`FrozenDict`), so changing a nested value in
  place raises instead of racing;
- values of keys the code may write come as private copies, and every write
  stays in the view until the engine commits it. That makes a hook's database
  changes transactional: a rejected attempt (``AfterQueryError``) or a hook
  that raises leaves the database as it was.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator, Mapping, MutableMapping
from typing import Any, NoReturn

from lorekit.graph.errors import AccessError

_MISSING = object()


def _refuse(owner: str, key: str) -> NoReturn:
    if key.startswith("@"):
        raise AccessError(
            f"{owner}: the result of node {key[1:]!r} was handed out read-only; "
            "work on a copy (copy.deepcopy)"
        )
    raise AccessError(
        f"{owner}: database key {key!r} was handed out read-only; assign a new value "
        f"instead (db[{key!r}] = ...) and declare the key under hook_writes",
        field="hook_writes",
    )


class FrozenList(list[Any]):
    """A read-only list: it compares, iterates, slices and adds (``+``) like a list,
    but every in-place change raises :class:`AccessError`."""

    __slots__ = ("_key", "_owner")

    def __init__(self, items: Iterable[Any], owner: str = "", key: str = "") -> None:
        super().__init__(items)
        self._owner, self._key = owner, key

    def _no(self, *args: Any, **kwargs: Any) -> NoReturn:
        _refuse(self._owner, self._key)

    append = extend = insert = remove = pop = clear = sort = reverse = _no
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _no

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return [copy.deepcopy(v, memo) for v in self]  # a thawed, writable copy

    def __reduce__(self) -> Any:
        return (list, (list(self),))


class FrozenDict(dict[Any, Any]):
    """A read-only dict (see :class:`FrozenList`)."""

    __slots__ = ("_key", "_owner")

    def __init__(self, items: Mapping[Any, Any], owner: str = "", key: str = "") -> None:
        super().__init__(items)
        self._owner, self._key = owner, key

    def _no(self, *args: Any, **kwargs: Any) -> NoReturn:
        _refuse(self._owner, self._key)

    __setitem__ = __delitem__ = __ior__ = _no
    update = pop = popitem = clear = setdefault = _no

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[Any, Any]:
        return {k: copy.deepcopy(v, memo) for k, v in self.items()}

    def __reduce__(self) -> Any:
        return (dict, (dict(self),))


def freeze(value: Any, owner: str = "", key: str = "") -> Any:
    """A deep read-only copy of ``value`` (scalars are returned as they are)."""
    if isinstance(value, str | int | float | bool | type(None) | bytes):
        return value
    if isinstance(value, Mapping):
        return FrozenDict({k: freeze(v, owner, key) for k, v in value.items()}, owner, key)
    if isinstance(value, list | tuple):
        items = [freeze(v, owner, key) for v in value]
        return FrozenList(items, owner, key) if isinstance(value, list) else tuple(items)
    if isinstance(value, set | frozenset):
        return frozenset(value)
    return copy.deepcopy(value)


def thaw(value: Any) -> Any:
    """A plain, writable deep copy (read-only copies become lists and dicts again)."""
    return copy.deepcopy(value)


class DbView(MutableMapping[str, Any]):
    """The database as one node's Python code may see it (see the module docstring).

    ``owner`` names the code in errors (``node 'plan': after-query hook``).
    Writes are kept in the view; :meth:`commit` applies them to the database.
    """

    def __init__(
        self,
        db: Mapping[str, Any],
        *,
        owner: str,
        node: str,
        reads: Iterable[str],
        writes: Iterable[str] = (),
        hint: str = "hook_reads",
    ) -> None:
        self._db = db
        self._owner = owner
        self._node = node
        self._writable = frozenset(writes)
        self._readable = frozenset(reads) | self._writable
        self._hint = hint
        self._pending: dict[str, Any] = {}  # key -> value, or _MISSING for a deletion

    # -- checks ----------------------------------------------------------------

    def _check_read(self, key: str) -> None:
        if key not in self._readable:
            declared = ", ".join(sorted(self._readable)) or "none"
            raise AccessError(
                f"{self._owner} reads database key {key!r}, which node {self._node!r} does "
                f"not declare (declared: {declared}); list it under {self._hint}",
                node=self._node,
                field=self._hint,
            )

    def _check_write(self, key: str) -> None:
        if key not in self._writable:
            declared = ", ".join(sorted(self._writable)) or "none"
            raise AccessError(
                f"{self._owner} writes database key {key!r}, which node {self._node!r} does "
                f"not declare (writable: {declared}); list it under hook_writes, and order "
                "every node that reads it after this one",
                node=self._node,
                field="hook_writes",
            )

    # -- mapping -----------------------------------------------------------------

    def __getitem__(self, key: str) -> Any:
        self._check_read(key)
        if key in self._pending:
            value = self._pending[key]
            if value is _MISSING:
                raise KeyError(key)
            return value
        value = self._db[key]  # KeyError when absent, as a dict would
        if key in self._writable:
            if isinstance(value, str | int | float | bool | type(None)):
                return value
            private = thaw(value)  # changes in place are writes, kept until commit
            self._pending[key] = private
            return private
        return freeze(value, f"{self._owner} of node {self._node!r}", key)

    def __setitem__(self, key: str, value: Any) -> None:
        self._check_write(key)
        self._pending[key] = value

    def __delitem__(self, key: str) -> None:
        self._check_write(key)
        if key not in self:
            raise KeyError(key)
        self._pending[key] = _MISSING

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        self._check_read(key)
        if key in self._pending:
            return self._pending[key] is not _MISSING
        return key in self._db

    def _visible(self) -> list[str]:
        keys = [k for k in self._db if k in self._readable and k not in self._pending]
        return keys + [k for k, v in self._pending.items() if v is not _MISSING]

    def __iter__(self) -> Iterator[str]:
        return iter(self._visible())

    def __len__(self) -> int:
        return len(self._visible())

    def __repr__(self) -> str:
        return f"DbView(node={self._node!r}, keys={self._visible()!r})"

    # -- transaction ---------------------------------------------------------------

    @property
    def pending(self) -> Mapping[str, Any]:
        """Writes not yet committed (a deletion shows as a missing key)."""
        return {k: v for k, v in self._pending.items() if v is not _MISSING}

    def commit(self, db: MutableMapping[str, Any]) -> None:
        """Apply the kept writes to ``db``; the view is then empty again."""
        for key, value in self._pending.items():
            if value is _MISSING:
                db.pop(key, None)
            else:
                db[key] = value
        self._pending.clear()

    def discard(self) -> None:
        """Forget the kept writes (a rejected attempt)."""
        self._pending.clear()


class FrozenResults(Mapping[str, Any]):
    """This pass's node results as a hook sees them: each value a read-only copy,
    made when it is looked up (a hook changing another node's result in place
    would change what that node's dependents read, depending on timing)."""

    def __init__(self, results: Mapping[str, Any], owner: str) -> None:
        self._results = results
        self._owner = owner

    def __getitem__(self, key: str) -> Any:
        return freeze(self._results[key], self._owner, f"@{key}")

    def __iter__(self) -> Iterator[str]:
        return iter(self._results)

    def __len__(self) -> int:
        return len(self._results)
