"""AutoManual's vocabulary: rules, outcomes, planner turns and episodes.

Every other module of the package speaks in these terms, and none of them
needs a model, an environment or a database. Everything here is plain data
that round-trips through JSON (``to_dict`` / ``from_dict``), because it is
stored in the run store and shown by ``lorekit show``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

STAGE_ROLES = ("planner", "builder", "consolidator", "formulator")
"""The model roles of AutoManual's stages. Every stage's command accepts a
config naming all four, so one config file serves building, formulating and
testing (e.g. a strong ``default`` for building and ``planner: small`` for
testing is one line to change)."""


class RuleType(StrEnum):
    """The six kinds of knowledge a rule can hold (AutoManual, section 3.3)."""

    SPECIAL_PHENOMENON = "Special Phenomenon"
    SPECIAL_MECHANISM = "Special Mechanism"
    SUCCESS_PROCESS = "Success Process"
    USEFUL_HELPER_METHOD = "Useful Helper Method"
    CORRECTED_ERROR = "Corrected Error"
    UNSOLVED_ERROR = "Unsolved Error"

    @classmethod
    def parse(cls, text: str) -> RuleType:
        """The type named by ``text``, forgiving case, spacing and "Phenomena"/"Unresolved".

        Raises ``ValueError`` naming the accepted types, which the builder's
        retry loop feeds back to the model.
        """
        key = " ".join(str(text).replace("_", " ").split()).lower()
        aliases = {
            "special phenomena": cls.SPECIAL_PHENOMENON,
            "special phenomena/mechanism": cls.SPECIAL_MECHANISM,
            "special phenomenon/mechanism": cls.SPECIAL_MECHANISM,
            "unresolved error": cls.UNSOLVED_ERROR,
            "helper method": cls.USEFUL_HELPER_METHOD,
        }
        for member in cls:
            if member.value.lower() == key:
                return member
        if key in aliases:
            return aliases[key]
        names = ", ".join(repr(m.value) for m in cls)
        raise ValueError(f"unknown rule type {text!r}; use one of {names}")


SUCCESS_TYPES = frozenset({RuleType.SUCCESS_PROCESS, RuleType.USEFUL_HELPER_METHOD})
"""Rule types that describe what works: never written from a failed episode."""


class Outcome(StrEnum):
    """How a planner episode ended (AutoManual, Fig. 2)."""

    DIRECT_SUCCESS = "direct_success"  # succeeded with no error on the way
    INDIRECT_SUCCESS = "indirect_success"  # errors first, then success
    FAILURE = "failure"

    @property
    def succeeded(self) -> bool:
        return self is not Outcome.FAILURE


class Diagnosis(StrEnum):
    """The builder's verdict on where the main error came from (Fig. 3)."""

    IMPERFECT_RULES = "rules"
    IMPERFECT_AGENT = "agent"


@dataclass(slots=True)
class Rule:
    """One rule of the rule system.

    ``rule_id`` is ``rule_N``: assigned by the system, stable, never reused.
    ``content`` starts with the scope where the rule applies. ``logs`` is the
    validation log: short entries naming the episodes and rules the rule came
    from or was checked against (only the last few are kept).
    """

    rule_id: str
    type: RuleType
    content: str
    example: str = ""
    logs: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["type"] = self.type.value
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Rule:
        return cls(
            rule_id=str(d["rule_id"]),
            type=RuleType.parse(d["type"]),
            content=str(d["content"]),
            example=str(d.get("example", "")),
            logs=[str(x) for x in d.get("logs", [])],
        )


@dataclass(slots=True)
class PlannerTurn:
    """One answer of the planner and what running its code did.

    ``analysis``, ``related_rules``, ``plan`` and ``code`` are the answer's
    four parts; ``feedback`` is what the next turn starts from (each action's
    result, printed output, the error with its line). ``error`` is the
    sandbox's error kind (``AssertionFailed``, ``CodeError``, ...) or None.
    """

    answer: str
    analysis: str = ""
    related_rules: list[str] = field(default_factory=list)
    plan: str = ""
    code: str = ""
    feedback: str = ""
    error: str | None = None
    actions: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PlannerTurn:
        return cls(**{k: d[k] for k in cls.__slots__ if k in d})


@dataclass(slots=True)
class PlannerEpisode:
    """The planner's trajectory: task, opening, turns, outcome and conclusion.

    ``conclusion`` is the planner's closing answer; ``skill_code`` the code
    block it organised for a success (empty for a failure), ``reflection``
    its reflection for a failure (or the mistakes of an indirect success).
    """

    episode_id: str
    task_type: str
    goal: str
    opening: str
    turns: list[PlannerTurn] = field(default_factory=list)
    outcome: Outcome = Outcome.FAILURE
    conclusion: str = ""
    skill_code: str = ""
    reflection: str = ""

    @property
    def error_steps(self) -> int:
        """The turns that did not end the task (the paper's Avg. Error Steps, Table 3:
        at most 4 with 3 replans): all of a failure's, all but the last of a success's."""
        return len(self.turns) - (0 if self.outcome is Outcome.FAILURE else 1)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["outcome"] = self.outcome.value
        d["turns"] = [t.to_dict() for t in self.turns]
        d["error_steps"] = self.error_steps  # derived; from_dict recomputes it
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PlannerEpisode:
        return cls(
            episode_id=str(d["episode_id"]),
            task_type=str(d["task_type"]),
            goal=str(d["goal"]),
            opening=str(d["opening"]),
            turns=[PlannerTurn.from_dict(t) for t in d.get("turns", [])],
            outcome=Outcome(d.get("outcome", "failure")),
            conclusion=str(d.get("conclusion", "")),
            skill_code=str(d.get("skill_code", "")),
            reflection=str(d.get("reflection", "")),
        )
