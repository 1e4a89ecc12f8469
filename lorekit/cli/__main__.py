"""``python -m lorekit.cli``: the same as the ``lorekit`` command."""

from lorekit.cli.root import main

main()
