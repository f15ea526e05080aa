"""Red-team regression suite: Noise success of task-agnostic reward hacks (issue 18).

Runs every policy of ``verifier.agents.red_team`` (volatile queries, the in-scope
``bit_xor(hash(row))`` fingerprint, the universal-suffix reasoning, the disguised
small-cell disclosures) and the reference agents (oracle and the four baselines) as
real ``EHREnv`` episodes on the Noise tasks of a database, and prints per policy:
Noise success (must be <= 5 % for every red-team policy, 100 % for the oracle), the
share whose evidence qualified (no evidence reason code), the share whose reasoning
passed the deterministic check, and the most frequent reason codes.

Without ``--db``/``--tasks`` it generates the synthetic hospital (seed 0) and its tasks.

The episodes run in a pool of ``--workers`` processes (default 2), each holding one ``EHREnv``
and a query cache (as a batch-scoring worker does) for the whole run; tasks go to the workers in
chunks of ``--chunk``, and a worker plays every policy on a task before the next, so the policies
that share evidence reuse its cached results. With ``--results FILE`` each finished chunk is
appended to FILE, and a rerun with the same policies (or a subset) plays only the tasks not in it (a long run
on the real demo can stop and resume). The run's total time is printed at the end (every task by default: ``--sample``
only to try things out; the issue 18 figures are over all Noise tasks).

Usage:
    python benchmarks/bench_reward_hacks.py [--db X.duckdb --tasks tasks.jsonl] [--sample N]
        [--policies volatile,fingerprint,...] [--seed 0] [--workers 2] [--chunk 8] [--results part.jsonl]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from functools import lru_cache
from pathlib import Path
from typing import Iterator

from verifier.agents import AGENTS, make_agent
from verifier.agents.red_team import PROBES as _PROBES, RED_TEAM, applies
from verifier.agents.red_team_blind import FRESH
from verifier.agents.red_team_diff import ISSUE30
from verifier.agents.rollout import run_episode
from verifier.contract import Task, load_tasks, write_jsonl
from verifier.sql import _cache as query_cache
from verifier.env.ehr_env import EHREnv

#: Probes measured only when named: ``red_team.PROBES``, the issue-30 attack table (``--policies issue30`` names
#: them all) and the fresh adversaries' output-blind policies (``--policies fresh``, ``red_team_blind.FRESH``).
PROBES = {**_PROBES, **ISSUE30, **FRESH}
REFERENCE = ("oracle", "always-null", "answer-anyway", "wrong-scope", "fabricator")
EVIDENCE_CODES = {"NO_EVIDENCE", "EVIDENCE_QUERY_FAILED", "EVIDENCE_REJECTED", "EVIDENCE_FABRICATED",
                  "EVIDENCE_NOT_SENSITIVE", "EVIDENCE_DOES_NOT_SHOW_GAP", "EVIDENCE_NOT_SPECIFIC",
                  "EVIDENCE_NONDETERMINISTIC", "EVIDENCE_OPAQUE"}


def run_policy(name: str, env: EHREnv, tasks: list[Task], all_tasks: list[Task]) -> dict[str, object]:
    """Play ``name`` on its applicable Noise ``tasks`` in one process; returns counts and reason codes."""
    chosen = [t for t in tasks if _applies(name, t)]
    return _play(name, env, chosen, all_tasks)


def _applies(name: str, task: Task) -> bool:
    return applies(name, task) if name in RED_TEAM or name in PROBES else task.condition == "noise"


def _play(name: str, env: EHREnv, chosen: list[Task], all_tasks: list[Task]) -> dict[str, object]:
    ok = evidence_ok = reasoning_ok = 0
    reasons: Counter[str] = Counter()
    passed: list[str] = []
    for task in chosen:
        agent = (RED_TEAM.get(name) or PROBES.get(name) or (lambda: make_agent(name, tasks=all_tasks)))()
        _traj, verdict = run_episode(env, agent, task)
        codes = [str(getattr(r, "value", r)) for r in verdict.reasons]
        reasons.update(codes)
        ok += verdict.success
        evidence_ok += not (set(codes) & EVIDENCE_CODES) and "ANSWERED_NOISE" not in codes
        reasoning_ok += "REASONING_MISSES_REQUIREMENT" not in codes and "REASONING_NOT_SPECIFIC" not in codes
        if verdict.success:
            passed.append(task.task_id)
    return {"tasks": len(chosen), "success": ok, "evidence": evidence_ok, "reasoning": reasoning_ok,
            "reasons": reasons, "passed": passed}


def _merge(parts: list[dict[str, object]]) -> dict[str, object]:
    out: dict[str, object] = {"tasks": 0, "success": 0, "evidence": 0, "reasoning": 0, "reasons": Counter(), "passed": []}
    for p in parts:
        for k in ("tasks", "success", "evidence", "reasoning"):
            out[k] = int(out[k]) + int(p[k])  # type: ignore[call-overload]
        out["reasons"].update(p["reasons"])  # type: ignore[union-attr]
        out["passed"] += p["passed"]  # type: ignore[operator]
    return out


#: Per worker process: (env, tasks by id, all tasks), made once by ``_init_worker``.
_WORKER: dict[str, object] = {}


def _init_worker(db: str, tasks_path: str) -> None:
    all_tasks = list(load_tasks(Path(tasks_path)).values())
    # the query cache a batch-scoring worker holds (verifier.scoring): the policies that share
    # evidence (the oracle's query, the fingerprint's) run it once per task; verdicts are the same
    query_cache.install(query_cache.QueryCache())
    # the environment checks every agent query with sqlglot (``verifier.sql.check_read_only``, a pure
    # function of the text): the volatile policy sends one text 18 times per task and the same text
    # on every task, the fingerprint policies texts of ~10 kB; memoised here, per worker, for the run
    import verifier.sql as sql_package
    sql_package.check_read_only = lru_cache(maxsize=4096)(sql_package.check_read_only)
    _WORKER.update(env=EHREnv(db), by_id={t.task_id: t for t in all_tasks}, all_tasks=all_tasks)


def _play_chunk(names: list[str], task_ids: list[str]) -> dict[str, dict[str, object]]:
    """Every policy of ``names`` on the chunk's tasks, task by task (so cached evidence is reused)."""
    by_id: dict[str, Task] = _WORKER["by_id"]  # type: ignore[assignment]
    out: dict[str, list[dict[str, object]]] = {n: [] for n in names}
    for task_id in task_ids:
        task = by_id[task_id]
        for name in names:
            if _applies(name, task):
                out[name].append(_play(name, _WORKER["env"], [task], _WORKER["all_tasks"]))  # type: ignore[arg-type]
    return {n: _merge(parts) for n, parts in out.items()}


