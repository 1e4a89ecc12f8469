"""The env contract, the registry and check_env (on every registered env)."""

from __future__ import annotations

import pytest

from lorekit.envs import (
    EnvCheckError,
    Observation,
    Step,
    Task,
    TextEnv,
    UnknownEnvError,
    check_env,
    list_envs,
    make,
    register,
)
from lorekit.envs.textcraft.sources import DEFAULT_DATAPACK_DIR
from lorekit.registry import Registry


@pytest.mark.parametrize("name", [name for name, _ in list_envs()])
def test_check_env_passes_for_every_registered_env(name: str) -> None:
    check_env(make(name))


@pytest.mark.parametrize("compat", [False, True], ids=["friendly", "compat"])
def test_check_env_textcraft_sources_and_modes(source: str, compat: bool) -> None:
    if compat and not DEFAULT_DATAPACK_DIR.is_dir():
        pytest.skip("compat mode plays the recipe data pack, which is not present")
    check_env(make("textcraft", source=source, compat=compat), episodes=4, seed=7)


def test_textcraft_is_registered_with_description() -> None:
    names = dict(list_envs())
    assert names.get("textcraft")


def test_make_unknown_name_lists_known() -> None:
    with pytest.raises(UnknownEnvError, match=r"known envs: .*textcraft"):
        make("no-such-env")


def test_make_bad_kwargs_lists_accepted() -> None:
    with pytest.raises(TypeError, match=r"'textcraft'.*colour.*accepted: source"):
        make("textcraft", colour="blue")


def test_register_refuses_duplicates() -> None:
    with pytest.raises(ValueError, match="already registered"):
        register("textcraft", lambda: make("textcraft"), "dup")


def test_register_by_import_string_imports_only_when_needed(registry: Registry) -> None:
    register("toy-lazy", f"{__name__}:_ToyEnv", "a toy named by import string")
    assert ("toy-lazy", "a toy named by import string") in list_envs()
    assert isinstance(make("toy-lazy"), _ToyEnv)
    with pytest.raises(TypeError, match=r"'toy-lazy'.*colour.*accepted: raise_on_junk"):
        make("toy-lazy", colour="blue")
    register("toy-gone", "lorekit_test_absent_package.envs:Gone", "missing", extra="gone")
    with pytest.raises(ImportError, match=r"'toy-gone' environment needs the gone extra"):
        make("toy-gone")


@pytest.mark.parametrize("target", ["no_colon_here", ":attribute"])
def test_register_refuses_a_malformed_import_string(target: str) -> None:
    with pytest.raises(ValueError, match=r"package\.module:attribute"):
        register("toy-bad", target, "bad")


class _ToyEnv(TextEnv):
    """A tiny env whose flaws tests switch on to see check_env catch them."""

    name = "toy"
    max_steps = 5

    def __init__(self, *, raise_on_junk: bool = False, nondeterministic: bool = False) -> None:
        self.raise_on_junk = raise_on_junk
        self.nondeterministic = nondeterministic
        self.counter = 0
        self.done = False
        self.steps = 0

    def reset(self, task: Task | str | None = None, seed: int | None = None) -> Observation:
        self.done, self.steps = False, 0
        return Observation("Say 'win'.")

    def step(self, action: str) -> Step:
        if self.done:
            return Step("over", 0.0, True, {"valid": False, "success": False})
        self.steps += 1
        self.counter += 1
        if self.raise_on_junk and action not in ("win", "wait"):
            raise ValueError("junk")
        won = action == "win"
        self.done = won or self.steps >= self.max_steps
        text = f"you said {action[:10]!r}" + (f" #{self.counter}" if self.nondeterministic else "")
        return Step(text, float(won), self.done, {"valid": True, "success": won})

    def tasks(self, split: str = "test") -> list[Task]:
        return [Task("t1", "win", "all")]

    def splits(self) -> tuple[str, ...]:
        return ("test",)

    def action_forms(self) -> list[str]:
        return ["win", "wait"]

    def manual(self) -> str:
        return "Say win."


def test_check_env_accepts_a_correct_toy() -> None:
    check_env(_ToyEnv())


def test_check_env_catches_exceptions_on_junk() -> None:
    with pytest.raises(EnvCheckError, match="raised ValueError"):
        check_env(_ToyEnv(raise_on_junk=True))


def test_check_env_catches_nondeterminism() -> None:
    with pytest.raises(EnvCheckError, match="differs"):
        check_env(_ToyEnv(nondeterministic=True))
