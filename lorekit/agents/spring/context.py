"""What the SPRING agent knows of Crafter: the ``context`` option's three variants.

The laws paper compares one reasoning frame (SPRING's questions) under
different knowledge; the basic background (how to read an observation) is
always given, and the variant decides what the agent is told about the game:

- ``paper``: the game as crafter's authors describe it, in our words
  (``contexts/paper.md``), followed by what each action needs (materials
  held, stations nearby, no amounts), generated from crafter's data
  (:mod:`.requirements`), as SPRING's context carried it;
- ``actions``: the action names only;
- ``experience:FILE``: an :class:`~lorekit.laws.experience.Experience` JSON
  file (what was learned from records of play), as its ``render()`` puts it.

An experience file is read when the option is parsed, so a wrong path fails
before any episode starts.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources

from lorekit import yamlio
from lorekit.agents.spring.requirements import requirement_lines
from lorekit.registry import REGISTRY

ContextKind = str
"""``paper``, ``actions``, or a registered lore kind (``experience``, from the laws)."""


def contexts() -> tuple[str, ...]:
    """The accepted forms: ``paper``, ``actions`` and ``KIND:FILE`` per registered lore kind."""
    return ("paper", "actions", *(f"{kind}:FILE" for kind in REGISTRY.names("lore")))


@functools.cache
def texts() -> dict[str, str]:
    """The agent's fixed wording (``texts.yaml``)."""
    raw = resources.files("lorekit.agents.spring").joinpath("texts.yaml").read_text("utf-8")
    data = yamlio.safe_load(raw, source="lorekit/agents/spring/texts.yaml")
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise ValueError("lorekit/agents/spring/texts.yaml must map names to strings")
    return data


@functools.cache
def paper_text() -> str:
    """The ``paper`` context: the crafter paper's description of the game in our words
    (``contexts/paper.md``) and the requirement line of every action."""
    files = resources.files("lorekit.agents.spring").joinpath("contexts")
    described = files.joinpath("paper.md").read_text("utf-8").strip()
    lines = "\n".join(f"- {line}" for line in requirement_lines())
    return f"{described}\n\n{texts()['requirements_heading'].strip()}\n{lines}"


@dataclass(frozen=True, slots=True)
class SpringContext:
    """One context variant, ready to render; ``label`` is how runs and notes name it."""

    kind: ContextKind
    label: str
    experience: str = ""

    def knowledge(self, actions: list[str]) -> str:
        """The text given as knowledge of the game, for an env with these ``actions``."""
        if self.kind == "paper":
            return paper_text()
        if self.kind == "actions":
            return texts()["actions_context"].format(names=", ".join(actions)).strip()
        return texts()["experience_heading"].strip() + "\n" + self.experience


def parse_context(value: object) -> SpringContext:
    """The variant ``value`` names; ``ValueError`` with the accepted forms otherwise."""
    text = str(value).strip() if isinstance(value, str) else ""
    if text == "paper":
        return SpringContext("paper", "paper")
    if text == "actions":
        return SpringContext("actions", "actions")
    kind, sep, arg = text.partition(":")
    lore = REGISTRY.find("lore", kind) if sep else None
    if lore is not None:
        if not arg.strip():
            wanted = lore.meta.get("argument") or "the path of a file"
            raise ValueError(f"context={kind}:FILE needs {wanted}")
        label = f"{kind}:{arg.strip()}"
        try:
            rendered = str(lore.load()(arg.strip())).strip()
        except Exception as exc:  # whatever the loader refuses, say it in one line
            raise ValueError(f"context={label}: {exc}") from None
        if not rendered:
            raise ValueError(f"context={label}: the {kind} renders to no text")
        return SpringContext(kind, label, rendered)
    raise ValueError(
        f"context must be one of {', '.join(contexts())}; got {value!r} "
        "(e.g. --agent-opt context=experience:laws.json)"
    )
