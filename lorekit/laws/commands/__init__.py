"""The ``lorekit laws`` command group: one thin click module per command.

Each module parses its arguments and calls the library in :mod:`lorekit.laws`;
:mod:`lorekit.laws.commands.group` gathers them under ``laws``, which
:mod:`lorekit.laws.plugin` registers. Nothing here is imported until
``lorekit laws ...`` runs.
"""
