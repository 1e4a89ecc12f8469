"""The suite's own layout: what would stop pytest from collecting it.

The test folders have no ``__init__.py``, so pytest imports each test file
as a top-level module named after its file. Two files with one name in
different folders then break collection ("import file mismatch") and a run
with ``-x`` stops before any test: this happened once (automanual's and the
laws package's ``test_simulation.py``).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).parent


def duplicate_basenames(root: Path) -> dict[str, list[str]]:
    """Test module names that more than one file under ``root`` uses."""
    seen: dict[str, list[str]] = defaultdict(list)
    for path in sorted(root.rglob("test_*.py")):
        if any(part.startswith(".") for part in path.relative_to(root).parts):
            continue
        seen[path.name].append(str(path.relative_to(root)))
    return {name: paths for name, paths in seen.items() if len(paths) > 1}


def test_every_test_module_name_is_unique() -> None:
    assert duplicate_basenames(TESTS) == {}


def test_a_repeated_name_is_found(tmp_path: Path) -> None:
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "test_same.py").write_text("def test_x():\n    pass\n")
    (tmp_path / "a" / "test_other.py").write_text("")
    assert duplicate_basenames(tmp_path) == {"test_same.py": ["a/test_same.py", "b/test_same.py"]}
