"""Agent/env pairs that cannot work are refused before the run; every stop
reason, the step cap's included, shows in the run summary."""

from __future__ import annotations

from pathlib import Path

import pytest
from _cli import run_cli

from lorekit.envs.base import TextEnv
from lorekit.envs.registry import env_has_expert, envs_with_expert, list_envs, make


@pytest.mark.parametrize("env", ["crafter", "crafter-party"])
def test_oracle_on_an_env_without_expert_is_refused_before_the_run(
    env: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "runs.sqlite3"
    code, out, err = run_cli(["run", env, "-a", "oracle", "-n", "1", "--store", str(store)], capsys)
    assert code == 2 and out == ""
    assert f"env {env!r} has no built-in expert" in err
    assert "alfworld, miniwob, textcraft, webshop" in err
    assert not store.exists()  # nothing ran


def test_every_env_says_whether_it_has_an_expert() -> None:
    builtin = {"alfworld", "crafter", "crafter-party", "miniwob", "textcraft", "webshop"}
    # other tests may register envs of their own in this process: check the built-in ones
    assert builtin <= {name for name, _ in list_envs()}
    assert all(env_has_expert(name) is not None for name in builtin)
    # The flag matches the code: the envs that need no extra show it by playing.
    for name in ("textcraft", "webshop"):
        env = make(name)
        env.reset(env.tasks("test")[0])
        assert type(env).expert_action is not TextEnv.expert_action
        assert env.expert_action() is not None
        env.close()
    assert "crafter" not in envs_with_expert()


def test_episodes_cut_by_the_step_cap_say_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["run", "textcraft", "-a", "random", "-n", "3", "--env-opt", "max_steps=2"]
    code, out, err = run_cli([*args, "--store", str(tmp_path / "s"), "--run-id", "r"], capsys)
    assert code == 0, err
    assert "stopped: step_cap 3" in out
    code, out, _ = run_cli(["show", "r", "0", "--store", str(tmp_path / "s")], capsys)
    assert "stop=step_cap" in out
