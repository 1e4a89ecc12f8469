"""The dry run's estimate: measure and save it, and hold it against real-shaped runs.

``lorekit reproduce run EXPERIMENT --dry-run`` measures each row three ways (its
scripted models for the prompts' shape, a model that wanders to its budget, the
env's expert; docs/reproduce.md) and gives a range. Here:

``--write [EXPERIMENT ...]`` measures the shipped experiments (all runnable ones
by default) and saves them to ``lorekit/cli/reproduce_estimates.yaml``, which
``reproduce list`` and ``--max-cost`` read.

``--docs`` writes docs/reproduce.md's table of what each experiment costs from that
saved file, worded as ``reproduce list`` words it (``--write`` does so too).

``--published`` replays the authors' ADaPT run on TextCraft through LoreKit (its
model's answers, LoreKit's prompts) and prints what it cost per task group and
role, per episode: ``published:`` in ``lorekit/agents/cost_shapes.yaml``.

``--against`` (the default) sets the estimate beside runs shaped like real ones,
none of them the scripted models the estimate measures with: the replayed
published run (for ADaPT's row, the estimate computed as for a row without one,
from the paper's success rate), a served model that answers a valid action that
changes nothing (ReAct at its budget), and a served perfect model (the env's
expert's actions, in order). Printed, never asserted; run on 2 shared cores.

    PYTHONPATH=. python benchmarks/reproduce_cost.py --against
    PYTHONPATH=. python benchmarks/reproduce_cost.py --write adapt-table2-textcraft
"""

from __future__ import annotations

import argparse
import contextlib
import io
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from lorekit.cli.reproduce_cost import dry_estimate, measure_experiment
from lorekit.cli.reproduce_estimates import Estimate, load_saved, save
from lorekit.eval.cost_range import episode_range
from lorekit.eval.reproduce import find_experiment, load_all

ROOT = Path(__file__).resolve().parents[1]
PUBLISHED = "published-runs/adapt/ADaPT_maxd3_textcraft_gpt-3.5-turbo-instruct.json"


def data_dir() -> Path | None:
    """The shared data folder beside the repository (or /work/shared/data), if present."""
    for candidate in (ROOT.parent / "shared" / "data", Path("/work/shared/data")):
        if candidate.is_dir():
            return candidate
    return None


def write(ids: list[str]) -> None:
    import os

    data = data_dir()
    if data is not None and (data / "alfworld-2.1.1").is_dir():  # the ALFWorld rows' games
        os.environ.setdefault("ALFWORLD_DATA", str(data / "alfworld-2.1.1"))
    saved = load_saved()
    for exp in load_all():
        if not exp.runnable or (ids and exp.id not in ids):
            continue
        t0 = time.perf_counter()
        try:
            est: Estimate = dry_estimate(exp, exp.runnable_rows, exp.episodes, exp.split)
        except Exception as exc:  # one experiment that cannot be measured here
            print(f"{exp.id}: not measured: {exc}")
            continue
        saved[exp.id] = est
        print(f"{exp.id}: {len(est.rows)} rows, {len(est.builds)} builds "
              f"({time.perf_counter() - t0:.0f}s)")  # fmt: skip
        save(saved)
    docs()


START, END = "<!-- estimates: made by benchmarks/reproduce_cost.py -->", "<!-- /estimates -->"


def docs() -> None:
    """Docs/reproduce.md's table between START and END: each runnable experiment's saved
    estimate as ``reproduce list`` shows it (a test holds the two together)."""
    from lorekit.cli.reproduce_cost import listed_estimate, load_table

    table = load_table(None)
    lines = ["| experiment | rows | estimate (episodes per row: ~ central (low to high)) |",
             "|---|---|---|"]  # fmt: skip
    for exp in load_all():
        if exp.runnable:
            text = listed_estimate(exp, table).replace(" at the paper's models", "")
            lines.append(f"| {exp.id} | {len(exp.runnable_rows)} | {text} |")
    path = ROOT / "docs" / "reproduce.md"
    text = path.read_text(encoding="utf-8")
    head, found, rest = text.partition(START)
    if not found or END not in rest:
        raise SystemExit(f"{path}: no {START} ... {END} to write the table between")
    tail = rest.split(END, 1)[1]
    path.write_text(head + START + "\n" + "\n".join(lines) + "\n" + END + tail, encoding="utf-8")
    print(f"{path}: {len(lines) - 2} experiments")


