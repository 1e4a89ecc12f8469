"""MiniWoB++: the Farama ``miniwob`` package's task pages in a real headless Chromium.

- :class:`MiniWoBEnv` (``make("miniwob")``): the TextEnv over a browser pool.
- :class:`BrowserPool`, :class:`Browser`: Chromium instances reused across
  episodes, killed when a call hangs, never left behind.
- :class:`MiniWoBPage`: one task page; AutoManual's actions.
- :class:`MiniWoBCodeApi`: those actions as typed methods, for code run in the sandbox.

Needs the ``web`` extra (``pip install 'lorekit[web]'``) and Debian's
``chromium`` and ``chromium-driver``. See docs/miniwob.md.
"""

from lorekit.envs.miniwob.actions import Action, ActionSyntaxError, parse_action
from lorekit.envs.miniwob.browser import Browser, BrowserCrashed, BrowserMissing, find_browser
from lorekit.envs.miniwob.code_api import MiniWoBCodeApi
from lorekit.envs.miniwob.env import MiniWoBEnv, resolve_tasks, task_lists
from lorekit.envs.miniwob.page import ActionResult, MiniWoBPage, Outcome, clean_html, page_names
from lorekit.envs.miniwob.pool import BrowserPool, PoolClosed, PoolStarved, shared_pool

__all__ = [
    "Action",
    "ActionResult",
    "ActionSyntaxError",
    "Browser",
    "BrowserCrashed",
    "BrowserMissing",
    "BrowserPool",
    "MiniWoBCodeApi",
    "MiniWoBEnv",
    "MiniWoBPage",
    "Outcome",
    "PoolClosed",
    "PoolStarved",
    "clean_html",
    "find_browser",
    "page_names",
    "parse_action",
    "resolve_tasks",
    "shared_pool",
    "task_lists",
]
