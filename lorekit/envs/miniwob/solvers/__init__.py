"""Scripted solvers (the expert) for MiniWoB++ task pages.

A solver maps what the page shows now (a
:class:`~lorekit.envs.miniwob.view.View`: utterance, elements, field
values, focus) to the next action in the env's text form,
or None when it sees nothing left to do. It keeps no memory between calls,
so it picks up from any state of an episode: after a wrong click, a field
typed half-way or a popup that came up, it looks again and carries on.

Each solver reads only what the observation offers a model too (texts,
ids, classes, the ``data-result`` index search results carry); none reads
the page's script variables.
"""

from lorekit.envs.miniwob.solvers import apps, clicks, forms  # noqa: F401  (they register)
from lorekit.envs.miniwob.solvers.base import SOLVERS, Solver, candidates, solve

__all__ = ["SOLVERS", "Solver", "candidates", "solve"]
