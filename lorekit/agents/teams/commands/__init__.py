"""S-Agents' commands (``lorekit team ...``): thin click modules over the teams package,
registered by :mod:`lorekit.agents.teams.plugin`."""
