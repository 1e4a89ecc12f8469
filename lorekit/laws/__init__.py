"""Laws of a world learned from interaction records (stand-in package in the lawspring branch).

Helper lawsym owns this package; keep theirs when merging.
"""
