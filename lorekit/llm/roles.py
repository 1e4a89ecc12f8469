"""Named roles: which model plays planner, executor, builder, ...

An agent asks for ``roles["planner"]``; a run config decides what that is.
A role that is not configured falls back to the default role, so a one-model
run needs only ``default``. Asking for a role when there is neither that role
nor a default is an error that lists what is configured.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from lorekit.llm.accounting import MeteredLLM, UsageLedger
from lorekit.llm.base import LLM
from lorekit.llm.calls import CallSink

DEFAULT_ROLE = "default"


class Roles(Mapping[str, LLM]):
    """A read-only mapping from role name to model, with a default."""

    def __init__(self, models: Mapping[str, LLM] | LLM, default: str = DEFAULT_ROLE) -> None:
        if isinstance(models, Mapping):
            self._models: dict[str, LLM] = dict(models)
        else:
            self._models = {default: models}
        self.default = default

    def __getitem__(self, role: str) -> LLM:
        model = self._models.get(role)
        if model is not None:
            return model
        model = self._models.get(self.default)
        if model is not None:
            return model
        known = ", ".join(sorted(self._models)) or "none"
        raise KeyError(
            f"no model for role {role!r} and no {self.default!r} role (configured: {known})"
        )

    def __contains__(self, role: object) -> bool:
        return role in self._models or self.default in self._models

    def __iter__(self) -> Iterator[str]:
        return iter(self._models)

    def __len__(self) -> int:
        return len(self._models)

    def metered(self, ledger: UsageLedger, sink: CallSink | None = None) -> Roles:
        """The same models, each wrapped to count into ``ledger`` under its own
        role name and to report its calls to ``sink``.

        Roles that fall back to the default are metered under the name they
        were asked by, so a report separates planner from executor even when
        both use one model.
        """
        return _MeteredRoles(self, ledger, sink)


class _MeteredRoles(Roles):
    def __init__(self, base: Roles, ledger: UsageLedger, sink: CallSink | None) -> None:
        super().__init__(dict(base._models), base.default)
        self._base = base
        self._ledger = ledger
        self._sink = sink
        self._wrapped: dict[str, MeteredLLM] = {}

    def __getitem__(self, role: str) -> LLM:
        wrapped = self._wrapped.get(role)
        if wrapped is None:
            wrapped = MeteredLLM(self._base[role], role, self._ledger, self._sink)
            self._wrapped[role] = wrapped
        return wrapped
