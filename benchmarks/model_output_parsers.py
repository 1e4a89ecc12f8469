"""Parsers of model output stay linear on hostile answers (issue 25).

Side by side in one process, on the same inputs:

- the scan for JSON values in prose: ``lorekit.jsonscan.values`` against the
  obvious scan it replaced (``raw_decode`` tried at every ``{``), on runs of
  ``{`` (quadratic there: each failed decode's error counts the lines before it);
  the ratio old/new;
- growth: for each hardened parser, the time on an input 4x as long divided by
  the time on the shorter one. Linear work gives about 4; quadratic about 16.

    python benchmarks/model_output_parsers.py [--n 20000]

It only reports: a loaded machine changes the figures, never the exit code.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import time
from collections.abc import Callable

from lorekit.agents.adapt.planner import parse_plan
from lorekit.graph.parsers import json_parser
from lorekit.jsonscan import values
from lorekit.laws.extract_parse import parse_answer


def old_scan(text: str) -> list[object]:
    """The scan ``values`` replaced: try a JSON decode at every opening brace."""
    decoder, found = json.JSONDecoder(), []
    for i, ch in enumerate(text):
        if ch == "{":
            try:
                found.append(decoder.raw_decode(text, i)[0])
            except ValueError:
                continue
    return found


def seconds(fn: Callable[[str], object], text: str, repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        with contextlib.suppress(Exception):  # a parser's own error is a result too
            fn(text)
        best = min(best, time.perf_counter() - start)
    return best


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20_000, help="length of the short input")
    n = parser.parse_args(argv).n
    # Each failed decode builds a JSONDecodeError, which counts the lines before its
    # position: the old scan is quadratic in the number of '{'.
    braces = "{" * n
    old, new = seconds(old_scan, braces, 1), seconds(values, braces)
    ratio = old / max(new, 1e-9)
    print(f"JSON scan over {n:,} x '{{': old {old:.3f} s, new {new:.4f} s, old/new {ratio:.0f}x")
    take_last = json_parser(take="last")
    cases: dict[str, tuple[Callable[[str], object], Callable[[int], str]]] = {
        "ADaPT plan (leading spaces)": (parse_plan, lambda k: " " * k + "1. x"),
        "graph json take=last ('{')": (take_last, lambda k: "{" * k),
        "laws extraction ('{')": (
            lambda t: parse_answer(t, {"type": "object"}),
            lambda k: "{" * k,
        ),
        "JSON scan ('[')": (values, lambda k: "[" * k),
    }
    print(f"{'parser':32} {'n':>8} {'t(n) s':>9} {'t(4n) s':>9} {'ratio':>6}  (linear ~4)")
    for name, (fn, make) in cases.items():
        short, long_ = seconds(fn, make(n)), seconds(fn, make(4 * n))
        print(f"{name:32} {n:>8,} {short:>9.4f} {long_:>9.4f} {long_ / max(short, 1e-9):>6.1f}")


if __name__ == "__main__":
    main()
