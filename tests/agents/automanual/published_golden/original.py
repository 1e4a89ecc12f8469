"""Run the authors' own testing stage (their wrappers, namespace and turn loop) on
adapted published skills, for ``record.py``. Needs a checkout of the original
(``minghchen/automanual``) outside this repository; nothing of it is copied here.

The original imports an OpenAI client, tiktoken and langchain's FAISS and
OpenAI embeddings; none of them is needed to play a scripted planner, so they
are replaced by stand-ins before the original's modules load: the planner
answers with the adapted skill (then code that does nothing), and the skill
retrieval returns the task type's own skill, which is what its embedding
search returns whenever the type has one (every type does in the published
run). Everything else (``Agent``, ``InteractEnv``, ``find_object``,
``get_object_with_id``, ``Rule_Manager``, ``Skill_Bank``, ``run``) is the
original's, executed as written.
"""

from __future__ import annotations

import contextlib
import io
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar


class _Doc:
    def __init__(self, text: str) -> None:
        self.page_content = text


class _ExactType:
    """FAISS's stand-in: the nearest of the stored type names is the query's own."""

    def __init__(self, texts: list[str]) -> None:
        self.texts = texts

    @classmethod
    def from_texts(cls, texts: list[str], _embedding: Any) -> _ExactType:
        return cls(list(texts))

    def as_retriever(self, **_kwargs: Any) -> _ExactType:
        return self

    def get_relevant_documents(self, query: str) -> list[_Doc]:
        return [_Doc(query if query in self.texts else self.texts[0])]


class _Worker:
    """The planner's stand-in: the answers of ``plan`` in turn, then ``pass``."""

    plan: ClassVar[list[str]] = []

    def __init__(self) -> None:
        self.turn = 0

    def add_prompt(self, _text: str) -> None:
        pass

    def generate(self, _observation: str) -> str:
        code = self.plan[self.turn] if self.turn < len(self.plan) else "pass"
        self.turn += 1
        return f"Replaying the skill.\n```python\n{code}\n```"

    def consumed_tokens(self) -> str:
        return ""


class _Space:
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass


STAND_INS = (
    "tiktoken",
    "langchain_community",
    "langchain_community.vectorstores",
    "langchain_openai",
    "gym",
    "gym.spaces",
    "gym.envs",
    "gym.envs.registration",
    "bs4",
)


def install_stand_ins() -> None:
    """Modules the original imports but a scripted run never uses: the OpenAI client's
    token counter, langchain's vector store, gym (the MiniWoB++ wrapper only
    subclasses its ``Env`` and declares ``spaces.Box`` shapes) and BeautifulSoup
    (put into the planner's namespace; no published rule or skill calls it)."""
    for name in STAND_INS:
        sys.modules.setdefault(name, types.ModuleType(name))
    modules: dict[str, Any] = dict(sys.modules)
    modules["langchain_community.vectorstores"].FAISS = _ExactType
    modules["langchain_openai"].OpenAIEmbeddings = lambda: None
    modules["gym"].Env = type("Env", (), {})
    modules["gym"].spaces = modules["gym.spaces"]
    modules["gym.spaces"].Box = _Space
    modules["gym.envs.registration"].register = lambda **kwargs: None
    modules["bs4"].BeautifulSoup = _Space


def importable(*folders: Path) -> None:
    """Put the original's folders first on the path for the rest of the process (its
    functions import more of it when they run)."""
    sys.path[:0] = [str(f) for f in folders]


def quiet(fn: Callable[[], Any]) -> Any:
    with contextlib.redirect_stdout(io.StringIO()):
        return fn()
