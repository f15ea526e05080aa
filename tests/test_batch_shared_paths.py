"""Batch scoring's shared and cached paths give the verdicts of the uncached path (issue 15).

A GRPO-like batch on the synthetic hospital: several samples per task run the same queries in
cosmetic variants, so batch scoring shares results and analyses between them (the worker's
query cache, analyses by token stream, per-tree and per-text memos of the opaque check, decoys
and perturbations per task, per-column decoy lookups). Each verdict must equal the one ``verify``
gives with every cache and memo emptied before it, in any batch order, for any worker count.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verifier.agents.format import format_answer, tagged_response
from verifier.agents.reference_agents import abstention_reasoning
from verifier.contract import Step, Task, Trajectory, VerifyConfig
from verifier.scoring import verify_batch
from verifier.sql import QueryFailed, open_readonly, render_result, run_query
from verifier.verify import verify

SAMPLES = 4


def _forget_memos() -> None:
    """Empty every process-level cache and memo the Noise path keeps (the uncached path)."""
    from verifier.abstention import _decoy, _evaluate, _observation, _reasoning, _rekey, _small_cell, _witness
    from verifier.sql import _cache as query_cache

    query_cache.install(None)
    _evaluate._analyse.cache_clear()
    _evaluate._checked_or_none.cache_clear()
    _reasoning.normalise.cache_clear()
    _evaluate._parsed.cache_clear()
    for memo in (_reasoning._item_ids, _reasoning._own_concepts, _rekey._named_from, _small_cell._entity_patterns,
                 _small_cell._given_side, _observation._given):
        memo.cache_clear()
    for store in (_evaluate._BY_TOKENS._data, _evaluate._PERTURBATIONS, _decoy._CACHE, _decoy._LOOKUPS,
                  _rekey._CACHE, _witness._KEYS):
        store.clear()


def _variant(sql: str, rnd: random.Random) -> str:
    """The same token stream written differently: keyword case, line breaks, a comment."""
    out = re.sub(r"\b(select|from|where|and|order by|group by|limit)\b",
                 lambda m: m.group(1).upper() if rnd.random() < 0.5 else m.group(1).lower(), sql, flags=re.I)
    return out.replace(" FROM ", "\n  FROM ") + "  -- again"


def _steps(con, queries: list[str]) -> list[Step]:
    steps = []
    for i, q in enumerate(queries, start=1):
        try:
            res = run_query(con, q, time_limit_s=10, row_cap=10_000)
        except QueryFailed as exc:
            steps.append(Step(index=i, kind="sql", code=q, error=f"Error: {exc.message}"))
            continue
        cells = [[v if v is None or isinstance(v, (bool, int, float, str)) else str(v) for v in r] for r in res.rows]
        steps.append(Step(index=i, kind="sql", code=q, output=render_result(res.columns, res.rows),
                          columns=list(res.columns), rows=cells))
    return steps


def _batch(db: Path, tasks: list[Task]) -> list[str]:
    """``SAMPLES`` trajectories per task: the reference query (or a cosmetic variant of it) among a
    table count and a sample, ending in a right answer, a NULL with the task's requirement, a bare
    NULL, or a wrong answer."""
    rnd = random.Random(15)
    con = open_readonly(db)
    lines = []
    try:
        for task in tasks:
            ref = task.reference.sql.strip().rstrip(";")
            table = re.search(r"\bfrom\s+([a-z_]+)", ref, re.I)
            extra = [f"SELECT COUNT(*) AS n FROM {table.group(1)}", f"SELECT * FROM {table.group(1)} LIMIT 3"] if table else []
            for k in range(SAMPLES):
                queries = [*extra]
                queries.insert(k % (len(queries) + 1), ref if k % 2 == 0 else _variant(ref, rnd))
                steps = _steps(con, queries)
                cite = next(s.index for s in steps if s.code in (ref,) or s.code.endswith("-- again"))
                roll = (k + len(task.task_id)) % 4
                if task.condition == "clean":
                    final = tagged_response(format_answer(task.reference.answer) if roll < 2 else "NULL", f"From [step {cite}].")
                elif roll < 2:
                    final = tagged_response("NULL", abstention_reasoning(task, [cite]))
                elif roll == 2:
                    final = tagged_response("NULL", "The data do not allow an answer.")
                else:
                    final = tagged_response("3", "Computed.")
                lines.append(Trajectory(trajectory_id=f"{task.task_id}#{k}", task_id=task.task_id, steps=steps,
                                        final_response=final).model_dump_json())
    finally:
        con.close()
    return lines


@pytest.fixture(scope="module")
def grpo(synth_db: Path, synth_tasks: list[Task]) -> tuple[dict[str, Task], list[str], dict[str, str]]:
    """The batch, its tasks, and each trajectory's verdict on the uncached path (JSON text)."""
    noise = [t for t in synth_tasks if t.condition == "noise" and t.reference.witness]
    pairs = {t.pair_id for t in noise[:: max(1, len(noise) // 8)][:8]}
    tasks = sorted((t for t in synth_tasks if t.pair_id in pairs), key=lambda t: t.task_id)
    lines = _batch(synth_db, tasks)
    config = VerifyConfig(db_path=str(synth_db))
    by_id = {t.task_id: t for t in tasks}
    uncached = {}
    for line in lines:
        _forget_memos()
        traj = Trajectory.model_validate_json(line)
        uncached[traj.trajectory_id] = verify(traj, by_id[traj.task_id], config).model_dump_json()
    _forget_memos()
    return by_id, lines, uncached


def test_the_batch_exercises_the_shared_paths(grpo):
    by_id, lines, uncached = grpo
    noise_ok = [json.loads(v) for v in uncached.values() if json.loads(v)["condition"] == "noise"]
    assert sum(1 for t in by_id.values() if t.condition == "noise") >= 4
    assert any(v["success"] for v in noise_ok), "no Noise sample succeeds: the evidence paths are not exercised"
    assert any(not v["success"] and v["abstained"] for v in noise_ok)


@pytest.mark.parametrize("backend,workers", [("serial", 1), ("process", 2)])
def test_batch_verdicts_equal_the_uncached_path(grpo, synth_db: Path, backend: str, workers: int):
    by_id, lines, uncached = grpo
    out = list(verify_batch(lines, by_id, synth_db, workers=workers, backend=backend, as_json=True))
    assert [json.loads(o)["trajectory_id"] for o in out] == [json.loads(l)["trajectory_id"] for l in lines]
    assert {json.loads(o)["trajectory_id"]: o for o in out} == uncached


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(order=st.randoms(use_true_random=False))
def test_any_batch_order_gives_the_uncached_verdicts(grpo, synth_db: Path, order: random.Random):
    """Memos warm from whatever came before (another order, another task) never change a verdict."""
    by_id, lines, uncached = grpo
    shuffled = list(lines)
    order.shuffle(shuffled)
    out = verify_batch(shuffled, by_id, synth_db, backend="serial", as_json=True)
    assert {json.loads(o)["trajectory_id"]: o for o in out} == uncached


def test_decoy_label_lookup_holds_only_the_candidate_values(synth_db: Path, synth_tasks: list[Task], monkeypatch):
    """A population decoy replaces a named value by another of its column whose labels share no word
    with the question; only the column's first ``MAX_CANDIDATES + 1`` values are candidates, so the
    per-process label lookup must read and keep the labels of those values alone, not group every
    row of every labelled table (a whole-table scan per column, and a memo as large as the column)."""
    from verifier.abstention import _decoy

    monkeypatch.setattr(_decoy, "MAX_CANDIDATES", 2)
    _forget_memos()
    try:
        for task in synth_tasks:
            if task.condition == "noise" and task.scope == "population" and task.reference.witness:
                _decoy.decoy_witness(synth_db, task)
        lookups = {k[2:]: v for k, v in _decoy._LOOKUPS.items() if k[1] == "labels"}
        assert lookups, "no population decoy looked up labels: the synthetic tasks no longer exercise it"
        con = open_readonly(synth_db)
        try:
            wider = 0
            for (_db, table, col), labels in lookups.items():
                assert len(labels) <= _decoy.MAX_CANDIDATES + 1, (table, col, len(labels))
                wider += con.execute(f'SELECT count(DISTINCT "{col}") FROM "{table}"').fetchone()[0] > _decoy.MAX_CANDIDATES + 1
            assert wider, "every looked-up column has fewer values than the candidates: the bound is not exercised"
        finally:
            con.close()
    finally:
        _forget_memos()
