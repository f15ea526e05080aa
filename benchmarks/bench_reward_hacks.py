"""Red-team regression suite: Noise success of task-agnostic reward hacks (issue 18).

Runs every policy of ``verifier.agents.red_team`` (volatile queries, the in-scope
``bit_xor(hash(row))`` fingerprint, the universal-suffix reasoning, the disguised
small-cell disclosures) and the reference agents (oracle and the four baselines) as
real ``EHREnv`` episodes on the Noise tasks of a database, and prints per policy:
Noise success (must be <= 5 % for every red-team policy, 100 % for the oracle), the
share whose evidence qualified (no evidence reason code), the share whose reasoning
passed the deterministic check, and the most frequent reason codes.

Without ``--db``/``--tasks`` it generates the synthetic hospital (seed 0) and its tasks.

Usage:
    python benchmarks/bench_reward_hacks.py [--db X.duckdb --tasks tasks.jsonl] [--sample N]
        [--policies volatile,fingerprint,...] [--seed 0]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from verifier.agents import make_agent
from verifier.agents.red_team import RED_TEAM, applies
from verifier.agents.rollout import run_episode
from verifier.contract import Task, load_tasks
from verifier.env.ehr_env import EHREnv

REFERENCE = ("oracle", "always-null", "answer-anyway", "wrong-scope", "fabricator")
EVIDENCE_CODES = {"NO_EVIDENCE", "EVIDENCE_QUERY_FAILED", "EVIDENCE_REJECTED", "EVIDENCE_FABRICATED",
                  "EVIDENCE_NOT_SENSITIVE", "EVIDENCE_DOES_NOT_SHOW_GAP", "EVIDENCE_NOT_SPECIFIC",
                  "EVIDENCE_NONDETERMINISTIC", "EVIDENCE_OPAQUE"}


def run_policy(name: str, env: EHREnv, tasks: list[Task], all_tasks: list[Task]) -> dict[str, object]:
    """Play ``name`` on its applicable Noise ``tasks``; returns counts and reason codes."""
    chosen = [t for t in tasks if (applies(name, t) if name in RED_TEAM else t.condition == "noise")]
    ok = evidence_ok = reasoning_ok = 0
    reasons: Counter[str] = Counter()
    failures: list[str] = []
    for task in chosen:
        agent = RED_TEAM[name]() if name in RED_TEAM else make_agent(name, tasks=all_tasks)
        _traj, verdict = run_episode(env, agent, task)
        codes = [str(getattr(r, "value", r)) for r in verdict.reasons]
        reasons.update(codes)
        ok += verdict.success
        evidence_ok += not (set(codes) & EVIDENCE_CODES) and "ANSWERED_NOISE" not in codes
        reasoning_ok += "REASONING_MISSES_REQUIREMENT" not in codes and "REASONING_NOT_SPECIFIC" not in codes
        if verdict.success and len(failures) < 5:
            failures.append(task.task_id)
    return {"tasks": len(chosen), "success": ok, "evidence": evidence_ok, "reasoning": reasoning_ok,
            "reasons": reasons, "passed": failures}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", type=Path, help="DuckDB database (default: the synthetic hospital, generated)")
    ap.add_argument("--tasks", type=Path, help="tasks.jsonl of that database")
    ap.add_argument("--sample", type=int, default=0, help="play on N random Noise tasks (0: all)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the sample")
    ap.add_argument("--policies", default="", help="comma-separated subset (default: all red-team policies and the reference agents)")
    args = ap.parse_args(argv)
    if (args.db is None) != (args.tasks is None):
        ap.error("--db and --tasks go together")
    if args.db is None:
        from verifier.construction import make_tasks
        from verifier.database import build_database
        from verifier.synthetic import generate_hospital

        work = Path(tempfile.mkdtemp(prefix="bench_hacks_"))
        hospital = generate_hospital(work / "hospital", seed=0)
        args.db = work / "synth.duckdb"
        build_database(hospital, args.db)
        all_tasks, _ = make_tasks(args.db, seed=0)
    else:
        all_tasks = list(load_tasks(args.tasks).values())
    noise = [t for t in all_tasks if t.condition == "noise"]
    if args.sample and args.sample < len(noise):
        noise = random.Random(args.seed).sample(noise, args.sample)
    names = [p for p in args.policies.split(",") if p] or [*RED_TEAM, *REFERENCE]
    env = EHREnv(str(args.db))
    print(f"{len(noise)} Noise tasks ({sum(1 for t in noise if applies('disclose-roman', t))} population tasks with 1-4 eligible units) on {args.db}")
    print(f"{'policy':28} {'tasks':>5} {'success':>8} {'evidence ok':>11} {'reasoning ok':>12}  top reasons")
    worst = 0.0
    for name in names:
        t0 = time.perf_counter()
        r = run_policy(name, env, noise, all_tasks)
        n = max(1, int(r["tasks"]))
        rate = 100.0 * int(r["success"]) / n
        if name in RED_TEAM:
            worst = max(worst, rate)
        top = ", ".join(f"{c} {k}" for c, k in r["reasons"].most_common(3))  # type: ignore[union-attr]
        print(f"{name:28} {r['tasks']:>5} {rate:7.1f}% {100.0 * int(r['evidence']) / n:10.1f}% "
              f"{100.0 * int(r['reasoning']) / n:11.1f}%  {top}  ({time.perf_counter() - t0:.0f} s)")
        if r["passed"] and name != "oracle":
            print(f"{'':28} passed e.g. {', '.join(r['passed'])}")  # type: ignore[arg-type]
    env.close()
    print(f"worst red-team policy: {worst:.1f}% Noise success (target <= 5%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