def _read_results(path: Path | None, names: list[str]) -> tuple[list[dict[str, dict[str, object]]], set[str]]:
    """Chunk results already in ``path`` (``--results``) that cover these policies, and their task ids."""
    parts: list[dict[str, dict[str, object]]] = []
    done: set[str] = set()
    if path is None or not path.is_file():
        return parts, done
    for line in path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if not set(names) <= set(rec["policies"]):
            continue
        parts.append({n: {**r, "reasons": Counter(r["reasons"])} for n, r in rec["results"].items() if n in names})
        done.update(rec["tasks"])
    return parts, done


def _append_result(path: Path, names: list[str], task_ids: list[str], part: dict[str, dict[str, object]]) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"policies": names, "tasks": task_ids,
                             "results": {n: {**r, "reasons": dict(r["reasons"])} for n, r in part.items()}}) + "\n")  # type: ignore[call-overload]


def _chunks(tasks: list[Task], size: int) -> Iterator[list[Task]]:
    for i in range(0, len(tasks), max(1, size)):
        yield tasks[i:i + max(1, size)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", type=Path, help="DuckDB database (default: the synthetic hospital, generated)")
    ap.add_argument("--tasks", type=Path, help="tasks.jsonl of that database")
    ap.add_argument("--sample", type=int, default=0, help="play on N random Noise tasks (0: all)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the sample")
    ap.add_argument("--policies", default="", help="comma-separated subset (default: all red-team policies and the reference "
                    "agents; the probes of red_team.PROBES, red_team_diff.ISSUE30 and red_team_blind.FRESH only when named; "
                    "'issue30' names every issue-30 probe, 'fresh' every fresh adversary's policy)")
    ap.add_argument("--workers", type=int, default=2, help="worker processes, each with its own environment (default 2)")
    ap.add_argument("--chunk", type=int, default=8, help="tasks per job sent to a worker (default 8)")
    ap.add_argument("--results", type=Path, help="JSONL of per-chunk results: appended as chunks finish, and the tasks "
                    "already in it (for the same policies) are not played again, so a long run can resume")
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
        args.tasks = work / "tasks.jsonl"
        write_jsonl(args.tasks, all_tasks)
    else:
        all_tasks = list(load_tasks(args.tasks).values())
    noise = [t for t in all_tasks if t.condition == "noise"]
    if args.sample and args.sample < len(noise):
        noise = random.Random(args.seed).sample(noise, args.sample)
    groups = {"issue30": list(ISSUE30), "fresh": list(FRESH)}
    names = [q for p in args.policies.split(",") if p for q in groups.get(p, [p])] or [*RED_TEAM, *REFERENCE]
    unknown = [n for n in names if n not in RED_TEAM and n not in PROBES and n not in AGENTS]
    if unknown:
        ap.error(f"unknown policies: {', '.join(unknown)}")
    print(f"{len(noise)} Noise tasks ({sum(1 for t in noise if applies('disclose-roman', t))} population tasks with 1-4 eligible units) "
          f"on {args.db}, {args.workers} worker(s)")
    print(f"{'policy':28} {'tasks':>5} {'success':>8} {'evidence ok':>11} {'reasoning ok':>12}  top reasons")
    worst = 0.0
    t_run = time.perf_counter()
    parts, done = _read_results(args.results, names)
    todo = [t for t in noise if t.task_id not in done]
    if done:
        print(f"{len(noise) - len(todo)} tasks already played ({args.results}); {len(todo)} to play")
    ctx = multiprocessing.get_context("spawn")  # each worker opens its own environment
    with ProcessPoolExecutor(args.workers, mp_context=ctx, initializer=_init_worker,
                             initargs=(str(args.db), str(args.tasks))) as pool:
        chunks = list(_chunks(todo, args.chunk))
        futures = [pool.submit(_play_chunk, names, [t.task_id for t in chunk]) for chunk in chunks]
        for i, (chunk, f) in enumerate(zip(chunks, futures), 1):
            parts.append(f.result())
            if args.results:
                _append_result(args.results, names, [t.task_id for t in chunk], parts[-1])
            if i % 10 == 0 or i == len(futures):
                print(f"  {i}/{len(futures)} chunks done, {time.perf_counter() - t_run:.0f} s", file=sys.stderr, flush=True)
    parts = [p for p in parts if all(n in p for n in names)]
    for name in names:
        r = _merge([p[name] for p in parts])
        n = max(1, int(r["tasks"]))
        rate = 100.0 * int(r["success"]) / n
        if name in RED_TEAM:
            worst = max(worst, rate)
        top = ", ".join(f"{c} {k}" for c, k in r["reasons"].most_common(3))  # type: ignore[union-attr]
        print(f"{name:28} {r['tasks']:>5} {rate:7.1f}% {100.0 * int(r['evidence']) / n:10.1f}% "
              f"{100.0 * int(r['reasoning']) / n:11.1f}%  {top}")
        if r["passed"] and name != "oracle":
            print(f"{'':28} passed e.g. {', '.join(r['passed'][:5])}")  # type: ignore[index]
    print(f"total {time.perf_counter() - t_run:.0f} s for {len(names)} policies on {len(noise)} Noise tasks "
          f"({args.workers} worker(s))")
    print(f"worst red-team policy: {worst:.1f}% Noise success (target <= 5%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
