"""The ``lorekit`` command line (entry point ``lorekit = "lorekit.cli:main"``).

:mod:`lorekit.cli.root` holds the root group and the table of commands; each
command group is a module of its own (``run``, ``runs``, ``report``, ``graph``, ``team``,
...), imported only when it runs; a method's groups (``automanual``, ``laws``)
live in its package and arrive through its plugin registration. The
shared pieces import no command: :mod:`~lorekit.cli.console`,
:mod:`~lorekit.cli.errors`, :mod:`~lorekit.cli.checks` (pre-flight checks),
:mod:`~lorekit.cli.options` (option sets parsed into typed objects),
:mod:`~lorekit.cli.prepare` (run preparation), :mod:`~lorekit.cli.typed` (typed
``KEY=VALUE`` options), :mod:`~lorekit.cli.stores` and
:mod:`~lorekit.cli.local_model`.
"""

from lorekit.cli.root import cli, main

__all__ = ["cli", "main"]
