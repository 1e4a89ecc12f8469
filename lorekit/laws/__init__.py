"""Laws of an environment learned from interaction records (issue 15).

``experience`` holds the shared :class:`Experience` format and crafter's
ground truth, ``records`` the paper's record format and a collector,
``symbolic`` a learner that needs no LLM, and ``score`` compares any
experience with the ground truth.
"""

from lorekit.laws.experience import (
    LAW_ACTIONS,
    Experience,
    ExperienceError,
    Law,
    oracle_experience,
)

__all__ = ["LAW_ACTIONS", "Experience", "ExperienceError", "Law", "oracle_experience"]
