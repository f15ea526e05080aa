"""What a witness overlay shows, derived independently of how it is built (issue 15 changed the
``replace`` view from a NOT EXISTS subquery to an ANTI JOIN; the rows must not change).

The rule (``verifier.abstention._witness`` docstring): ``insert`` shows every base row plus the
witness rows; ``replace`` shows the base rows whose key matches no witness row, key compared NULL-
safely (``IS NOT DISTINCT FROM``), plus the witness rows. Here the expected multiset is computed in
Python from the base rows read on a plain read-only connection, for keys drawn at random from the
real rows of the synthetic hospital (and the real demo when present), with NULL and invented keys
mixed in, and compared with what the overlay returns.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verifier.abstention._witness import Overlay
from verifier.contract import WitnessTable
from verifier.sql import open_readonly

#: (table, key columns) pairs the constructions use for ``replace`` witnesses (value-level noise).
KEYED = [("lab_events", ("lab_event_id",)), ("admissions", ("admissionid",)),
         ("drg_codes", ("admissionid", "drg_type", "drg_code")), ("prescriptions", ("pharmacy_id", "poe_id", "drug"))]

_SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _rows(db: Path, table: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    con = open_readonly(db)
    try:
        cur = con.execute(f'SELECT * FROM "{table}"')
        return [d[0] for d in cur.description], cur.fetchall()
    finally:
        con.close()


def _same(a: Any, b: Any) -> bool:  # IS NOT DISTINCT FROM on Python values
    return a is None and b is None or (a is not None and b is not None and a == b)


def _check(db: Path, data: st.DataObject) -> None:
    table, key = data.draw(st.sampled_from(KEYED), label="table")
    cols, base = _rows(db, table)
    if not base:
        pytest.skip(f"{table} is empty in this database")
    idx = [cols.index(k) for k in key]
    picks = data.draw(st.lists(st.integers(0, len(base) - 1), min_size=1, max_size=4), label="rows")
    witness_rows: list[dict[str, Any]] = []
    for n in picks:
        row = dict(zip(cols, base[n]))
        kind = data.draw(st.sampled_from(["same key", "NULL key part", "invented key"]), label="kind")
        if kind == "NULL key part":
            row[key[-1]] = None
        elif kind == "invented key":
            row[key[0]] = 987_654_321 if isinstance(row[key[0]], int) else "no-such-key"
        row = {c: (v.isoformat(sep=" ") if hasattr(v, "isoformat") else v) for c, v in row.items()}
        witness_rows.append(row)
    ov = Overlay(db, [WitnessTable(table=table, mode="replace", key=list(key), rows=witness_rows)])
    try:
        got = Counter(ov.con.execute(f'SELECT * FROM "{table}"').fetchall())
        typed = ov.con.execute("SELECT * FROM temp.main.__witness_0").fetchall()
    finally:
        ov.close()
    keys = [tuple(r[i] for i in idx) for r in typed]
    kept = [r for r in base if not any(all(_same(r[i], k[j]) for j, i in enumerate(idx)) for k in keys)]
    assert got == Counter(kept + typed)


@_SETTINGS
@given(data=st.data())
def test_replace_overlay_shows_unmatched_base_rows_plus_witness_rows_synthetic(synth_db: Path, data: st.DataObject) -> None:
    _check(synth_db, data)


@_SETTINGS
@given(data=st.data())
def test_replace_overlay_shows_unmatched_base_rows_plus_witness_rows_real_demo(demo_db: Path, data: st.DataObject) -> None:
    _check(demo_db, data)


def test_replace_with_a_null_key_replaces_the_rows_whose_key_is_null(synth_db: Path) -> None:
    """NULL-safe key comparison: a witness row with a NULL key stands for the base rows with a
    NULL key (a plain ``=`` or ``NOT IN`` would keep them, or drop every row)."""
    cols, base = _rows(synth_db, "lab_events")
    n_base = len(base)
    row = dict(zip(cols, base[0]))
    row = {c: (v.isoformat(sep=" ") if hasattr(v, "isoformat") else v) for c, v in row.items()}
    row["value_unit"] = None
    nulls = sum(1 for r in base if r[cols.index("value_unit")] is None)
    ov = Overlay(synth_db, [WitnessTable(table="lab_events", mode="replace", key=["value_unit"], rows=[row])])
    try:
        n = ov.con.execute("SELECT count(*) FROM lab_events").fetchone()[0]
    finally:
        ov.close()
    assert n == n_base - nulls + 1
