"""A planner episode as text, for the builder, the consolidator and ``get_trajectory``.

The builder judges an episode from what the planner thought, wrote and saw, so
every turn is shown with its analysis, code and feedback. Long parts are cut
in the middle with a marker: the head says what was tried, the tail how it
ended, and a prompt must stay bounded whatever a model or a page produced.
"""

from __future__ import annotations

from lorekit.agents.automanual.core import PlannerEpisode
from lorekit.agents.automanual.planner_parse import sections

PART_CHARS = 3_000
TRAJECTORY_CHARS = 24_000


def clip(text: str, limit: int = PART_CHARS) -> str:
    """``text`` cut to about ``limit`` characters, keeping its head and tail."""
    text = text.strip()
    if len(text) <= limit:
        return text
    half = max(limit // 2 - 20, 1)
    return f"{text[:half]}\n... [{len(text) - 2 * half} characters cut] ...\n{text[-half:]}"


def render_trajectory(episode: PlannerEpisode, *, limit: int = TRAJECTORY_CHARS) -> str:
    """The episode's task, turns (analysis, related rules, plan, code, feedback) and conclusion."""
    lines = [
        f"Episode: {episode.episode_id}",
        f"Task type: {episode.task_type}",
        "Opening observation:",
        clip(episode.opening),
    ]
    for number, turn in enumerate(episode.turns, 1):
        lines.append(f"\n### Turn {number}")
        if turn.analysis:
            lines.append(f"Analysis: {clip(turn.analysis, 1_500)}")
        said = sections(turn.answer).get("rules", "").strip() if turn.answer else ""
        if said and said.lower() != "none":  # the ids with the planner's comments on them
            lines.append(f"Related rules: {clip(said, 1_500)}")
        elif turn.related_rules:
            lines.append(f"Related rules: {', '.join(turn.related_rules)}")
        if turn.plan:
            lines.append(f"Plan: {clip(turn.plan, 1_500)}")
        lines.append("Code:\n```python\n" + clip(turn.code or "(no code)") + "\n```")
        lines.append("Feedback:\n" + clip(turn.feedback or "(none)"))
    lines.append(f"\nOutcome: {episode.outcome.value}")
    if episode.conclusion:
        lines.append("Conclusion of the agent:\n" + clip(episode.conclusion))
    return clip("\n".join(lines), limit)
