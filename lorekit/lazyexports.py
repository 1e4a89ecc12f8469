"""Package attributes imported on first use (PEP 562), so importing a package is cheap.

``lorekit --help`` reads every plugin's registrations, and each registration
module sits inside a package (``lorekit.agents.adapt.plugin``): importing it
runs the package's ``__init__``. Packages whose ``__init__`` re-exports their
classes do so through :func:`lazy_attributes`, which imports a class's module
only when the attribute is first read (``from lorekit.agents.adapt import
AdaptAgent`` works as before). This module imports nothing of LoreKit.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any


def lazy_attributes(package: str, exports: Mapping[str, Iterable[str]]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: ``exports`` maps a module (absolute
    dotted name) to the attributes it provides. A value read once is kept on the
    package, so later reads cost nothing."""
    where = {name: module for module, names in exports.items() for name in names}

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
