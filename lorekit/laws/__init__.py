"""Laws of a world mined from interaction records (stand-in; helper lawsym owns this file)."""
