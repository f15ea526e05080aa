"""Full real-demo run of the reference agents (issue 6 acceptance), with timings.

Builds the demo database and its tasks (or takes ``--db``/``--tasks``), runs
``oracle``, ``always-null``, ``answer-anyway``, ``wrong-scope`` and
``fabricator`` on every task, and prints per agent: success on Clean and
Noise, reason-code counts, whether the expectation holds, every oracle
failure with its reasons, and seconds per episode as a ratio to
``always-null`` (the environment's own overhead, measured in the same run).
Never asserts on time; exits 1 when an expectation fails.

Usage::

    python benchmarks/bench_rollout_agents.py [--db demo.duckdb] [--tasks tasks.jsonl] [--workers 2] [--out DIR]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_MIMIC = Path(os.environ.get("MIMIC_DEMO_DIR", REPO.parent / "shared" / "data" / "mimic-iv-demo"))
DEFAULT_MEDS = DEFAULT_MIMIC.parent / "mimic-iv-demo-meds" / "mimic_iv_demo_meds_events.parquet"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", type=Path, help="DuckDB database (default: build the demo into --out)")
    ap.add_argument("--tasks", type=Path, help="tasks JSONL (default: make_tasks on the database, seed 0)")
    ap.add_argument("--out", type=Path, help="output folder (default: a temporary folder)")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()

    from rich.console import Console

    from verifier.agents.suite import run_reference_agents
    from verifier.contract import load_tasks, write_jsonl

    console = Console()
    out = args.out or Path(tempfile.mkdtemp(prefix="bench-rollout-"))
    out.mkdir(parents=True, exist_ok=True)
    db = args.db
    if db is None:
        from verifier.database import build_database

        db = out / "demo.duckdb"
        if not db.exists():
            build_database(DEFAULT_MIMIC, db, chartevents_meds=DEFAULT_MEDS if DEFAULT_MEDS.is_file() else None)
    if args.tasks is not None:
        tasks = list(load_tasks(args.tasks).values())
    else:
        from verifier.construction import make_tasks

        tasks, _ = make_tasks(db, seed=0)
        write_jsonl(out / "tasks.jsonl", tasks)
    console.print(f"{len(tasks)} tasks on {db}; outputs in {out}")
    results = run_reference_agents(tasks, db, out, workers=args.workers)
    base = results["always-null"].report
    base_per = base.seconds / max(base.episodes, 1)
    all_ok = True
    for name, check in results.items():
        r = check.report
        per = r.seconds / max(r.episodes, 1)
        rates = "  ".join(
            f"{c}: {r.success[c]}/{r.total[c]} ({(r.rate(c) or 0):.1%})" for c in ("clean", "noise") if r.total[c]
        )
        console.print(f"[bold]{name}[/]: {rates}; {'OK' if check.ok else 'EXPECTATION FAILED'}; "
                      f"{per * 1000:.0f} ms/episode ({per / base_per if base_per else float('nan'):.1f}x always-null)")
        for cond, counts in r.reasons.items():
            console.print(f"    {cond} reasons: " + ", ".join(f"{k}={v}" for k, v in counts.most_common()))
        for line in check.problems[:50]:
            console.print(f"    - {line}")
        all_ok &= check.ok
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
