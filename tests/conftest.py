"""Shared fixtures: the real MIMIC-IV demo (when present) and the synthetic hospital.

Real-data fixtures skip, with the reason, only when the demo folder is absent;
CI has it (``../shared/data/mimic-iv-demo``), so there they always run.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
MIMIC_DIR = Path(os.environ.get("MIMIC_DEMO_DIR", REPO.parent / "shared" / "data" / "mimic-iv-demo"))
MEDS_FILE = Path(
    os.environ.get(
        "MIMIC_DEMO_MEDS",
        MIMIC_DIR.parent / "mimic-iv-demo-meds" / "mimic_iv_demo_meds_events.parquet",
    )
)


def _require_demo() -> Path:
    if not (MIMIC_DIR / "hosp").is_dir():
        pytest.skip(f"real MIMIC-IV demo not found at {MIMIC_DIR} (set MIMIC_DEMO_DIR); real-data test skipped")
    return MIMIC_DIR


@pytest.fixture(scope="session")
def mimic_dir() -> Path:
    """Folder of the real MIMIC-IV demo (skips, saying so, when absent)."""
    return _require_demo()


@pytest.fixture(scope="session")
def meds_file() -> Path:
    """The MEDS chart-events parquet beside the demo (skips when absent)."""
    _require_demo()
    if not MEDS_FILE.is_file():
        pytest.skip(f"MEDS chart events not found at {MEDS_FILE}; real-data test skipped")
    return MEDS_FILE


@pytest.fixture(scope="session")
def demo_db(tmp_path_factory: pytest.TempPathFactory, mimic_dir: Path, meds_file: Path) -> Path:
    """The real demo built once per session (with MEDS chart events), read-only afterwards."""
    from verifier.database import build_database

    out = tmp_path_factory.mktemp("demo_db") / "demo.duckdb"
    build_database(mimic_dir, out, chartevents_meds=meds_file)
    return out


@pytest.fixture(scope="session")
def synth_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The synthetic default hospital generated once per session (seed 0), as MIMIC-IV CSVs."""
    from verifier.synthetic import generate_hospital

    return generate_hospital(tmp_path_factory.mktemp("synth") / "hospital", seed=0)


@pytest.fixture(scope="session")
def synth_db(tmp_path_factory: pytest.TempPathFactory, synth_dir: Path) -> Path:
    """The synthetic hospital built into DuckDB once per session."""
    from verifier.database import build_database

    out = tmp_path_factory.mktemp("synth_db") / "synth.duckdb"
    build_database(synth_dir, out)
    return out


@pytest.fixture(scope="session")
def demo_tasks(demo_db: Path) -> list:
    """Clean-Noise task pairs built once per session from the real demo (``make_tasks``, seed 0)."""
    from verifier.construction import make_tasks

    tasks, _report = make_tasks(demo_db, seed=0)
    return tasks


@pytest.fixture(scope="session")
def synth_tasks(synth_db: Path) -> list:
    """Clean-Noise task pairs built once per session from the synthetic hospital (``make_tasks``, seed 0)."""
    from verifier.construction import make_tasks

    tasks, _report = make_tasks(synth_db, seed=0)
    return tasks