def replayed_per_group(run_dir: Path) -> dict[str, dict[str, list[float]]]:
    """Group -> role -> [calls, prompt, completion] per episode of the replayed run."""
    from lorekit.cli import main
    from lorekit.eval.store import RunStore

    data = data_dir()
    if data is None:
        raise SystemExit("the published runs are not here (../shared/data)")
    store = run_dir / "replay.sqlite3"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
        main(["reproduce", "replay", str(data / PUBLISHED), "--store", str(store),
              "--run-id", "pub", "--no-progress"])  # fmt: skip
    with RunStore.open_readonly(store) as db:
        episodes = db.episodes("pub")
        group = {e.episode_key: str(e.task_group) for e in episodes}
        count: dict[str, int] = defaultdict(int)
        for e in episodes:
            count[str(e.task_group)] += 1
        sums: dict[str, dict[str, list[float]]] = defaultdict(
            lambda: defaultdict(lambda: [0, 0, 0])
        )
        for c in db.llm_calls("pub"):
            if c["episode_key"] is None:
                continue
            row = sums[group[c["episode_key"]]][c["role"]]
            row[0] += 1
            row[1] += c["prompt_tokens"]
            row[2] += c["completion_tokens"]
    return {
        g: {r: [v / count[g] for v in t] for r, t in roles.items()} for g, roles in sums.items()
    }


def published() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        groups = replayed_per_group(Path(tmp))
    print("    groups:")
    for g in sorted(groups):
        print(f"      {g}:")
        for role, (calls, prompt, completion) in sorted(groups[g].items()):
            print(f"        {role}: {{calls: {calls:.2f}, prompt: {prompt:.0f}, "
                  f"completion: {completion:.0f}}}")  # fmt: skip


def against() -> None:
    """The estimate beside real-shaped runs (see the module docstring)."""
    exp = find_experiment("adapt-table2-textcraft")
    est = measure_experiment(exp, exp.runnable_rows, 200, exp.split)
    with tempfile.TemporaryDirectory() as tmp:
        groups = replayed_per_group(Path(tmp))
    replay = sum(
        sum(t[1] + t[2] for t in roles.values()) * share
        for g, roles in groups.items()
        for share in [{"depth-2": 77, "depth-3": 112, "depth-4": 11}.get(g, 0) / 200]
    )
    # the ADaPT row's ends without its published run (the ratio is derived from them)
    from lorekit.agents import make_agent
    from lorekit.agents.shape_models import acting_roles, idle_roles, shape_roles
    from lorekit.cli.reproduce_cost import DRY_EPISODES
    from lorekit.eval.cost import measure_rows

    row = exp.row("adapt")
    (m,) = measure_rows(exp.env, exp.env_options, exp.split, [row], shape_roles, planned=200,
                        episodes=DRY_EPISODES, idle_for=idle_roles, acting_for=acting_roles,
                        expert=make_agent("oracle"))  # fmt: skip
    span = episode_range(m)
    print("ADaPT on TextCraft, tokens per episode:")
    print(f"  the published run replayed through LoreKit: {replay:,.0f}")
    for end in ("low", "high"):
        t = span.total(end)
        print(f"  estimate without it, {end}: {t.prompt + t.completion:,.0f} "
              f"({(t.prompt + t.completion) / replay:.2f}x)")  # fmt: skip
    saved = est.rows["adapt"]
    t = saved.total("central")
    print(f"  estimate with it (central): {t.prompt + t.completion:,.0f}")
    low = span.total("low")
    print(
        f"  paper_ratio (the replay over the low end): {replay / (low.prompt + low.completion):.2f}"
    )
    served(exp, est)


