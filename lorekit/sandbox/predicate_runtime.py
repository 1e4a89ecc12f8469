"""Run-time guards a compiled predicate calls, and its per-call step budget.

The static rules (``predicate_check``) make most blow-ups impossible to
write; what they cannot see is the *size* of values, which is only known at
run time. Two cheap mechanisms cover that, and both stay off the common path:

- **Growth guards.** Only a few operators can make a value much bigger than
  their operands (``*``, ``**``, ``<<`` on anything; ``+``, ``-``, ``|``, ``^``
  and f-strings when repeated on their own results), and ``%`` on a string is
  printf-style formatting with computed widths. The rewriter routes exactly
  those operators through the guards below (and skips them when an operand is
  a numeric literal, which cannot grow anything), so every integer the
  predicate makes stays under ``max_int_bits`` and every string, list, tuple,
  set or dict it grows stays under ``max_sequence`` items.
- **A step budget.** A predicate with loops gets a one-item list ``box`` as
  its first local, holding the steps left for this call. Entering a loop
  charges ``items x weight`` (the weight is the loop body's size, so a fat
  body costs more per item), and inside loops every operation whose cost
  grows with its operand (``in`` on a list, ``sum``, ``sorted``, ``count``,
  slicing, comparing two collections...) charges that operand's length. Past
  the budget the call stops with :class:`BudgetExceeded`. A predicate without
  loops has no box and pays nothing.

The guards receive ``box`` (or ``None`` outside loops) so that values made
inside loops are charged too: that is what bounds the memory a list
comprehension of fresh values can hold.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Iterator
from operator import length_hint
from typing import Any, cast

from lorekit.sandbox.errors import PredicateError

#: Types whose size the guards check and charge (subclasses included).
SIZED = (str, bytes, bytearray, list, tuple, set, frozenset, dict)
#: Containers where ``x in c`` is a hash lookup, so it costs nothing per item.
HASHED: tuple[type, ...] = (dict, set, frozenset, range, type({}.keys()), type({}.items()))
Box = list[int]


class BudgetExceeded(PredicateError):
    """A call of a compiled predicate ran past one of its size or step limits.

    A :class:`PredicateError`, so that a generator a predicate returned, consumed
    later by the caller, still stops with the documented error type.
    """


class SizedEnumerate(enumerate):  # type: ignore[type-arg]
    """``enumerate`` that knows its length, so loops over it are charged up front."""

    __slots__ = ("_hint",)
    _hint: int

    def __new__(cls, iterable: Iterable[Any], start: int = 0) -> SizedEnumerate:
        self = super().__new__(cls, iterable, start)
        self._hint = length_hint(iterable, -1)
        return self

    def __length_hint__(self) -> int:
        return self._hint if self._hint >= 0 else NotImplemented


class SizedZip(zip):  # type: ignore[type-arg]
    """``zip`` that knows its length (the shortest input's), when its inputs do."""

    __slots__ = ("_hint",)
    _hint: int

    def __new__(cls, *iterables: Iterable[Any], strict: bool = False) -> SizedZip:
        self = cast(SizedZip, super().__new__(cls, *iterables, strict=strict))
        hints = [length_hint(i, -1) for i in iterables]
        self._hint = -1 if any(h < 0 for h in hints) else min(hints, default=0)
        return self

    def __length_hint__(self) -> int:
        return self._hint if self._hint >= 0 else NotImplemented


def runtime_helpers(
    *, max_sequence: int, max_int_bits: int, max_steps: int, max_range: int,
    max_exponent: int, max_shift: int,
) -> dict[str, Callable[..., Any]]:  # fmt: skip
    """The guard functions, bound to these limits, by the names the rewriter uses."""
    int_limit = 1 << max_int_bits

    def over(what: str) -> BudgetExceeded:
        return BudgetExceeded(
            f"{what} went past the step budget of {max_steps:,} for one call "
            "(PredicateLimits.max_steps); do less work per call: fewer or smaller loops "
            "and copies"
        )

    def charge(box: Box, n: int, what: str) -> None:
        left = box[0] - n
        box[0] = left
        if left < 0:
            raise over(what)

    def checked(box: Box | None, value: Any, what: str) -> Any:
        cls = value.__class__
        if cls is int:
            if value > int_limit or value < -int_limit:
                raise BudgetExceeded(
                    f"{what} made an integer over {max_int_bits:,} bits, the limit "
                    "(PredicateLimits.max_int_bits)"
                )
        elif cls is float or cls is bool:
            pass
        elif isinstance(value, SIZED):
            n = len(value)
            if n > max_sequence:
                raise BudgetExceeded(
                    f"{what} made a {cls.__name__} of {n:,} items, longer than the limit "
                    f"of {max_sequence:,} (PredicateLimits.max_sequence)"
                )
            if box is not None:
                charge(box, n, what)
        return value

    def bits(value: Any) -> int:
        return value.bit_length() if isinstance(value, int) else 0

    def int_cost(box: Box | None, a: Any, b: Any, what: str, quadratic: bool = False) -> None:
        """Charge integer arithmetic by operand size, inside loops (``box`` set).

        Adding or comparing n-bit numbers costs ~n/64 word steps; multiplying or
        dividing them ~n*m/65536 (a 4,096-bit product: 256 steps).
        """
        if box is not None and (a.__class__ is int or b.__class__ is int):
            x, y = bits(a), bits(b)
            n = (x + y) >> 6
            if quadratic:
                n += (x * y) >> 16
            if n:
                charge(box, n, what)

    def linear(symbol: str, op: Callable[[Any, Any], Any]) -> Callable[..., Any]:
        what = f"'{symbol}'"

        def guard(box: Box | None, a: Any, b: Any) -> Any:
            int_cost(box, a, b, what)
            return checked(box, op(a, b), what)

        return guard

    def mul(box: Box | None, a: Any, b: Any) -> Any:
        if isinstance(a, int) and isinstance(b, int):
            if bits(a) + bits(b) > max_int_bits + 1:
                raise BudgetExceeded(
                    f"'*' would make an integer over {max_int_bits:,} bits, the limit "
                    "(PredicateLimits.max_int_bits)"
                )
            int_cost(box, a, b, "'*'", quadratic=True)
        else:
            for seq, times in ((a, b), (b, a)):
                repeated = isinstance(seq, SIZED) and isinstance(times, int)
                if repeated and len(seq) * times > max_sequence:
                    raise BudgetExceeded(
                        f"'*' would repeat to {len(seq) * times:,} items, longer than "
                        f"the limit of {max_sequence:,} (PredicateLimits.max_sequence)"
                    )
        return checked(box, a * b, "'*'")

    def power(box: Box | None, a: Any, b: Any) -> Any:
        big = isinstance(a, int) and isinstance(b, int) and b > 0 and not -1 <= a <= 1
        if big:
            if b > max_exponent or bits(a) * b > max_int_bits + 1:
                raise BudgetExceeded(
                    f"'**' with exponent {b:,} would make an integer over {max_int_bits:,} "
                    "bits, the limit (PredicateLimits.max_int_bits, max_exponent)"
                )
            result = 1 << (bits(a) * b)  # the size of the answer sets the cost
            int_cost(box, result, result, "'**'", quadratic=True)
        return checked(box, a**b, "'**'")

    def lshift(box: Box | None, a: Any, b: Any) -> Any:
        big = isinstance(a, int) and isinstance(b, int) and a != 0
        if big and (b > max_shift or bits(a) + b > max_int_bits):
            raise BudgetExceeded(
                f"'<<' by {b:,} would make an integer over {max_int_bits:,} bits, "
                "the limit (PredicateLimits.max_int_bits, max_shift)"
            )
        int_cost(box, a, b, "'<<'")
        return checked(box, a << b, "'<<'")

    def division(symbol: str, op: Callable[[Any, Any], Any]) -> Callable[..., Any]:
        """``//``, ``/``, ``%``: quadratic in the operands' sizes, so two integers
        over ``max_int_bits`` (only the caller's arguments can be) are refused."""
        what = f"'{symbol}'"

        def guard(box: Box | None, a: Any, b: Any) -> Any:
            if symbol == "%" and isinstance(a, str | bytes | bytearray):
                raise BudgetExceeded(
                    "'%' formatting of strings is not allowed in a predicate; compare "
                    "values instead of building text"
                )
            if isinstance(a, int) and isinstance(b, int):
                if bits(a) * bits(b) > max_int_bits * max_int_bits:
                    raise BudgetExceeded(
                        f"{what} of a {bits(a):,}-bit by a {bits(b):,}-bit integer is over "
                        f"the limit of {max_int_bits:,} bits (PredicateLimits.max_int_bits)"
                    )
                int_cost(box, a, b, what, quadratic=True)
            return op(a, b)

        return guard

    floordiv = division("//", operator.floordiv)

    def checked_divmod(a: Any, b: Any) -> tuple[Any, Any]:
        return floordiv(None, a, b), a % b

    def text(box: Box | None, value: Any) -> Any:
        return checked(box, value, "building a string")

    def bounded_range(*args: int) -> range:
        r = range(*args)
        if len(r) > max_range:
            raise BudgetExceeded(
                f"range of {len(r):,} items exceeds the limit of {max_range:,} "
                "(PredicateLimits.max_range)"
            )
        return r

    # The three helpers below run once per loop entry or per scan: charge() is
    # inlined in them to keep that to one Python call.
    def cost(box: Box, value: Any) -> Any:
        n = value.bit_length() >> 6 if value.__class__ is int else length_hint(value)
        left = box[0] - n
        box[0] = left
        if left < 0:
            raise over("copying or scanning a collection")
        return value

    def scan(box: Box, container: Any) -> Any:
        if not isinstance(container, HASHED):
            left = box[0] - length_hint(container)
            box[0] = left
            if left < 0:
                raise over("'in' on a collection inside a loop")
        return container

    def counted(box: Box, weight: int, items: Iterable[Any]) -> Iterator[Any]:
        for item in items:
            charge(box, weight, "a loop")
            yield item

    def loop(box: Box, weight: int, items: Any) -> Any:
        n = length_hint(items, -1)
        if n < 0:  # a generator or an iterator of unknown length: charge item by item
            return counted(box, weight, items)
        left = box[0] - n * weight
        box[0] = left
        if left < 0:
            raise over("a loop")
        return items

    return {
        "range": bounded_range,
        "divmod": checked_divmod,
        "_sb_add": linear("+", operator.add),
        "_sb_sub": linear("-", operator.sub),
        "_sb_or": linear("|", operator.or_),
        "_sb_xor": linear("^", operator.xor),
        "_sb_and": linear("&", operator.and_),
        "_sb_rshift": linear(">>", operator.rshift),
        "_sb_mul": mul,
        "_sb_pow": power,
        "_sb_lshift": lshift,
        "_sb_mod": division("%", operator.mod),
        "_sb_floordiv": floordiv,
        "_sb_truediv": division("/", operator.truediv),
        "_sb_text": text,
        "_sb_cost": cost,
        "_sb_scan": scan,
        "_sb_loop": loop,
        "enumerate": SizedEnumerate,
        "zip": SizedZip,
    }
