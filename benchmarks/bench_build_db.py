"""Benchmark of ``build-db`` on the MIMIC-IV demo: wall time and peak memory vs a plain DuckDB baseline.

Each measurement runs in a fresh child process, which reports its own wall
time and peak resident set size (``resource.getrusage(RUSAGE_SELF).ru_maxrss``),
so the numbers of one run do not leak into the next.

- build:    ``verifier.build_db.build_database`` (header checks, typed read, renames,
            row-count checks, MEDS chart events, admission age, comments, atomic publish).
- baseline: plain DuckDB in the same run: ``CREATE TABLE t AS SELECT * FROM read_csv_auto(file)``
            for the same CSV files and ``CREATE TABLE AS SELECT * FROM read_parquet(meds)``,
            with no renames, no checks, no linking.

Usage::

    python benchmarks/bench_build_db.py [--mimic-dir DIR] [--meds FILE] [--repeat 3]

Prints the median of ``--repeat`` runs and the build/baseline ratios. Target
(issue 2): the demo builds in under 60 s here. Never asserts on time.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_MIMIC = Path(os.environ.get("MIMIC_DEMO_DIR", REPO.parent / "shared" / "data" / "mimic-iv-demo"))
DEFAULT_MEDS = DEFAULT_MIMIC.parent / "mimic-iv-demo-meds" / "mimic_iv_demo_meds_events.parquet"
TARGET_S = 60.0


def _child_build(mimic_dir: str, meds: str | None, out: str) -> dict[str, float]:
    from verifier.database import build_database

    t0 = time.perf_counter()
    report = build_database(mimic_dir, out, chartevents_meds=meds)
    return {"seconds": time.perf_counter() - t0, "rows": sum(t.rows for t in report.tables)}


def _child_baseline(mimic_dir: str, meds: str | None, out: str) -> dict[str, float]:
    import duckdb

    t0 = time.perf_counter()
    con = duckdb.connect(out)
    files = sorted(p for sub in ("hosp", "icu") for p in (Path(mimic_dir) / sub).glob("*.csv*"))
    for i, path in enumerate(files):
        con.execute(f"CREATE TABLE t{i} AS SELECT * FROM read_csv_auto('{path}')")
    if meds:
        con.execute(f"CREATE TABLE meds AS SELECT * FROM read_parquet('{meds}')")
    rows = sum(con.execute(f"SELECT count(*) FROM t{i}").fetchone()[0] for i in range(len(files)))
    if meds:
        rows += con.execute("SELECT count(*) FROM meds").fetchone()[0]  # the whole MEDS file, not only chart events
    con.close()
    return {"seconds": time.perf_counter() - t0, "rows": rows}


def _run_child(kind: str, mimic_dir: Path, meds: Path | None) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, __file__, "--child", kind, "--mimic-dir", str(mimic_dir),
               "--out", str(Path(tmp) / "bench.duckdb")]
        if meds is not None:
            cmd += ["--meds", str(meds)]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{kind} child failed:\n{proc.stderr}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["process_seconds"] = wall
    return result


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark (or one child measurement with ``--child``)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mimic-dir", type=Path, default=DEFAULT_MIMIC)
    ap.add_argument("--meds", type=Path, default=DEFAULT_MEDS)
    ap.add_argument("--no-meds", action="store_true", help="build without --chartevents-meds")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--child", choices=("build", "baseline"), help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    meds = None if args.no_meds else args.meds

    if args.child:
        fn = _child_build if args.child == "build" else _child_baseline
        res = fn(str(args.mimic_dir), str(meds) if meds else None, args.out)
        res["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB
        print(json.dumps(res))
        return

    if not (args.mimic_dir / "hosp").is_dir():
        raise SystemExit(f"MIMIC-IV demo not found at {args.mimic_dir} (set MIMIC_DEMO_DIR or --mimic-dir)")
    runs: dict[str, list[dict[str, float]]] = {"build": [], "baseline": []}
    for _ in range(args.repeat):
        for kind in ("baseline", "build"):  # interleaved, so drift hits both alike
            runs[kind].append(_run_child(kind, args.mimic_dir, meds))

    def med(kind: str, key: str) -> float:
        return statistics.median(r[key] for r in runs[kind])

    print(f"build-db benchmark: {args.mimic_dir}  (MEDS: {meds or 'none'}; median of {args.repeat}; cpus={os.cpu_count()})")
    print(f"{'':10s} {'seconds':>9s} {'process s':>10s} {'peak RSS MiB':>13s} {'rows':>10s}")
    for kind in ("baseline", "build"):
        print(f"{kind:10s} {med(kind, 'seconds'):9.2f} {med(kind, 'process_seconds'):10.2f} "
              f"{med(kind, 'peak_rss_mib'):13.0f} {int(med(kind, 'rows')):10,d}")
    t_ratio = med("build", "seconds") / med("baseline", "seconds")
    m_ratio = med("build", "peak_rss_mib") / med("baseline", "peak_rss_mib")
    print(f"ratio build/baseline: time x{t_ratio:.2f}, peak memory x{m_ratio:.2f}")
    verdict = "met" if med("build", "process_seconds") < TARGET_S else "NOT met"
    print(f"target: demo build under {TARGET_S:.0f} s -> {verdict} ({med('build', 'process_seconds'):.1f} s incl. interpreter start)")


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    main()
