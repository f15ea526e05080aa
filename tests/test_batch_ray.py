"""The Ray backend of verify_batch on a local Ray instance: same output as the process pool.

Ray is started in a fresh child interpreter: starting Ray forks helper
processes, which is unsafe from a test process that already runs DuckDB and
other threads (it crashed with a segfault in ``subprocess`` here). A real
driver calls ``ray.init`` at start-up, as the child does.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from batch_data import episodes, pick_pairs

from verifier.contract import Task
from verifier.scoring import verify_batch

CHILD = r"""
import sys, ray
from verifier.scoring import verify_file
tasks, trajs, db, out = sys.argv[1:5]
for attempt in (1, 2):  # a loaded machine can miss Ray's start-up deadline once
    try:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        break
    except RuntimeError:
        ray.shutdown()
        if attempt == 2:
            raise
try:
    n = verify_file(trajs, tasks, db, out, workers=2, backend="ray", chunk_size=3)
    assert ray.is_initialized()  # an instance started by the caller is left running
finally:
    ray.shutdown()
print(n)
"""


def test_ray_backend_matches_process_backend(demo_db: Path, demo_tasks: list[Task], tmp_path: Path):
    pytest.importorskip("ray", reason="Ray is not installed (optional extra: pip install 'ehr-verifier[ray]'); Ray backend test skipped")
    tasks = pick_pairs(demo_tasks, 6)
    lines = episodes(demo_db, tasks)
    lines = lines + ["{not json", json.dumps({"trajectory_id": "t", "task_id": "missing"})] + lines[:5]
    tasks_file, traj_file, out = tmp_path / "tasks.jsonl", tmp_path / "trajectories.jsonl", tmp_path / "ray.jsonl"
    tasks_file.write_text("".join(t.model_dump_json() + "\n" for t in tasks), encoding="utf-8")
    traj_file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    expected = list(verify_batch(lines, tasks, demo_db, workers=2, backend="process", as_json=True, chunk_size=3))
    run = subprocess.run([sys.executable, "-c", CHILD, str(tasks_file), str(traj_file), str(demo_db), str(out)],
                         capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip().splitlines()[-1] == str(len(lines))
    got = out.read_text(encoding="utf-8").splitlines()
    assert got == expected
    assert sum("error" in json.loads(line) for line in got) == 2
