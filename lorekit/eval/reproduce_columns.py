"""What one column of a published table measures, as an experiment file declares it.

A table's columns are not always one metric over task groups: ADaPT's Table 3
puts the decomposition depth (k_max) beside the success rate, AgentKit's
Table 1 the Crafter score beside the reward, AutoManual's Table 3 the error
steps. A column may therefore name its own ``metric`` and where each episode's
``value`` is read; :mod:`lorekit.eval.reproduce` reads it through
:func:`parse_column` and :mod:`lorekit.eval.reproduce_compare` computes it.
Values are read by path from the recorded episode, so the harness stays
ignorant of the agent or env that wrote them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NoReturn, Protocol

METRICS = ("success_rate", "mean_reward")
"""What a table measures by default: the share of episodes that succeeded (in
percent), or the mean episode reward (times the experiment's ``scale``)."""
COLUMN_METRICS = (*METRICS, "mean", "crafter_score", "usd")
"""What one column may measure instead (its ``metric``): besides the two above,
``mean`` of a per-episode ``value`` (a number; a list or a mapping counts its
entries that are set, e.g. achievements unlocked), ``crafter_score``, the
geometric mean with a 1% offset of the rates (percent) at which each key of a
per-episode mapping ``value`` is positive (Crafter's score over its
achievements, Hafner 2021), and ``usd``, what the row's model calls cost at the
price table, per the experiment's ``episodes`` (AgentKit's cost column; priced
from the store by :func:`lorekit.eval.reproduce_plan.priced_cells`, no interval)."""
VALUE_METRICS = ("mean", "crafter_score")
"""The metrics that read a ``value`` per episode."""
FIELDS = ("reward", "steps")
PATH_ROOTS = ("info.", "last_step.")
"""Where a column's ``value`` is read: the episode's ``reward`` or ``steps``, a
dotted path into the episode's recorded info (the agent's notes are under
``info.notes``), or into the info of its last step (the env's final state)."""
OVER = ("all", "successes")
"""Which finished episodes a column counts: all, or only the successful ones
(a figure "to succeed", such as ADaPT's k_max)."""
_FIELDS = {
    "name": True,
    "group": False,
    "metric": False,
    "value": False,
    "over": False,
    "default": False,
    "scale": False,
    "detect": False,
}


@dataclass(frozen=True, slots=True)
class Column:
    """A column of the table: all episodes, or those of one task group, measured by
    the table's metric or the column's own (see :data:`COLUMN_METRICS`)."""

    name: str
    group: str | None = None
    metric: str | None = None
    """None: the experiment's ``metric``."""
    value: str | None = None
    """For ``mean`` and ``crafter_score``: where each episode's value is read."""
    over: str = "all"
    default: float | None = None
    """For ``mean``: an episode's value where ``value`` is absent (e.g. 1 for the
    depth of an agent that never decomposes); None leaves such an episode out."""
    scale: float | None = None
    """For ``mean_reward`` and ``mean``: a factor (None: the experiment's ``scale``
    for ``mean_reward``, 1 for ``mean``)."""
    detect: float | None = None
    """The smallest difference from the published figure that matters, in the column's
    units (None: 10 points on a percent figure, else 10% of the published figure); a
    comparison that could not see one says "too few episodes"."""

    @property
    def reads_last_step(self) -> bool:
        """Whether computing it needs each episode's last step (not only the episode)."""
        return self.value is not None and self.value.startswith("last_step.")


class Where(Protocol):
    """How the loader reports a mistake (it names the file and the field)."""

    def fail(self, at: str, message: str) -> NoReturn: ...
    def mapping(self, value: Any, at: str, fields: Mapping[str, bool]) -> dict[str, Any]: ...
    def text(self, data: Mapping[str, Any], key: str, at: str = "") -> str: ...
    def optional_text(self, data: Mapping[str, Any], key: str, at: str = "") -> str | None: ...


def _is_number(value: Any) -> bool:
    return type(value) in (int, float)


def parse_column(where: Where, value: Any, at: str) -> Column:
    """One entry of ``columns``, checked strictly: a metric that reads a value must
    say where; fields that mean nothing for the metric are refused."""
    data = where.mapping(value, at, _FIELDS)
    metric = where.optional_text(data, "metric", f"{at}.")
    if metric is not None and metric not in COLUMN_METRICS:
        where.fail(f"{at}.metric", f"expected one of {', '.join(COLUMN_METRICS)}, got {metric!r}")
    path = where.optional_text(data, "value", f"{at}.")
    if metric in VALUE_METRICS and path is None:
        where.fail(f"{at}.value", f"missing: metric {metric} reads a value per episode")
    if metric not in VALUE_METRICS and path is not None:
        where.fail(f"{at}.value", f"metric {metric or '(the table’s)'} reads no value")
    if path is not None and not (
        path in FIELDS or any(path.startswith(r) and len(path) > len(r) for r in PATH_ROOTS)
    ):
        where.fail(f"{at}.value", f"expected reward, steps, info.PATH or last_step.PATH: {path!r}")
    over = data.get("over", "all")
    if over not in OVER:
        where.fail(f"{at}.over", f"expected one of {', '.join(OVER)}, got {over!r}")
    default = data.get("default")
    if default is not None and (metric != "mean" or not _is_number(default)):
        where.fail(f"{at}.default", f"a number, for metric mean only; got {default!r}")
    scale = data.get("scale")
    if scale is not None and (
        metric not in ("mean", "mean_reward") or not _is_number(scale) or scale <= 0
    ):
        where.fail(f"{at}.scale", f"a positive number, for mean or mean_reward only; got {scale!r}")
    detect = data.get("detect")
    if detect is not None and (not _is_number(detect) or detect <= 0):
        where.fail(f"{at}.detect", f"a positive number (in the column's units); got {detect!r}")
    return Column(
        where.text(data, "name", f"{at}."),
        where.optional_text(data, "group", f"{at}."),
        metric,
        path,
        str(over),
        None if default is None else float(default),
        None if scale is None else float(scale),
        None if detect is None else float(detect),
    )


def read_path(episode: Any, path: str) -> Any:
    """The value at ``path`` of a recorded episode (see :data:`FIELDS`, :data:`PATH_ROOTS`);
    None where it is absent. ``last_step.`` reads the episode's ``last_step_info``."""
    if path in FIELDS:
        return getattr(episode, path, None)
    root, _, rest = path.partition(".")
    node: Any = getattr(episode, "info" if root == "info" else "last_step_info", None)
    for key in rest.split("."):
        if not isinstance(node, Mapping) or key not in node:
            return None
        node = node[key]
    return node


def as_number(value: Any) -> float | None:
    """A recorded value as a number: numbers and booleans as such, a list by its
    length, a mapping by its entries that are set (positive or true)."""
    if isinstance(value, bool):
        return float(value)
    if _is_number(value):
        return float(value)
    if isinstance(value, list):
        return float(len(value))
    if isinstance(value, Mapping):
        return float(sum(1 for v in value.values() if (as_number(v) or 0.0) > 0))
    return None
