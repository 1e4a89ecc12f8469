"""Laws of a world mined from interaction records (stand-in package docstring; helper lawsym owns it)."""