def served(exp: Any, est: Estimate) -> None:
    """ReAct's row against a served model at its budget and a served perfect model."""
    from lorekit.cli import main
    from lorekit.eval.store import RunStore
    from lorekit.llm.testing import OpenAICompatServer

    span = est.rows["react"]
    tasks = _expert_actions(exp, 5)
    shares = {"depth-2": 77 / 200, "depth-3": 112 / 200, "depth-4": 11 / 200}
    with tempfile.TemporaryDirectory() as tmp:
        for label, perfect in (("wanders (answers 'inventory')", False), ("is perfect", True)):
            store = Path(tmp) / f"{int(perfect)}.sqlite3"
            answers = [a for _, _, acts in tasks for a in acts]
            srv = OpenAICompatServer(
                answers if perfect else (lambda body: "inventory"), report_usage=False
            )  # usage estimated as the dry run estimates it: about 4 characters a token
            with srv, contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
                args = ["run", "textcraft", "--agent", "react", "--agent-opt", "profile=paper"]
                for k, v in exp.env_options.items():
                    args += ["--env-opt", f"{k}={'none' if v is None else v}"]
                args += ["--split", exp.split, "--tasks", ",".join(t[0] for t in tasks)]
                args += ["--model", "m", "--base-url", srv.base_url, "--store", str(store)]
                main([*args, "-j", "1", "--run-id", "x", "--no-progress"])
            by_group: dict[str, list[float]] = defaultdict(list)
            with RunStore.open_readonly(store) as db:
                for e in db.episodes("x"):
                    calls = db.llm_calls("x", e.episode_key)
                    used = sum(c["prompt_tokens"] + c["completion_tokens"] for c in calls)
                    by_group[str(e.task_group)].append(used)
            tokens = sum(shares[g] * sum(v) / len(v) for g, v in by_group.items())
            print(f"ReAct, a served model that {label}: {tokens:,.0f} tokens per episode "
                  f"({sum(len(v) for v in by_group.values())} episodes, weighted by depth); "
                  f"estimate low {_t(span, 'low'):,.0f}, central {_t(span, 'central'):,.0f}, "
                  f"high {_t(span, 'high'):,.0f}")  # fmt: skip


def _t(span: Any, end: str) -> float:
    t = span.total(end)
    return float(t.prompt + t.completion)


def _expert_actions(exp: Any, k: int) -> list[tuple[str, str | None, list[str]]]:
    """``k`` tasks of each depth, spread over the split, with the expert's actions."""
    from lorekit.envs import make

    env = make(exp.env, **dict(exp.env_options))
    out: list[tuple[str, str | None, list[str]]] = []
    try:
        by_group: dict[str | None, list[Any]] = defaultdict(list)
        for task in env.tasks(exp.split):
            by_group[task.group].append(task)
        for group in by_group.values():
            for task in group[:: max(1, len(group) // k)][:k]:
                env.reset(task)
                actions = []
                for _ in range(200):
                    action = env.expert_action()
                    if action is None:
                        break
                    actions.append(action)
                    if env.step(action).done:
                        break
                out.append((task.id, task.group, actions))
    finally:
        env.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("experiments", nargs="*")
    parser.add_argument("--write", action="store_true", help="measure and save the estimates")
    parser.add_argument("--docs", action="store_true", help="write the docs' table of estimates")
    parser.add_argument("--published", action="store_true", help="print the replayed run's cost")
    parser.add_argument(
        "--against", action="store_true", help="the default: beside real-shaped runs"
    )
    args = parser.parse_args()
    if args.write:
        write(args.experiments)
    elif args.docs:
        docs()
    elif args.published:
        published()
    else:
        against()


if __name__ == "__main__":
    main()
