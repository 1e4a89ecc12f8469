"""AutoManual's formulating stage as a library call: a stored build's rules become a
Markdown manual, saved with the build as its next manual version.

``lorekit automanual formulate`` and ``lorekit reproduce``'s build stage both
end here, so the formulator sees the same world text and its calls are
recorded the same way: as run-level model calls of the build (they belong to
no episode), which ``lorekit runs show`` and the cost guard count.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lorekit.agents.automanual.manuals import Manual
from lorekit.llm.accounting import PriceTable
from lorekit.llm.roles import Roles


@dataclass(frozen=True, slots=True)
class Formulated:
    """A manual just formulated: the manual, its version and how many rules it covers."""

    manual: Manual
    version: int
    rules: int


def world_text(env_name: str) -> str:
    """The env's title and code API as the formulator is told them ("" for an env
    AutoManual has no profile of)."""
    from lorekit.agents.automanual.profiles import profile_for

    try:
        profile = profile_for(env_name)
    except ValueError:
        return ""
    return f"{profile.title}. The agent's code calls:\n{profile.api_text}"


async def formulate_build(
    store_path: str | Path,
    build: str,
    models: Roles | Callable[[], Roles],
    *,
    prices: PriceTable | None = None,
    keep_existing: bool = False,
) -> Formulated | None:
    """Formulate build ``build``'s current rules (a run in the store at ``store_path``).

    ``models`` holds the ``formulator`` role, or makes it: a callable is called
    only once there is something to formulate. Returns None, asking no model,
    when the build has no rules (a planner-lib build tests with its skills
    alone), or with ``keep_existing`` when a manual is saved already (a resumed
    reproduction). Raises :class:`~lorekit.agents.automanual.formulator.FormulatorError`
    when the formulator gives no usable manual."""
    from lorekit.agents.automanual.formulator import Formulator
    from lorekit.agents.automanual.manuals import latest_manual, save_manual
    from lorekit.agents.automanual.rules import RuleSystem
    from lorekit.agents.automanual.store import open_db
    from lorekit.eval.store import RunStore
    from lorekit.llm.accounting import UsageLedger

    db = open_db(store_path)
    try:
        system = RuleSystem(db, build)
        rules = system.rules()
        if not rules or (keep_existing and latest_manual(db, build) is not None):
            return None
        roles = models if isinstance(models, Roles) else models()
        with RunStore(store_path) as runs:
            runs.lock_run(build)  # not while the build plays, nor two manuals at once
            info = runs.get_run(build)
            world = world_text(info.env if info is not None else "")
            metered = roles.metered(
                UsageLedger(prices), lambda record: runs.add_run_llm_call(build, record)
            )
            formulator = Formulator(metered, world=world)
            manual = await formulator.formulate(rules, rules_version=system.version)
        return Formulated(manual, save_manual(db, build, manual), len(rules))
    finally:
        db.close()
