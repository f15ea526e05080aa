"""A worker's database-level lookups, warmed at start (issue 15), change no decoy and no verdict.

``warm_decoy_lookups`` fills the per-database caches that decoys, nuisances and re-keyed
witnesses read (table listing, candidate values and their label words, entity listings, id-column
values) for the columns a set of Noise tasks names, so that those reads do not land inside a
batch. What it must guarantee: every task's decoy, nuisance and re-keyed witness afterwards equal
the ones computed with every cache empty, the per-task results are not precomputed (each task's
first trajectory still computes them), and the first decoys after the warm-up read nothing more of
the database-level kind. Checked on the synthetic hospital and, when present, the real demo.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.abstention import _decoy, _rekey, warm_decoy_lookups
from verifier.abstention._warm import decoy_lookup_columns
from verifier.contract import Task


def _forget() -> None:
    for store in (_decoy._CACHE, _decoy._LOOKUPS, _rekey._CACHE, _rekey._COLUMNS, _rekey._VALUES):
        store.clear()
    _rekey._named_from.cache_clear()


def _perturbations(db: Path, tasks: list[Task]) -> list[tuple]:
    out = []
    for t in tasks:
        variant = _rekey.rekeyed_witness(db, t.reference.witness, _rekey.task_named_values(t)) or t.reference.witness
        out.append((t.task_id, _decoy.decoy_witness(db, t), _decoy.decoy_markers(db, t),
                    _decoy.item_nuisance(db, t, variant), variant))
    return out


def _database_lookups() -> set:
    """The database-level entries: every lookup but the per-value label and ``identifies`` ones."""
    return {k for k in _decoy._LOOKUPS if k[1] in ("tables", "entities", "entity_ids", "candidate_words", "labels")} | set(_rekey._VALUES)


def _check(db: Path, tasks: list[Task]) -> None:
    noise = [t for t in tasks if t.condition == "noise" and t.reference.witness]
    assert noise, "the construction gave no Noise task with witness rows"
    _forget()
    cold = _perturbations(db, noise)
    _forget()
    stats = warm_decoy_lookups(db, tasks)
    assert stats["columns"] >= 1 and stats["warmed"] == stats["columns"], stats
    assert not _decoy._CACHE and not _rekey._CACHE and not _rekey._named_from.cache_info().currsize, \
        "the warm-up kept per-task results"
    warmed = _database_lookups()
    assert warmed, "the warm-up read nothing"
    assert _perturbations(db, noise) == cold
    assert _database_lookups() == warmed, f"lookups read after the warm-up: {sorted(map(str, _database_lookups() - warmed))[:5]}"


def test_warm_up_changes_no_perturbation_on_the_synthetic_hospital(synth_db: Path, synth_tasks: list) -> None:
    _check(synth_db, synth_tasks)


def test_warm_up_changes_no_perturbation_on_the_real_demo(demo_db: Path, demo_tasks: list) -> None:
    _check(demo_db, demo_tasks)


def test_warm_up_budget_bounds_the_columns_read(synth_db: Path, synth_tasks: list) -> None:
    _forget()
    stats = warm_decoy_lookups(synth_db, synth_tasks, budget_s=0.0)
    assert stats["warmed"] == 0 and stats["columns"] >= 1


def test_lookup_columns_come_from_named_witness_values_only(synth_db: Path, synth_tasks: list) -> None:
    tables = _decoy._tables(_decoy.thread_connection(synth_db), str(synth_db.resolve()))
    assert not decoy_lookup_columns(tables, [t for t in synth_tasks if t.condition == "clean"])
    for t in (t for t in synth_tasks if t.condition == "noise" and t.reference.witness):
        named = _rekey.task_named_values(t)
        found = decoy_lookup_columns(tables, [t])
        expected = {(w.table.lower(), c.lower()) for w in t.reference.witness for row in w.rows for c, v in row.items()
                    if v is not None and not isinstance(v, bool) and str(v) in named and c.lower() in tables.get(w.table.lower(), ())}
        assert set(found) == expected and all(n == 1 for n in found.values()), t.task_id


def _queried(con, table: str, col: str, values: set[int]) -> set:
    wanted = sorted(values)
    return {r[0] for r in con.execute(
        f'SELECT DISTINCT "{col}" FROM "{table}" WHERE "{col}" IN ({", ".join("?" for _ in wanted)})', wanted).fetchall()}


@pytest.mark.parametrize("which", ["synthetic", "real demo"])
def test_entity_ids_answer_as_the_query_would(which: str, request: pytest.FixtureRequest) -> None:
    """The cached id sets (``_decoy.entity_ids``) tell which witness ids exist exactly as a query
    of those ids does: ids present, invented, negative, and beyond every id, at each entity level."""
    db = request.getfixturevalue("synth_db" if which == "synthetic" else "demo_db")
    _forget()
    con = _decoy.thread_connection(db)
    key = str(Path(db).resolve())
    for table, cols in _decoy.ENTITY_LEVELS:
        ids = _decoy.entity_ids(con, key, table, cols[0])
        assert ids, f"{table}.{cols[0]}: no id set read"
        real = sorted(ids)
        probes = [set(real[:3]), {real[-1], real[-1] + 1, -5}, {0, 987_654_321}, set(real[::7][:20]) | {real[0] - 1}]
        for values in probes:
            assert _decoy._present(con, key, table, cols[0], values) == _queried(con, table, cols[0], values), (table, values)
