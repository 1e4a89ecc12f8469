"""MiniWoB++'s code API as AutoManual's planner drives it: the page as an attribute.

The authors' agent object carries the page it last saw as ``cur_html_string``,
their planner prompt names it, and their skills read it (the tic-tac-toe skill
reads the board from it rather than from what a click returned). LoreKit's
:class:`~lorekit.envs.miniwob.code_api.MiniWoBCodeApi` returns that page from
every action; this subclass also offers it as a state attribute, which the
sandbox's proxy shows the code as ``agent.cur_html_string``, refreshed after
every call. The first page is read once, the first time the state is asked for;
after that the attribute is the page the last action showed, and after the
episode the last page seen, as in the authors' wrapper.
"""

from __future__ import annotations

from lorekit.envs.miniwob.code_api import MiniWoBCodeApi


class PlannerMiniWoBApi(MiniWoBCodeApi):
    """:class:`MiniWoBCodeApi` with ``state()``: ``{"cur_html_string": page}``."""

    def state(self) -> dict[str, str]:
        """The attributes the code reads: the page as the last action left it."""
        if not self._seen_html:
            self.html()  # before the first action: the page the episode opened on
        return {"cur_html_string": self._seen_html}
