"""``make("crafter", tasks=...)``: runs of only the achievement tasks or only score episodes."""

from __future__ import annotations

import pytest

from lorekit.envs import make


def test_task_kinds_filter_the_catalogue_but_not_reset() -> None:
    every = make("crafter").tasks("dev")
    score = make("crafter", tasks="score")
    achievement = make("crafter", tasks="achievement")
    assert {t.data["kind"] for t in score.tasks("dev")} == {"score"}
    assert {t.data["kind"] for t in achievement.tasks("dev")} == {"achievement"}
    assert len(score.tasks("dev")) + len(achievement.tasks("dev")) == len(every)
    assert score.tasks("test")[0].id == "score/seed-0"
    # any task can still be played by id
    first = score.reset("collect_wood/seed-0")
    assert "collect_wood" in first.text
    with pytest.raises(ValueError, match="tasks must be one of all, achievement, score"):
        make("crafter", tasks="scores")
