"""Which skill each test task is shown: BM25 (LoreKit's ALFWorld default) against the
authors' rule (the type's own skill, ``--retriever type``), on the published libraries.

    python benchmarks/automanual_retrieval.py [--shared ../shared/data]

For every test task (ALFWorld: AutoManual's 135 official games; MiniWoB++: the 9
pages with feedback and all 53 task types, 6 seeds each) it retrieves what the
planner is shown under both rules and prints how often they agree; then, for
each task type in turn left out of the library (a build in which that type never
succeeded), which skill BM25 shows instead, where the exact-type rule shows none.
Needs the authors' published runs (never shipped) and ALFWorld's official copy.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from lorekit.agents.automanual.libraries import Libraries
from lorekit.agents.automanual.published import read_published, run_files
from lorekit.agents.automanual.published_import import in_memory
from lorekit.agents.automanual.retrieval import make_retriever
from lorekit.envs import make
from lorekit.envs.base import Task


def shown(lib: Libraries, task: Task) -> str:
    items = lib.retrieve_all(task.group, task.goal)
    return "+".join(f"{r.kind}:{r.task_type}" for r in items) or "nothing"


def compare(env: str, tasks: list[Task], shared: Path) -> None:
    run = read_published(*run_files(shared / "published-runs" / "automanual" / env))
    db = in_memory(run)
    libs = {
        spec: Libraries(db, "published", retriever=make_retriever(spec), readonly=True)
        for spec in ("bm25", "type")
    }
    same = sum(shown(libs["bm25"], t) == shown(libs["type"], t) for t in tasks)
    print(f"{env}: {len(tasks)} test tasks, the two rules show the same skill for {same}")
    missing = Counter(t.group for t in tasks if shown(libs["type"], t) == "nothing")
    if missing:
        print(f"  types with no skill of their own ({len(missing)}): BM25 shows instead")
        bm25 = Counter(shown(libs["bm25"], t) for t in tasks if t.group in missing)
        for what, n in bm25.most_common(8):
            print(f"    {n:4d}  {what}")
    print("  leaving one type out of the library (what BM25 shows; the type rule: nothing)")
    for left in sorted({s.task_type for s in run.skills}):
        kept = [i for i in run.items if i.task_type != left]
        lib = Libraries(
            in_memory(type(run)(run.rules, run.manual, tuple(kept))),
            "published",
            retriever=make_retriever("bm25"),
            readonly=True,
        )
        picks = Counter(shown(lib, t) for t in tasks if t.group == left)
        print(f"    {left}: {dict(picks)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = Path(__file__).resolve().parents[2] / "shared" / "data"
    parser.add_argument("--shared", type=Path, default=here)
    args = parser.parse_args()
    alf = make("alfworld", source="official", variant="automanual", split="test",
               data_dir=str(args.shared / "alfworld-2.1.1"))  # fmt: skip
    compare("alfworld", alf.tasks("test"), args.shared)
    alf.close()
    for tasks in ("feedback-9", "automanual-53"):
        web = make("miniwob", tasks=tasks, pages="automanual", episodes_per_task=6)
        print(f"miniwob --tasks {tasks}:")
        compare("miniwob", web.tasks("test"), args.shared)
        web.close()


if __name__ == "__main__":
    main()
