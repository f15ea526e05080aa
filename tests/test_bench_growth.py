"""``benchmarks/bench_growth.py`` (issue 34 point 6): its verify stage scores every trajectory the
oracle logged (a size where verification drops or fails items would print a cost per trajectory
of work not done), its scans run under the query process's settings, and its table reports each
size's cost per patient against the first size. No timing is asserted."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from verifier.construction import write_tasks

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import bench_growth  # noqa: E402


def test_verify_stage_scores_every_oracle_trajectory(synth_db: Path, synth_tasks: list, tmp_path: Path) -> None:
    shutil.copy(synth_db, tmp_path / "h.duckdb")
    write_tasks(synth_tasks, tmp_path / "tasks.jsonl")
    programs = {t.program for t in synth_tasks}

    rolled = bench_growth._stage_rollout(tmp_path, 0, 0, 6)
    verified = bench_growth._stage_verify(tmp_path, 0, 0, 6)

    assert rolled["trajectories"] == 6
    assert verified["verified"] == 6
    assert verified["oracle_success"] == 1.0
    assert verified["verify_ms"] > 0 and verified["verify_cpu_ms"] > 0
    assert all(verified[k] > 0 for k in (*bench_growth.SCANS, "chart_lookup_s"))
    # round-robin over programs: the sample is not one program's tasks
    played = [line for line in (tmp_path / "oracle.jsonl").read_text().splitlines() if line]
    assert len(programs) == 1 or len({t.program for t in synth_tasks
                                      if any(f'"{t.task_id}#' in line for line in played)}) > 1


def _size(n: int, seconds: float, rows: int, verify_ms: float) -> dict:
    stage = {"seconds": seconds, "peak_rss_mib": 100.0}
    return {"patients": n, "load": "1.00/1.00/1.00", "disk_mb": rows / 1e5,
            "generate": stage, "rollout": stage, "make-tasks": {**stage, "pairs": 500},
            "build": {**stage, "rows": rows, "chartevents": rows // 2, "labevents": rows // 4},
            "verify": {**stage, "verify_ms": verify_ms, "verify_cpu_ms": verify_ms, "verified": 24,
                       "oracle_success": 1.0}}


def test_table_reports_cost_per_patient_against_the_first_size(capsys) -> None:
    bench_growth.print_table([_size(400, 2.0, 400_000, 50.0), _size(4000, 40.0, 4_000_000, 100.0)])
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| 4")]
    assert len(rows) == 2 and rows[1].startswith("| 4,000 | 4,000,000 |")
    # x10 patients at x20 the seconds: twice linear per patient; verify per trajectory x2
    assert "x10: rows x10.0, generate 2.00, build 2.00, make-tasks 2.00, disk 1.00, verify/traj x2.00" in out
