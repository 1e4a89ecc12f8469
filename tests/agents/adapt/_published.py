"""Where the tests find the authors' published ADaPT result files (read-only data).

They live beside the repository (``../shared/data/published-runs/adapt``; the
machine-wide copy ``/work/shared/data`` is accepted too) and are never copied
into it. A test that needs one skips, naming the folder, when it is absent.
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
FOLDERS = (
    ROOT.parent / "shared" / "data" / "published-runs" / "adapt",
    Path("/work/shared/data/published-runs/adapt"),
)
TEXTCRAFT = "ADaPT_maxd3_textcraft_gpt-3.5-turbo-instruct.json"
ALFWORLD = "ADaPT_maxd3_alfworld_text_davinci_003.json"
WEBSHOP = "ADaPT_maxd3_webshop_gpt-3.5-turbo.json"


def published(name: str) -> Path:
    """The published file ``name``, or a skip saying where it was looked for."""
    for folder in FOLDERS:
        if (folder / name).is_file():
            return folder / name
    pytest.skip(f"published ADaPT run {name} not found in ../shared/data/published-runs/adapt")
