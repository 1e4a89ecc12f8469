"""What AutoManual's planner is told about each environment, kept as YAML.

The planner's prompts are the same for every env except for a few pieces:
its role, the ``agent`` object's methods, helper functions defined before its
code runs, the human examples (one, ``example:``, or several, ``examples:``), the
rules derived from the first example, and a few budgets. Those live in
``env_profiles/<env>.yaml``; this module loads them into an :class:`EnvProfile`.

The method list shown to the planner is derived from the code API class
(signature and first docstring line of each exposed method), so it cannot
drift from what the sandbox actually lets the code call.
"""

from __future__ import annotations

import ast
import functools
import inspect
import pkgutil
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Literal

from lorekit import yamlio
from lorekit.agents.automanual.core import RuleType
from lorekit.envs.asyncenv import AsyncEnv
from lorekit.envs.base import TextEnv
from lorekit.sandbox import Limits

_PACKAGE = "lorekit.agents.automanual"


class ProfileError(ValueError):
    """A profile file is missing, or a field in it is wrong."""


@dataclass(frozen=True)
class ExampleTurn:
    """One answer of the human example and, if it goes on, the feedback it got."""

    answer: str
    feedback: str = ""


@dataclass(frozen=True)
class Example:
    """A human example: one task played in the answer format, with the feedback it got."""

    task_type: str
    task_id: str
    task: str
    turns: tuple[ExampleTurn, ...]


@dataclass(frozen=True)
class FeedbackStyle:
    """How a turn's actions are shown back to the planner.

    ``observation``: each action with the text it returned (ALFWorld);
    ``verdict``: each action as done or failed, and the page once at the end
    (MiniWoB++, whose actions return whole pages).
    """

    action_results: Literal["observation", "verdict"] = "observation"
    result_chars: int = 600
    show_page: bool = False
    page_chars: int = 8_000


