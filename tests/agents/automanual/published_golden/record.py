"""Record what the authors' testing stage does with the published skills (``outcomes.json``).

Usage, from the repository root, with LoreKit's virtual environment and a
checkout of the original outside the repository::

    PYTHONPATH=. .venv/bin/python tests/agents/automanual/published_golden/record.py \
        /tmp/automanual-orig ../shared/data tests/agents/automanual/published_golden/outcomes.json

Each ALFWorld game of AutoManual's official copy is played by the original's
``test_trial.run`` (its ``Agent``, ``InteractEnv``, namespace and 5-answer
loop) on TextWorld with the original's own ALFWorld package (its name
demangler), the planner answering with the published skill of the game's type
adapted by :func:`lorekit.agents.automanual.testing.published.adapt_alfworld`,
the same function LoreKit's scripted planner uses. What is kept per game: the
outcome, the answers used and the commands the engine received. See README.md.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from original import _Worker, importable, install_stand_ins, quiet

from lorekit.agents.automanual.testing.published import adapt_alfworld


class _OneGame:
    """A single TextWorld game with the batch-of-one interface the original's wrapper calls."""

    def __init__(self, env: Any, gamefile: str, max_steps: int = 50) -> None:
        self.env, self.gamefile, self.max_steps = env, gamefile, max_steps
        self.steps = 0
        self.commands: list[str] = []

    def reset(self) -> tuple[list[str], dict[str, list[Any]]]:
        state = self.env.reset()
        return [state.feedback], {"won": [state["won"]], "extra.gamefile": [self.gamefile]}

    def step(
        self, commands: list[str]
    ) -> tuple[list[str], list[float], list[bool], dict[str, Any]]:
        state, score, done = self.env.step(commands[0])
        self.commands.append(commands[0])
        self.steps += 1
        over = done or self.steps >= self.max_steps
        return [state.feedback], [score], [over], {"won": [state["won"]]}


def alfworld_games(shared: Path) -> list[Path]:
    """The official games as LoreKit lists them (AutoManual's copy, its test split)."""
    from lorekit.envs import make

    env = make(
        "alfworld",
        source="official",
        variant="automanual",
        split="test",
        data_dir=str(shared / "alfworld-2.1.1"),
    )
    try:
        return [Path(t.data["path"]) for t in env.tasks("test")]
    finally:
        env.close()


def record_alfworld(original: Path, shared: Path) -> dict[str, Any]:
    games = alfworld_games(shared)
    install_stand_ins()
    importable(original / "alfworld", original / "automanual_alfworld")
    for name in [m for m in sys.modules if m == "alfworld" or m.startswith("alfworld.")]:
        del sys.modules[name]  # the original's own package, not the installed one
    import textworld
    from alfworld.agents.utils.misc import Demangler  # the original's: ids like mug_1

    trial = importlib.import_module("test_trial")
    utils = importlib.import_module("autobuild_utils")
    history = importlib.import_module("env_history")

    class Demangle(textworld.core.Wrapper):  # the original's wrapper, on TextWorld 1.7's API
        def load(self, *args: Any, **kwargs: Any) -> None:
            super().load(*args, **kwargs)
            names = Demangler(game_infos=self._entity_infos, shuffle=False)
            for info in self._entity_infos.values():
                info.name = names.demangle_alfred_name(info.id)

    trial.get_ChatGPT_Agent = lambda *a, **k: _Worker()
    published = shared / "published-runs" / "automanual" / "alfworld"
    rules = utils.Rule_Manager({}, save_path=str(published))
    rules.load(save_path=str(published))
    skills = utils.Skill_Bank(save_path=str(published))
    skills.load(save_path=str(published))
    args = argparse.Namespace(
        agent_type="autobuild_case",
        simple_example=False,
        model_name="scripted",
        assistant_api=False,
    )
    infos = textworld.EnvInfos(won=True, admissible_commands=True, extras=["gamefile"])
    out = []
    for z, game in enumerate(games):
        gamefile = str(game / "game.tw-pddl")
        raw = _OneGame(textworld.start(gamefile, infos, wrappers=[Demangle]), gamefile)
        ob, _info = raw.reset()
        ob_text = "\n".join(ob[0].split("\n\n")[1:]).replace("put a clean", "put a cleaned")
        name = "/".join(gamefile.split("/")[-3:-1])
        env = history.InteractEnv(raw, z, name, 0, ob_text)
        skill = skills.skill_dict[env.task_type]
        _Worker.plan = [adapt_alfworld(skill["skill_code"], skill["task_name"], ob_text)]
        success, step, _tokens = quiet(lambda env=env: trial.run(args, env, rules, skills))
        out.append(
            {"game": name, "success": bool(success), "answers": step + 1, "commands": raw.commands}
        )
        raw.env.close()
    return {"alfworld": out}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("original", type=Path, help="checkout of minghchen/automanual")
    parser.add_argument("shared", type=Path, help="the project's shared/data folder")
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    found = record_alfworld(args.original.resolve(), args.shared.resolve())
    args.out.write_text(json.dumps(found, indent=1) + "\n", encoding="utf-8")
    won = sum(g["success"] for g in found["alfworld"])
    print(f"alfworld: {won} of {len(found['alfworld'])} games won")


if __name__ == "__main__":
    main()
