"""LoreKit: a framework and lab for LLM agents that learn how a world works.

``lorekit.evaluate(env, agent, ...)`` runs an agent on an env and records it
(:mod:`lorekit.eval.evaluate`); it is imported on first use, so ``import
lorekit`` stays as cheap as reading the version.
"""

from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING

from lorekit.lazyexports import lazy_attributes

try:
    __version__ = version("lorekit")
except PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0.0.0+source"

if TYPE_CHECKING:
    from lorekit.eval.evaluate import evaluate, evaluate_async

__all__ = ["__version__", "evaluate", "evaluate_async"]

if not TYPE_CHECKING:  # the façade: the harness loads only when it is asked for
    __getattr__ = lazy_attributes(
        __name__, {"lorekit.eval.evaluate": ("evaluate", "evaluate_async")}
    )