@dataclass(frozen=True)
class EnvProfile:
    """Everything env-specific the planner needs; see ``env_profiles/alfworld.yaml``."""

    env: str
    title: str
    role: str
    api_class: str
    api_methods: tuple[str, ...]
    api_intro: str
    helpers: str
    examples: tuple[Example, ...]
    """The human examples, all shown in the planner's system prompt (as the
    authors' code shows its list of examples); the first is the one the initial
    rules come from."""
    initial_rules: tuple[Mapping[str, str], ...]
    """The rules read off the example, as data for seeding a rule system: each a
    mapping with ``rule``, ``type`` (a :class:`RuleType` value) and ``example``."""
    max_replans: int
    env_options: Mapping[str, Any] = field(default_factory=dict)
    limits: Limits = field(default_factory=Limits)
    feedback: FeedbackStyle = field(default_factory=FeedbackStyle)
    goal_pattern: str = ""
    api_options: Mapping[str, Any] = field(default_factory=dict)
    """Keyword arguments for the code API's constructor (``api.options``), such as
    MiniWoB++'s ``raise_on_failure``."""
    api_aliases: tuple[str, ...] = ()
    """Methods the code may call that the prompt does not list (``api.aliases``:
    other names of listed ones)."""
    api_attributes: Mapping[str, str] = field(default_factory=dict)
    """State the code reads as attributes (``agent.holding``), name to description
    (``api.attributes``); the code API's ``state()`` gives their values."""
    test_max_replans: int | None = None
    """Replans in the testing stage (``test_max_replans``; default ``max_replans``):
    the authors' code answers 3 times at build and 5 at test on ALFWorld."""
    paper_max_replans: int | None = None
    """The paper's "replan at most N times" (``paper_max_replans``), which its code
    does not follow: what ``max_replans="paper"`` asks for, at build or test."""
    build_helpers: str = ""
    """Helper functions defined at build time only, after ``helpers``."""
    retriever: str = "bm25"
    """How a skill of another type is picked when the task's type has none
    (``retriever``): ``bm25``, or ``type`` (never: the authors' MiniWoB++ rule)."""
    skill_opening: bool = False
    """Whether a skill keeps (and the prompt shows) where its task began: the first
    line of its opening (``skill_opening``; ALFWorld's room, as the authors' code)."""
    opening_form: str = "env"
    """``env``: the first observation as the env gives it; ``published``: as the
    authors' code showed it (see :meth:`opening`)."""

    def replans(self, value: int | str | None, *, testing: bool) -> int:
        """Replans for one stage: the profile's own (None), the paper's (``"paper"``)
        or ``value`` (see :func:`parse_replans`)."""
        chosen = parse_replans(value)
        if chosen is None:
            if testing and self.test_max_replans is not None:
                return self.test_max_replans
            return self.max_replans
        if chosen == PAPER:
            if self.paper_max_replans is None:
                raise ProfileError(f"max_replans: the {self.env} profile has no paper figure")
            return self.paper_max_replans
        return int(chosen)

    @property
    def example(self) -> Example:
        """The first human example (the one the initial rules were read off)."""
        return self.examples[0]

    def first_examples(self, count: int | None = None) -> tuple[Example, ...]:
        """The first ``count`` human examples (all when None): what a planner shows."""
        held = len(self.examples)
        if count is None:
            return self.examples
        if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= held:
            raise ValueError(
                f"examples must be a whole number from 1 to {held} (the {self.env} "
                f"profile's human examples), got {count!r}"
            )
        return self.examples[:count]

    def api_type(self) -> type[Any]:
        """The code API class named by ``api.class`` (imported on first use)."""
        try:
            cls = pkgutil.resolve_name(self.api_class)
        except (ImportError, AttributeError, ValueError) as exc:
            raise ProfileError(
                f"env_profiles/{self.env}.yaml: api.class {self.api_class!r} "
                f"cannot be imported ({exc})"
            ) from exc
        if not isinstance(cls, type):
            raise ProfileError(
                f"env_profiles/{self.env}.yaml: api.class {self.api_class!r} is not a class"
            )
        return cls

    def code_api(self, env: AsyncEnv | TextEnv) -> Any:
        """A fresh code API object for one episode (build it on the env's event loop)."""
        return self.api_type()(env, **self.api_options)

    def api_description(self) -> str:
        """One line per exposed method: ``agent.go_to(recep: str) -> str  # what it does``."""
        cls = self.api_type()
        lines = []
        for name in self.api_methods:
            method = getattr(cls, name, None)
            if not callable(method) or name.startswith("_"):
                raise ProfileError(
                    f"env_profiles/{self.env}.yaml: api.methods names {name!r}, "
                    f"which {cls.__name__} does not have"
                )
            signature = inspect.signature(method)
            params = ", ".join(
                f"{p.name}: {_annotation(p.annotation)}"
                for p in signature.parameters.values()
                if p.name != "self"
            )
            returns = _annotation(signature.return_annotation)
            lines.append(f"agent.{name}({params}) -> {returns}  # {_first_line(method.__doc__)}")
        for name, what in self.api_attributes.items():
            lines.append(f"agent.{name}: str  # {what}")
        return "\n".join(lines)

    @property
    def callable_methods(self) -> tuple[str, ...]:
        """The methods the sandbox exposes: the listed ones and their aliases."""
        return (*self.api_methods, *self.api_aliases)

    def opening(self, observation: str) -> str:
        """The first observation as the planner is shown it.

        ``published`` (ALFWorld): as the authors' code showed it, without the
        engine's welcome banner, the room and the task on consecutive lines, and
        "put a clean X" read as "put a cleaned X".
        """
        if self.opening_form != "published":
            return observation
        parts = [p.strip() for p in observation.strip().split("\n\n") if p.strip()]
        if parts and parts[0].startswith("-=") and parts[0].endswith("=-"):
            parts = parts[1:]
        return "\n".join(parts).replace("put a clean ", "put a cleaned ")

    @property
    def api_text(self) -> str:
        """The ``agent`` methods and the predefined helpers (the build's too), for the
        builder's and formulator's prompts."""
        helpers = self.helper_description(build=True)
        return self.api_description() + (f"\n{helpers}" if helpers else "")

    def helper_description(self, *, build: bool = False) -> str:
        """One line per preloaded helper function, read from its source (``build``:
        with the build-only ones)."""
        source = self.helpers + ("\n" + self.build_helpers if build else "")
        if not source.strip():
            return ""
        lines = []
        for node in ast.parse(source).body:
            if isinstance(node, ast.FunctionDef):
                args = ", ".join(a.arg for a in node.args.args)
                doc = _first_line(ast.get_docstring(node))
                lines.append(f"{node.name}({args})  # {doc}")
        return "\n".join(lines)

    def goal(self, observation: str) -> str:
        """The task sentence in the first observation, no final period ("" if none is found)."""
        match = re.search(self.goal_pattern, observation) if self.goal_pattern else None
        return match.group(1).strip().rstrip(".") if match else ""


PAPER = "paper"
"""The ``max_replans`` value that asks for the paper's figure instead of the code's."""


def parse_replans(value: object) -> int | str | None:
    """``max_replans`` as given: None, ``"paper"``, or a whole number >= 0 (also as
    text, as ``--agent-opt`` gives it); ``ValueError`` saying what is accepted."""
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip().lower()
        if text == PAPER:
            return PAPER
        if text.isdigit():
            return int(text)
    elif isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    raise ValueError(
        f"max_replans must be a whole number >= 0 or {PAPER!r} (the paper's figure), got {value!r}"
    )


def _first_line(doc: str | None) -> str:
    text = inspect.cleandoc(doc or "").split("\n\n")[0].replace("``", "`")
    return " ".join(text.split()) or "(no description)"


