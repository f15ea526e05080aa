"""The per-stage breakdown's timed query process (``benchmarks/timed_query_process.py``, issue 15)
serves exactly what the real query process serves and accounts for its own CPU: its counters
name each connection it opened and each query it ran on it, and the timed parts never exceed
the CPU it reports (the breakdown's "other" row is the difference)."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from verifier.sql import QueryFailed, base_spec, execute_guarded

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import timed_query_process as tqp  # noqa: E402

QUERIES = ["SELECT count(*) AS n FROM patients", "SELECT * FROM patients ORDER BY patientid LIMIT 3",
           "SELECT no_such_column FROM patients"]


def _run_all(db: Path) -> list[object]:
    out: list[object] = []
    for sql in QUERIES:
        try:
            res = execute_guarded(base_spec(db), sql, time_limit_s=5.0, row_cap=100)
            out.append((res.columns, res.rows, res.truncated))
        except QueryFailed as exc:
            out.append(("failed", exc.message))
    return out


def _on_new_thread(fn, *args):  # a fresh thread gets a fresh query process
    box: list[object] = []
    t = threading.Thread(target=lambda: box.append(fn(*args)))
    t.start()
    t.join()
    return box[0]


def test_timed_query_process_serves_the_same_results_and_counts_its_work(synth_db: Path, tmp_path: Path) -> None:
    from verifier.sql import thread_process

    plain = _on_new_thread(_run_all, synth_db)
    prefix = str(tmp_path / "child")
    tqp.install(prefix)
    try:
        def timed_run() -> tuple[list[object], dict]:
            results = _run_all(synth_db)
            return results, tqp.read(thread_process().pid, prefix)
        timed, counters = _on_new_thread(timed_run)
    finally:
        tqp.uninstall()
    assert timed == plain
    assert any(isinstance(r, tuple) and r[0] == "failed" for r in timed)  # a failing query is served too
    opened = [k for k in counters["counts"] if k.startswith("open|")]
    ran = {k: n for k, n in counters["counts"].items() if k.startswith("exec|")}
    assert len(opened) == 1 and "'base'" in opened[0]
    assert sum(ran.values()) == len(QUERIES)
    assert 0 < sum(counters["seconds"].values()) <= counters["cpu"]
