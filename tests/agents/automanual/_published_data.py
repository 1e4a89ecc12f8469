"""Where the tests find the AutoManual authors' published runs (never copied here).

They sit in the project's shared data beside the repository
(``../shared/data/published-runs/automanual/ENV``) or at /work/shared/data;
tests that need them skip with this reason where neither is present.
"""

from __future__ import annotations

from pathlib import Path

import pytest

REASON = "needs ../shared/data/published-runs/automanual (the authors' published runs)"


def shared_data() -> Path | None:
    """The shared data folder holding the published AutoManual runs, if any."""
    beside = Path(__file__).resolve().parents[3].parent / "shared" / "data"
    for folder in (beside, Path("/work/shared/data")):
        if (folder / "published-runs" / "automanual" / "alfworld").is_dir():
            return folder
    return None


SHARED = shared_data()
needs_published = pytest.mark.skipif(SHARED is None, reason=REASON)


def published(env: str) -> Path:
    """The folder of ``env``'s published run (call only under ``needs_published``)."""
    assert SHARED is not None
    return SHARED / "published-runs" / "automanual" / env