def _annotation(hint: Any) -> str:
    """An annotation as written (the code APIs use postponed, i.e. string, annotations)."""
    if hint is inspect.Parameter.empty:
        return "Any"
    return hint if isinstance(hint, str) else inspect.formatannotation(hint)


def available() -> list[str]:
    """The envs that have a planner profile."""
    folder = resources.files(_PACKAGE).joinpath("env_profiles")
    names = (p.name for p in folder.iterdir())
    return sorted(n.removesuffix(".yaml") for n in names if n.endswith(".yaml"))


@functools.cache
def profile_for(env_name: str) -> EnvProfile:
    """The planner profile of ``env_name``; :class:`ProfileError` naming the known ones if none."""
    source = resources.files(_PACKAGE).joinpath("env_profiles").joinpath(f"{env_name}.yaml")
    if not source.is_file():
        known = ", ".join(available()) or "none"
        raise ProfileError(
            f"AutoManual has no planner profile for env {env_name!r} (profiles exist for: "
            f"{known}); add lorekit/agents/automanual/env_profiles/{env_name}.yaml"
        )
    where = f"env_profiles/{env_name}.yaml"
    data = yamlio.safe_load(source.read_text(encoding="utf-8"), source=where)
    try:
        profile = parse_profile(data, where)
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, ProfileError):
            raise
        raise ProfileError(f"{where}: {exc}") from exc
    if profile.env != env_name:
        raise ProfileError(f"{where}: env is {profile.env!r}, expected {env_name!r}")
    profile.api_description()  # every listed method exists
    for name, code in (("helpers", profile.helpers), ("build_helpers", profile.build_helpers)):
        try:
            ast.parse(code)
        except SyntaxError as exc:
            raise ProfileError(f"{where}: {name} do not parse: {exc}") from exc
    for name in ("max_replans", "test_max_replans", "paper_max_replans"):
        value = getattr(profile, name)
        whole = isinstance(value, int) and not isinstance(value, bool) and value >= 0
        if value is not None and not whole:
            raise ProfileError(f"{where}: {name} must be a whole number >= 0, got {value!r}")
    return profile


def parse_profile(data: Any, where: str) -> EnvProfile:
    """A profile from its YAML data (``where`` names it in errors); fields unchecked
    against the code API, which :func:`profile_for` does after this."""
    if not isinstance(data, dict):
        raise ProfileError(f"{where} must be a mapping of fields")
    api = data["api"]
    if ("example" in data) == ("examples" in data):
        raise ProfileError(f"{where}: give either example (one) or examples (a list), not both")
    listed = [data["example"]] if "example" in data else data["examples"]
    if not isinstance(listed, list) or not listed:
        raise ProfileError(f"{where}: examples must be a non-empty list")
    examples = tuple(_example(e, where) for e in listed)
    seen = [e.task_type for e in examples]
    if len(set(seen)) != len(seen):
        raise ProfileError(f"{where}: two examples share a task type ({', '.join(seen)})")
    max_replans = data["max_replans"]
    if not isinstance(max_replans, int) or isinstance(max_replans, bool) or max_replans < 0:
        raise ProfileError(f"{where}: max_replans must be a whole number >= 0, got {max_replans!r}")
    return EnvProfile(
        env=str(data["env"]),
        title=str(data["title"]).strip(),
        role=str(data["role"]).strip(),
        api_class=str(api["class"]),
        api_methods=tuple(str(m) for m in api["methods"]),
        api_intro=str(api.get("intro", "")).strip(),
        helpers=str(data.get("helpers") or ""),
        examples=examples,
        initial_rules=tuple(
            {
                "rule": str(r["rule"]).strip(),
                "type": RuleType.parse(r["type"]).value,
                "example": str(r.get("example") or ""),
            }
            for r in data["rules"]
        ),
        max_replans=max_replans,
        env_options=dict(data.get("env_options") or {}),
        limits=Limits(**dict(data.get("limits") or {})),
        feedback=FeedbackStyle(**dict(data.get("feedback") or {})),
        goal_pattern=str(data.get("goal_pattern", "")),
        api_options=dict(api.get("options") or {}),
        api_aliases=tuple(str(m) for m in api.get("aliases") or ()),
        api_attributes={str(k): str(v) for k, v in dict(api.get("attributes") or {}).items()},
        opening_form=str(data.get("opening_form", "env")),
        test_max_replans=data.get("test_max_replans"),
        paper_max_replans=data.get("paper_max_replans"),
        build_helpers=str(data.get("build_helpers") or ""),
        skill_opening=bool(data.get("skill_opening", False)),
        retriever=str(data.get("retriever") or "bm25"),
    )


def _example(example: Any, where: str) -> Example:
    turns = tuple(
        ExampleTurn(str(t["answer"]), str(t.get("feedback", ""))) for t in example["turns"]
    )
    if not turns:
        raise ProfileError(f"{where}: example {example.get('task_id')!r} has no turns")
    return Example(str(example["task_type"]), str(example["task_id"]), str(example["task"]), turns)
