"""The published tables and figures LoreKit can rerun, as data (one YAML file each).

Each file names a paper's table, the env and split it was measured on, each
row's agent and options, the model mix the paper used, the metric and the
published figures; ``lorekit reproduce`` reads them through
:mod:`lorekit.eval.reproduce` (what each costs is measured by the dry run:
:mod:`lorekit.cli.reproduce_estimates`). This package holds data only.
"""

from __future__ import annotations

from pathlib import Path

DIRECTORY = Path(__file__).parent
"""Where the experiment files are."""
