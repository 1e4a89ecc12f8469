"""AutoManual's command groups, ``lorekit automanual`` and ``lorekit manual``, and its
build stage of ``lorekit reproduce``.

Thin: each command parses its options, runs the pre-flight checks the core's
commands share (:mod:`lorekit.cli.checks`, :mod:`lorekit.cli.prepare`) and calls
the library (:mod:`lorekit.agents.automanual.build`,
:mod:`lorekit.agents.automanual.formulate`). AutoManual's plugin registers them
by import string, so nothing here is imported until one of them runs.
"""
