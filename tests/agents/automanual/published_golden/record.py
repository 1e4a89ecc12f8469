"""Record what the authors' testing stage does with the published skills (``outcomes.json``).

Usage, from the repository root, with LoreKit's virtual environment and a
checkout of the original outside the repository::

    cd tests/agents/automanual/published_golden && PYTHONPATH=../../../..:/tmp/origdeps \
        ../../../../.venv/bin/python record.py /tmp/automanual-orig ../../../../../shared/data \
        outcomes.json.gz

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
import gzip
import importlib
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from original import _Worker, importable, install_stand_ins, quiet

from lorekit.agents.automanual.testing.published import adapt_alfworld, adapt_text, parts


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


def miniwob_tasks() -> list[tuple[str, int]]:
    """(page, seed) of the MiniWoB++ episodes: 6 per published skill's type, LoreKit's
    test seeds for the pages with feedback."""
    from lorekit.envs import make

    env = make("miniwob", tasks="feedback-9", pages="automanual", episodes_per_task=6)
    try:
        return [(str(t.data["page"]), int(t.data["seed"])) for t in env.tasks("test")]
    finally:
        env.close()


def _chrome(webdriver: Any) -> Any:
    """selenium's Chrome on Debian's Chromium and chromedriver (the original asks
    selenium to find them; this machine has them at fixed places)."""
    from lorekit.envs.miniwob.browser import find_browser

    found = find_browser()
    real = webdriver.Chrome

    def make(options: Any) -> Any:
        from selenium.webdriver.chrome.service import Service

        options.binary_location = found.chromium
        return real(options=options, service=Service(found.chromedriver))

    return make


def record_miniwob(original: Path, shared: Path) -> dict[str, Any]:
    tasks = miniwob_tasks()
    install_stand_ins()
    for name in ("test_trial", "env_history", "autobuild_utils", "OpenAI_Agent_API"):
        sys.modules.pop(name, None)  # ALFWorld's modules of the same names
    sys.path[:] = [p for p in sys.path if "automanual_alfworld" not in p]
    importable(original / "automanual_miniwob")
    from selenium import webdriver

    webdriver.Chrome = _chrome(webdriver)
    trial = importlib.import_module("test_trial")
    utils = importlib.import_module("autobuild_utils")
    history = importlib.import_module("env_history")
    base = importlib.import_module("computergym.miniwob.base_env")
    trial.get_ChatGPT_Agent = lambda *a, **k: _Worker()
    published = shared / "published-runs" / "automanual" / "miniwob"
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
    out = []
    for z, (page, seed) in enumerate(tasks):
        raw = base.MiniWoBEnv(page, seeds=[seed], headless=True)
        try:
            ob = raw.reset(seeds=[seed], record_screenshots=False)
            env = history.InteractEnv(raw, z, page, 0, ob)
            skill = skills.skill_dict[page]
            _Worker.plan = [
                adapt_text(p, skill["task_name"], env.task) for p in parts(skill["skill_code"])
            ]
            success, step, _errors, _tokens = quiet(
                lambda env=env: trial.run(args, env, rules, skills)
            )
            acts = [
                v.split("Act: agent.", 1)[1].split(". Obs: ", 1)[0]
                for k, v in sorted(env.env_history.items(), key=lambda kv: int(kv[0][4:]))
                if k != "obs_0"
            ]
            out.append(
                {
                    "task": f"{page}#{seed}",
                    "success": bool(success),
                    "answers": step + 1,
                    "actions": acts,
                }
            )
        finally:
            raw.close()
    return {"miniwob": out}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("original", type=Path, help="checkout of minghchen/automanual")
    parser.add_argument("shared", type=Path, help="the project's shared/data folder")
    parser.add_argument("out", type=Path)
    parser.add_argument("--env", choices=["alfworld", "miniwob", "both"], default="both")
    args = parser.parse_args()
    found = json.loads(gzip.decompress(args.out.read_bytes())) if args.out.is_file() else {}
    if args.env in ("alfworld", "both"):
        found.update(record_alfworld(args.original.resolve(), args.shared.resolve()))
    if args.env in ("miniwob", "both"):
        found.update(record_miniwob(args.original.resolve(), args.shared.resolve()))
    text = json.dumps(found, separators=(",", ":"), sort_keys=True)
    args.out.write_bytes(gzip.compress(text.encode("utf-8"), mtime=0))
    for env, played in found.items():
        print(f"{env}: {sum(g['success'] for g in played)} of {len(played)} episodes won")


if __name__ == "__main__":
    main()
