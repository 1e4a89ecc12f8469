"""Laws of an environment learned from interaction records, used as context and as RL rewards."""
