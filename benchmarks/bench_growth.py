"""Growth benchmark: the synthetic hospital at several sizes, every stage measured (issue 34, point 6).

For each size (``--sizes``, patients) in a temporary folder under /tmp, each stage runs in its
own child process, which reports its wall time and its peak resident set size
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``), so one stage's memory does not hide the next:

- generate:   ``verifier.synthetic.generate_hospital(csv, seed, n_patients)`` (CSV layout);
- build:      ``verifier.database.build_database(csv, db)``; rows summed over the built tables,
              and the database file's size on disk;
- make-tasks: ``verifier.construction.make_tasks(db, seed)``; pairs kept and candidates verified;
- rollout:    the ``oracle`` reference agent on a sample of tasks (``--sample``, taken
              round-robin over programs in file order, Clean and Noise alike) in the environment
              (``verifier.agents.rollout``), its trajectories logged;
- verify:     ``verify_batch`` (serial backend: no pool start-up in the figure) on those
              trajectories; ms per trajectory (wall, and CPU of the child plus its finished
              children: a query process still alive at the end is not counted); the oracle's
              success rate is printed so a verify that fails at size shows; then the seconds of
              three full scans and one patient's lookup under the query process's DuckDB
              settings (``_scan_rates``), extrapolated to full MIMIC-IV's event tables.

Prints a Markdown table (patients, rows, chart_events, lab_events, DB MB, generate/build/make-tasks
s, peak RSS MiB per stage, verify ms per trajectory, oracle success, load average) and each
size's cost per patient relative to the first size (1.0 = linear; above 1 grows faster than
linear). The machine is shared: the load average is printed beside each row. No assertions on
time. Each size's figures are written to ``--json`` as soon as it is done.

Usage::

    python benchmarks/bench_growth.py [--sizes 400,4000,20000] [--sample 24] [--seed 0] [--json FILE] [--keep]
    python benchmarks/bench_growth.py --table FILE      # reprint the table of a --json file
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
#: Full MIMIC-IV (v2.2/v3.1, about 300k patients, 430k admissions): the event tables' rows.
FULL_CHART = 313_000_000
FULL_LAB = 124_000_000


# ----------------------------------------------------------------------------- child stages

def _stage_generate(d: Path, n: int, seed: int, _sample: int) -> dict:
    from verifier.synthetic import generate_hospital

    generate_hospital(d / "csv", seed=seed, n_patients=n)
    return {"csv_mb": sum(p.stat().st_size for p in (d / "csv").rglob("*")) / 1e6}


def _stage_build(d: Path, _n: int, _seed: int, _sample: int) -> dict:
    from verifier.database import build_database

    report = build_database(d / "csv", d / "h.duckdb")
    rows = {t.name: t.rows for t in report.tables}
    return {"rows": sum(rows.values()), "chartevents": rows.get("chart_events", 0),
            "labevents": rows.get("lab_events", 0), "db_mb": (d / "h.duckdb").stat().st_size / 1e6}


def _stage_make_tasks(d: Path, _n: int, seed: int, _sample: int) -> dict:
    from verifier.construction import make_tasks, write_tasks

    tasks, report = make_tasks(d / "h.duckdb", seed=seed)
    write_tasks(tasks, d / "tasks.jsonl")
    return {"pairs": report.pairs, "candidates": report.candidates}


def _stage_rollout(d: Path, _n: int, _seed: int, sample: int) -> dict:
    from verifier.agents.rollout import rollout
    from verifier.contract import load_tasks

    tasks = list(load_tasks(d / "tasks.jsonl").values())
    by_program: dict[str, list] = {}
    for t in tasks:
        by_program.setdefault(t.program, []).append(t)
    chosen, i = [], 0
    while len(chosen) < min(sample, len(tasks)):  # round-robin over programs: every kind of task
        for group in by_program.values():
            if i < len(group) and len(chosen) < sample:
                chosen.append(group[i])
        i += 1
    out = d / "oracle.jsonl"
    out.unlink(missing_ok=True)
    rollout("oracle", chosen, d / "h.duckdb", out)
    return {"trajectories": sum(1 for _ in out.open())}


def _stage_verify(d: Path, _n: int, _seed: int, _sample: int) -> dict:
    from verifier.scoring import verify_batch

    t0, c0 = time.perf_counter(), time.process_time()
    verdicts = list(verify_batch(d / "oracle.jsonl", d / "tasks.jsonl", d / "h.duckdb", backend="serial"))
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)  # query processes that ended (live ones are not counted)
    cpu += kids.ru_utime + kids.ru_stime
    n = max(len(verdicts), 1)
    return {"verified": len(verdicts), "verify_ms": 1000 * wall / n, "verify_cpu_ms": 1000 * cpu / n,
            "oracle_success": sum(bool(v.get("success")) for v in verdicts) / n, **_scan_rates(d / "h.duckdb")}


#: Population queries an agent writes (and the verifier re-runs as evidence): one full scan each.
SCANS = {
    "chart_scan_s": "SELECT itemid, count(*), avg(value_numeric) FROM chart_events GROUP BY itemid",
    "lab_scan_s": "SELECT itemid, count(*), avg(value_numeric) FROM lab_events GROUP BY itemid",
    "lab_join_s": "SELECT a.admission_type, count(*) FROM lab_events l JOIN admissions a USING (admissionid) "
                  "GROUP BY 1",
}


def _scan_rates(db: Path) -> dict:
    """Seconds of each ``SCANS`` query on ``db`` under the query process's DuckDB settings
    (``RESOURCE_CONFIG``: one thread, its memory limit), best of 3: the figure that grows with
    the event tables and meets ``VerifyConfig.query_time_limit_s`` first."""
    import duckdb

    from verifier.sql._execute import RESOURCE_CONFIG

    con = duckdb.connect(str(db), read_only=True, config={k: v for k, v in RESOURCE_CONFIG.items() if v != ""})
    mid = con.execute("SELECT CAST(avg(patientid) AS BIGINT) FROM patients").fetchone()[0]
    # a re-key's per-value lookup (``_rekey``, past ``MAX_SET_ROWS``): one id inside the range
    scans = {**SCANS, "chart_lookup_s": f"SELECT count(*) FROM chart_events WHERE patientid = {mid}"}
    out = {}
    for key, sql in scans.items():
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            con.execute(sql).fetchall()
            best = min(best, time.perf_counter() - t0)
        out[key] = best
    con.close()
    return out


STAGES = {"generate": _stage_generate, "build": _stage_build, "make-tasks": _stage_make_tasks,
          "rollout": _stage_rollout, "verify": _stage_verify}


def _run_stage(stage: str, d: Path, n: int, seed: int, sample: int) -> dict:
    cmd = [sys.executable, __file__, "--child", stage, "--dir", str(d), "--sizes", str(n),
           "--seed", str(seed), "--sample", str(sample)]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"stage {stage} at {n} patients failed:\n{proc.stderr[-4000:]}")
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    res["seconds"] = wall
    return res


def _load() -> str:
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


# ----------------------------------------------------------------------------- driver

def measure(n: int, seed: int, sample: int, keep: bool = False) -> dict:
    """Run every stage for ``n`` patients in a fresh /tmp folder; returns the figures of one size.

    Args:
        n: patients (``generate_hospital``'s ``n_patients``, >= 20).
        seed: generator and make-tasks seed.
        sample: tasks the oracle plays and the verifier scores.
        keep: keep the folder (its path is in the result) instead of deleting it.

    Returns:
        ``{"patients", "<stage>": {seconds, peak_rss_mib, ...}, "load": "1/5/15 min"}``.
    """
    d = Path(tempfile.mkdtemp(prefix=f"growth{n}_", dir="/tmp"))
    result: dict = {"patients": n, "dir": str(d)}
    try:
        for stage in STAGES:
            result[stage] = _run_stage(stage, d, n, seed, sample)
            print(f"  {n:>7,d} patients  {stage:<10s} {result[stage]['seconds']:8.1f} s  "
                  f"{result[stage]['peak_rss_mib']:7.0f} MiB  load {_load()}", file=sys.stderr, flush=True)
        result["disk_mb"] = result["build"]["db_mb"]
    finally:
        result["load"] = _load()
        if not keep:
            shutil.rmtree(d, ignore_errors=True)
    return result


def print_table(results: list[dict]) -> None:
    """Print the growth table (Markdown) and the per-patient ratios to the first size."""
    print("| patients | rows | chart_events | lab_events | DB MB | generate s | build s | make-tasks s (pairs) "
          "| peak RSS MiB generate/build/make-tasks/verify | verify ms/traj wall (CPU) | oracle success | load avg 1/5/15 |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in results:
        print(f"| {r['patients']:,d} | {r['build']['rows']:,d} | {r['build']['chartevents']:,d} "
              f"| {r['build']['labevents']:,d} | {r['disk_mb']:.0f} | {r['generate']['seconds']:.1f} "
              f"| {r['build']['seconds']:.1f} | {r['make-tasks']['seconds']:.1f} ({r['make-tasks']['pairs']}) "
              f"| {'/'.join(format(r[s]['peak_rss_mib'], '.0f') for s in ('generate', 'build', 'make-tasks', 'verify'))} "
              f"| {r['verify']['verify_ms']:.0f} ({r['verify']['verify_cpu_ms']:.0f}) "
              f"| {r['verify']['oracle_success']:.0%} of {r['verify']['verified']} | {r['load']} |")
    base = results[0]
    print(f"\nper-patient cost relative to {base['patients']:,d} patients (1.0 = linear; verify per trajectory "
          "relative, 1.0 = flat):")
    for r in results[1:]:
        k = r["patients"] / base["patients"]
        per = {s: r[s]["seconds"] / (k * base[s]["seconds"]) for s in ("generate", "build", "make-tasks")}
        print(f"  x{k:g}: rows x{r['build']['rows'] / base['build']['rows']:.1f}, "
              + ", ".join(f"{s} {v:.2f}" for s, v in per.items())
              + f", disk {r['disk_mb'] / (k * base['disk_mb']):.2f}, "
              f"verify/traj x{r['verify']['verify_ms'] / base['verify']['verify_ms']:.2f}")
    scanned = [r for r in results if "chart_scan_s" in r["verify"]]
    if scanned:
        print(f"\nfull scans under the query process's settings (one thread; best of 3), and the same rate at "
              f"full MIMIC-IV ({FULL_CHART:,d} chart events, {FULL_LAB:,d} lab events):")
        for r in scanned:
            v, b = r["verify"], r["build"]
            print(f"  {r['patients']:>7,d} patients: chart_events GROUP BY {v['chart_scan_s'] * 1000:.0f} ms "
                  f"(-> {v['chart_scan_s'] * FULL_CHART / b['chartevents']:.1f} s), lab_events GROUP BY "
                  f"{v['lab_scan_s'] * 1000:.0f} ms (-> {v['lab_scan_s'] * FULL_LAB / b['labevents']:.1f} s), "
                  f"lab_events JOIN admissions {v['lab_join_s'] * 1000:.0f} ms "
                  f"(-> {v['lab_join_s'] * FULL_LAB / b['labevents']:.1f} s), one patient's chart_events "
                  f"{v['chart_lookup_s'] * 1000:.1f} ms")


def main(argv: list[str] | None = None) -> None:
    """Run the growth benchmark (or one child stage with ``--child``)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="400,4000,20000", help="patients per size, comma-separated")
    ap.add_argument("--sample", type=int, default=24, help="tasks the oracle plays and the verifier scores")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", type=Path, help="also write the raw figures here")
    ap.add_argument("--keep", action="store_true", help="keep the /tmp folders")
    ap.add_argument("--table", type=Path, help="print the table of a --json file written before, run nothing")
    ap.add_argument("--child", choices=tuple(STAGES), help=argparse.SUPPRESS)
    ap.add_argument("--dir", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]

    if args.child:
        res = STAGES[args.child](args.dir, sizes[0], args.seed, args.sample)
        res["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB
        print(json.dumps(res))
        return

    if args.table:
        print_table(json.loads(args.table.read_text()))
        return
    print(f"growth benchmark: sizes {sizes}, sample {args.sample}, seed {args.seed}, cpus {os.cpu_count()}, "
          f"load at start {_load()}", flush=True)
    results = []
    for n in sizes:
        results.append(measure(n, args.seed, args.sample, args.keep))
        if args.json:  # after each size, so a run stopped at a large size keeps the smaller ones
            args.json.write_text(json.dumps(results, indent=1))
    print_table(results)


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    main()
