"""LoreKit: a framework and lab for LLM agents that learn how a world works."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("lorekit")
except PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0.0.0+source"

__all__ = ["__version__"]
