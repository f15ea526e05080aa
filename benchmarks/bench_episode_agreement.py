"""Agreement of the verifier with blind adjudication of LLM-agent episodes (issue 17).

Replays an episode corpus (JSON Lines made by ``benchmarks/episodes_from_study.py``; one file or a folder of
them) with the current verifier and prints the agreement table by condition and agent, the false accepts and
the false rejects with their reason codes and the reviewers' reasons, and the scoring time.

    python benchmarks/bench_episode_agreement.py --episodes fixtures/episodes/synthetic      # synthetic hospital
    python benchmarks/bench_episode_agreement.py --episodes DIR --db demo.duckdb             # e.g. the real demo

Without ``--db`` the synthetic default hospital (seed 0, as the demo and the committed corpus use) is
generated and built in a temporary folder. Episodes over the real MIMIC-IV demo are demo-derived data:
keep them outside the repository and pass their folder.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from verifier import VerifyConfig, verify
from verifier.scoring._agreement import compare, format_agreement, read_episodes


def _synthetic_db(work: Path) -> Path:
    from verifier.database import build_database
    from verifier.synthetic import generate_hospital

    hospital = generate_hospital(work / "hospital", seed=0)
    db = work / "hospital.duckdb"
    build_database(hospital, db)
    return db


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", required=True, help="corpus JSONL file or folder")
    ap.add_argument("--db", help="DuckDB the episodes were played on (default: build the synthetic hospital)")
    a = ap.parse_args(argv)
    episodes = read_episodes(a.episodes)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(a.db) if a.db else _synthetic_db(Path(tmp))
        config = VerifyConfig(db_path=str(db))
        t0 = time.perf_counter()
        verdicts = [verify(ep.trajectory, ep.task, config) for ep in episodes]
        dt = time.perf_counter() - t0
    print(format_agreement(compare(episodes, verdicts)))
    print(f"scored {len(episodes)} episodes in {dt:.1f} s ({len(episodes) / dt:.0f} episodes/s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
