"""The Ray backend of verify_batch on a local Ray instance: same output as the process pool."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from batch_data import episodes, pick_pairs
from verifier.batch import verify_batch
from verifier.task import Task


def test_ray_backend_matches_process_backend(demo_db: Path, demo_tasks: list[Task]):
    ray = pytest.importorskip("ray", reason="Ray is not installed (optional extra: pip install 'ehr-verifier[ray]'); Ray backend test skipped")
    tasks = pick_pairs(demo_tasks, 6)
    lines = episodes(demo_db, tasks)
    lines = lines + ["{not json", json.dumps({"trajectory_id": "t", "task_id": "missing"})] + lines[:5]
    expected = list(verify_batch(lines, tasks, demo_db, workers=2, backend="process", as_json=True, chunk_size=3))
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        got = list(verify_batch(lines, tasks, demo_db, workers=2, backend="ray", as_json=True, chunk_size=3))
        assert ray.is_initialized()  # an instance started by the caller is left running
    finally:
        ray.shutdown()
    assert got == expected
    assert sum('"error"' in l[:40] for l in got) == 2
