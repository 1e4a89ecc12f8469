"""Laws of an environment learned from interaction records (issue 15).

``experience`` holds the shared :class:`Experience` format and crafter's
ground truth, ``records`` the paper's record format and a collector (states
from ``transitions``, played by the scripted ``explorer``; ``collector`` is
the plain one), ``symbolic`` a learner that needs no LLM, and ``score``
compares any experience with the ground truth. ``commands`` is the
``lorekit laws`` group, ``testing`` the scripted extractors of its
``--simulate``, and ``plugin`` registers both with LoreKit.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lorekit.laws.experience import (
        LAW_ACTIONS,
        Experience,
        ExperienceError,
        Law,
        oracle_experience,
    )

__all__ = ["LAW_ACTIONS", "Experience", "ExperienceError", "Law", "oracle_experience"]


def __getattr__(name: str) -> Any:
    """Load the experience module on first use: it needs crafter (an extra), and
    importing a torch- or crafter-free part of the package must not."""
    if name in __all__:
        from lorekit.laws import experience

        return getattr(experience, name)
    raise AttributeError(f"module 'lorekit.laws' has no attribute {name!r}")
