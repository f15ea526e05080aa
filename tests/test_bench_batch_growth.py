"""``benchmarks/bench_batch.py`` growth section (issue 15): a replicated database is another
database, so tasks recording the original's fingerprint (``make-tasks`` stamps every task) are
refused there as ``InputError`` records; the benchmark re-stamps them for each size and stops
on any error record instead of timing errors (before, on a fresh machine, x4 and x16 "scored"
0/512 in 0.1 ms per trajectory and printed a growth of x0.05)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from verifier.scoring import BatchVerifier

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import bench_batch  # noqa: E402


def _score(lines: list[str], tasks: dict, db: Path) -> list[dict]:
    with BatchVerifier(tasks, db, backend="serial") as bv:
        return [json.loads(line) for line in bv.score_lines(lines)]


def test_growth_scores_real_work_on_a_replicated_database(synth_db: Path, synth_tasks: list, tmp_path: Path) -> None:
    tasks = {t.task_id: t for t in synth_tasks}
    assert all(t.db_fingerprint for t in tasks.values()), "make_tasks stamps every task with its database"
    picked = bench_batch._pick({k: t for k, t in tasks.items() if t.scope == "patient"}, 4, 0)
    rdb = bench_batch.replicate(synth_db, tmp_path / "x2.duckdb", 2)
    lines = bench_batch.grpo_batch(picked, rdb, seed=0)

    unstamped = _score(lines, tasks, rdb)
    assert all("error" in r and "success" not in r for r in unstamped)
    with pytest.raises(SystemExit, match="error records"):
        bench_batch._check_errors([json.dumps(r) for r in unstamped], "x2")

    stamped = _score(lines, bench_batch._stamped(tasks, rdb), rdb)
    assert all("success" in r for r in stamped)
    assert any(r["success"] for r in stamped)
    bench_batch._check_errors([json.dumps(r) for r in stamped], "x2")  # no error record: returns


def test_replicated_copies_share_no_record_ids(synth_db: Path, tmp_path: Path) -> None:
    """Each copy of a replicated size is its own patients with their own records: every id-like
    column of a repeated table has ``copies`` times the distinct values (text ids such as
    ``emar_id`` and ``poe_id`` included: before, only patient, admission and stay ids were offset,
    so copy k's dose details joined copy 0's administrations and a patient-scoped reference query's
    own scan grew x16), while dictionary and staff keys (``itemid``, ``specimen_itemid``, ``caregiver_id``,
    ``order_provider_id``) keep pointing at the same rows; copy 0 is the original."""
    import duckdb

    copies = 3
    rdb = bench_batch.replicate(synth_db, tmp_path / "x3.duckdb", copies)
    src, rep = duckdb.connect(str(synth_db), read_only=True), duckdb.connect(str(rdb), read_only=True)
    rep.execute(f"ATTACH '{synth_db.as_posix()}' AS src (READ_ONLY)")
    try:
        checked = {"own": 0, "kept": 0}
        for (table,) in src.execute("SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main'").fetchall():
            cols = [c for (c,) in src.execute(f"SELECT column_name FROM duckdb_columns() WHERE table_name = '{table}' "
                                               "AND schema_name = 'main' ORDER BY column_index").fetchall()]
            n_src = src.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]
            repeated = any(c.lower() in bench_batch.ID_COLUMNS for c in cols)
            assert rep.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0] == n_src * (copies if repeated else 1)
            if not repeated or not n_src:
                continue
            for c in (c for c in cols if c.lower().endswith("id")):
                d_src = src.execute(f'SELECT count(DISTINCT "{c}") FROM "{table}"').fetchone()[0]
                d_rep = rep.execute(f'SELECT count(DISTINCT "{c}") FROM "{table}"').fetchone()[0]
                if c.lower().endswith(("itemid", "caregiver_id", "provider_id")):  # keys of unrepeated tables
                    assert d_rep == d_src, (table, c)
                    checked["kept"] += 1
                else:
                    assert d_rep == copies * d_src, (table, c)
                    checked["own"] += bool(d_src)
            # copy 0 is the original: every source row is there unchanged (multiset difference empty)
            assert rep.execute(f'SELECT count(*) FROM (SELECT * FROM src.main."{table}" EXCEPT ALL '
                               f'SELECT * FROM main."{table}")').fetchone()[0] == 0
        assert checked["own"] >= 10 and checked["kept"] >= 3
    finally:
        src.close()
        rep.close()
