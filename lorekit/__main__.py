"""``python -m lorekit``: the same as the ``lorekit`` command."""

from lorekit.cli import main

main()
