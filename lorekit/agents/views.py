"""Views: how an agent's episode notes are shown, owned by the agent that writes them.

An agent leaves what is particular to it in the episode's notes (ADaPT's
decomposition tree, AutoManual's turns and rule changes, SPRING's graph
passes, a team's timeline). The harness stores the notes without reading
them; ``lorekit show`` and the HTML report draw them through this protocol,
so neither knows any agent, and adding a method touches its own package
(its ``view.py`` and ``report_view.js``) plus one line in :data:`NOTES_VIEWS`.

A view says whether an episode's notes hold its data (:meth:`NotesView.claims`),
prints them in the terminal (:meth:`NotesView.show`), may add to the episode's
header (:meth:`NotesView.goal`, :meth:`NotesView.header`), and names a script
(:attr:`NotesView.report_script`) that registers the view's renderer with the
report page: ``LoreKitReport.registerView(name, (notes, ui) => [elements])``,
where ``ui`` holds the page's helpers (``el``, ``svg``, ``pre``, ``table``,
``num``, ``mark``, ``isObj``). Report scripts set text only (no ``innerHTML``,
no ``eval``): notes hold model output.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from importlib.resources import files
from typing import Any, Protocol, runtime_checkable

from rich.console import Console

#: The views, in the order ``lorekit show`` prints them and the report draws them,
#: as ``module:attribute`` strings imported on first use.
NOTES_VIEWS: tuple[str, ...] = (
    "lorekit.agents.adapt.view:VIEW",
    "lorekit.agents.automanual.view:VIEW",
    "lorekit.agents.graph_pass_view:VIEW",
    "lorekit.agents.teams.view:VIEW",
)


@runtime_checkable
class NotesView(Protocol):
    """What ``lorekit show`` and the HTML report ask of an agent's view."""

    name: str
    """Short, unique name (``"adapt"``); the report's renderer registers under it."""
    report_script: str
    """``package:resource`` of the script that draws the notes in the report."""

    def claims(self, notes: Mapping[str, Any]) -> bool:
        """Whether these notes hold this view's data (only then is it asked to draw them)."""
        ...

    def show(self, notes: Mapping[str, Any], console: Console) -> None:
        """Print the notes for ``lorekit show``, after the steps and model calls."""
        ...

    def goal(self, notes: Mapping[str, Any]) -> str | None:
        """The task in the agent's words, shown beside the task id; None for none."""
        ...

    def header(self, notes: Mapping[str, Any]) -> str | None:
        """One line (rich markup) printed under the episode's status line; None for none."""
        ...


def register_view(spec: str) -> None:
    """Add a view (``"module:attribute"``) after the built-in ones: the one line a
    plugin or a new method outside this package writes. Registering twice is a no-op."""
    global NOTES_VIEWS
    if ":" not in spec or spec.startswith(":"):
        raise ValueError(f"a view is named 'package.module:attribute', got {spec!r}")
    if spec not in NOTES_VIEWS:
        NOTES_VIEWS = (*NOTES_VIEWS, spec)


def load_view(spec: str) -> NotesView:
    """The view a ``module:attribute`` string names; ``TypeError`` if it is not one."""
    module, _, attr = spec.partition(":")
    view = getattr(importlib.import_module(module), attr)
    if not isinstance(view, NotesView):
        raise TypeError(f"{spec} is not a NotesView (needs name, report_script, claims, show, ...)")
    return view


def load_views() -> list[NotesView]:
    """Every view of :data:`NOTES_VIEWS`, in order (read at call time, imported lazily)."""
    return [load_view(spec) for spec in NOTES_VIEWS]


def claiming(notes: Mapping[str, Any]) -> list[NotesView]:
    """The views whose data these notes hold, in order."""
    return [view for view in load_views() if view.claims(notes)]


def report_script_text(view: NotesView) -> str:
    """The text of a view's report script (a package resource, so it ships in the wheel)."""
    package, _, resource = view.report_script.partition(":")
    return files(package).joinpath(resource).read_text(encoding="utf-8")


def mark(value: object) -> str:
    """``yes``/``no`` in colour for a verdict, ``?`` for none (rich markup)."""
    if value is True:
        return "[green]yes[/green]"
    return "[red]no[/red]" if value is False else "?"
