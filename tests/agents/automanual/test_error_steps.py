"""The planner's error steps (AutoManual's Table 3, Avg. Error Steps): the turns that
did not end the task, kept in the episode's notes for ``lorekit reproduce``."""

from __future__ import annotations

from lorekit.agents.automanual.core import Outcome, PlannerEpisode, PlannerTurn


def _episode(turns: int, outcome: Outcome) -> PlannerEpisode:
    ep = PlannerEpisode("e", "put", "goal", "opening")
    ep.turns = [PlannerTurn(f"answer {i}") for i in range(turns)]
    ep.outcome = outcome
    return ep


def test_error_steps_count_the_turns_that_did_not_end_the_task() -> None:
    assert _episode(1, Outcome.DIRECT_SUCCESS).error_steps == 0
    assert _episode(3, Outcome.INDIRECT_SUCCESS).error_steps == 2
    assert _episode(4, Outcome.FAILURE).error_steps == 4


def test_error_steps_are_in_the_notes_and_read_back() -> None:
    ep = _episode(3, Outcome.INDIRECT_SUCCESS)
    d = ep.to_dict()
    assert d["error_steps"] == 2
    assert PlannerEpisode.from_dict(d) == ep
