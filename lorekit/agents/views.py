"""Views: how an agent's episode notes are shown, owned by the agent that writes them.

An agent leaves what is particular to it in the episode's notes (ADaPT's
decomposition tree, AutoManual's turns and rule changes, SPRING's graph
passes, a team's timeline). The harness stores the notes without reading
them; ``lorekit show`` and the HTML report draw them through this protocol,
so neither knows any agent, and adding a method touches its own package
(its ``view.py`` and ``report_view.js``) plus ``registry.add_view(NAME,
"module:VIEW")`` in its plugin (:mod:`lorekit.registry`).

A view says whether an episode's notes hold its data (:meth:`NotesView.claims`),
prints them in the terminal (:meth:`NotesView.show`), may add to the episode's
header (optional methods ``goal(notes)`` and ``header(notes)``, read through
:func:`view_goal` and :func:`view_header`), and names a script
(:attr:`NotesView.report_script`) that registers the view's renderer with the
report page: ``LoreKitReport.registerView(name, (notes, ui) => [elements])``,
where ``ui`` holds the page's helpers (``el``, ``svg``, ``pre``, ``table``,
``num``, ``mark``, ``isObj``). Report scripts set text only (no ``innerHTML``,
no ``eval``): notes hold model output.
"""

from __future__ import annotations

import pkgutil
from collections.abc import Mapping
from importlib.resources import files
from typing import Any, Protocol, runtime_checkable

from rich.console import Console

from lorekit.registry import REGISTRY


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


def view_goal(view: NotesView, notes: Mapping[str, Any]) -> str | None:
    """The view's ``goal(notes)``, the task in the agent's words (shown beside the task
    id), or None: a view need not have the method."""
    goal = getattr(view, "goal", None)
    return goal(notes) if callable(goal) else None


def view_header(view: NotesView, notes: Mapping[str, Any]) -> str | None:
    """The view's ``header(notes)``, one line of rich markup printed under the episode's
    status line, or None: a view need not have the method."""
    header = getattr(view, "header", None)
    return header(notes) if callable(header) else None


def register_view(spec: str, name: str | None = None) -> None:
    """Add a view (``"module:attribute"``) after the registered ones: the in-process
    form of a plugin's ``registry.add_view(NAME, SPEC)``. ``name`` defaults to the
    spec itself. Registering the same view twice is a no-op."""
    if ":" not in spec or spec.startswith(":"):
        raise ValueError(f"a view is named 'package.module:attribute', got {spec!r}")
    if any(entry.target == spec for entry in REGISTRY.entries("view")):
        return
    REGISTRY.add_view(name or spec, spec)


def load_view(spec: str) -> NotesView:
    """The view a ``module:attribute`` string names; ``TypeError`` if it is not one."""
    view = pkgutil.resolve_name(spec)
    if not isinstance(view, NotesView):
        raise TypeError(f"{spec} is not a NotesView (needs name, report_script, claims, show, ...)")
    return view


def load_views() -> list[NotesView]:
    """Every registered view, by its ``order`` then registration order (imported now)."""
    views = []
    entries = REGISTRY.entries("view")
    for entry in sorted(entries, key=lambda e: (e.meta.get("order", 100), entries.index(e))):
        view = entry.load()
        if not isinstance(view, NotesView):
            raise TypeError(
                f"view {entry.name!r} ({entry.target_name}) is not a NotesView "
                "(needs name, report_script, claims and show)"
            )
        views.append(view)
    return views


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
