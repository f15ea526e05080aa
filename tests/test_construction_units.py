"""Fast unit tests of construction's parts (no clinical data needed)."""

from __future__ import annotations

import datetime as dt

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.construction.overlay import Overlay
from verifier.construction.spec import parse_program
from verifier.construction.splits import _balanced_allocation, split_patients
from verifier.construction.sqltext import render, sql_literal
from verifier.construction.typed import to_answer
from verifier.contract import CountAnswer, QuantityAnswer, RulesError, WitnessTable


@pytest.fixture()
def tiny_db(tmp_path):
    path = tmp_path / "tiny.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE lab_events (lab_event_id INTEGER, patientid INTEGER, itemid INTEGER, chart_time TIMESTAMP, value_numeric DOUBLE, value_unit VARCHAR)")
    con.execute("INSERT INTO lab_events VALUES (1, 7, 50971, '2150-01-01 10:00', 4.1, 'mEq/L'), (2, 7, 50912, '2150-01-01 10:00', NULL, 'mg/dL')")
    con.close()
    return path


def test_overlay_insert_and_replace(tiny_db):
    before = tiny_db.read_bytes()
    ov = Overlay(tiny_db)
    try:
        ins = WitnessTable(table="lab_events", rows=[{"lab_event_id": 3, "patientid": 7, "itemid": 50813,
                                                      "chart_time": "2150-01-01T11:00:00", "value_numeric": 2.0, "value_unit": "mmol/L"}])
        rep = WitnessTable(table="lab_events", mode="replace", key=["lab_event_id"],
                           rows=[{"lab_event_id": 2, "patientid": 7, "itemid": 50912, "chart_time": "2150-01-01T10:00:00",
                                  "value_numeric": 1.1, "value_unit": "mg/dL"}])
        with ov.applied([ins, rep]):
            rows = ov.query("SELECT lab_event_id, value_numeric, chart_time FROM lab_events ORDER BY 1")[1]
        assert rows == [(1, 4.1, dt.datetime(2150, 1, 1, 10)), (2, 1.1, dt.datetime(2150, 1, 1, 10)), (3, 2.0, dt.datetime(2150, 1, 1, 11))]
        # back to the base outside the block
        assert ov.query("SELECT count(*), count(value_numeric) FROM lab_events")[1] == [(2, 1)]
    finally:
        ov.close()
    assert tiny_db.read_bytes() == before


def test_typed_answers_and_gaps():
    spec = {"kind": "quantity", "value": "v", "unit": "u", "decimals": 2}
    assert to_answer(spec, ["v", "u"], [(4.123, "mEq/L")]) == QuantityAnswer(value=4.12, unit="mEq/L", decimals=2)
    assert to_answer(spec, ["v", "u"], []) is None
    assert to_answer(spec, ["v", "u"], [(None, "mEq/L")]) is None
    assert to_answer({"kind": "count", "value": "n"}, ["n"], [(0,)]) == CountAnswer(value=0)
    with pytest.raises(RulesError):
        to_answer(spec, ["x"], [(1,)])


def test_sql_literals():
    assert sql_literal("O'Brien") == "'O''Brien'"
    assert sql_literal(dt.datetime(2150, 1, 1, 10)) == "TIMESTAMP '2150-01-01 10:00:00'"
    assert sql_literal(None) == "NULL"
    assert render("itemid = {itemid} AND x = {x}", {"itemid": 5, "x": "a"}, sql=True) == "itemid = 5 AND x = 'a'"
    with pytest.raises(RulesError):
        render("{missing}", {}, sql=True)


def test_program_validation_names_the_program():
    entry = {"name": "p", "intent": "billing", "scope": "patient", "noise": "record", "params": ["a"], "vary": "b"}
    with pytest.raises(RulesError, match="program 'p'"):
        parse_program(entry, "test.toml[0]")
    entry.update(vary="a", intent="nonsense")
    with pytest.raises(RulesError, match="intent"):
        parse_program(entry, "test.toml[0]")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 60), min_size=6, max_size=6))
def test_balanced_allocation_properties(counts):
    pat = dict(zip(("record", "value", "query"), counts[:3]))
    pop = dict(zip(("record", "value", "query"), counts[3:]))
    p, q = _balanced_allocation(pat, pop)
    assert all(p[n] <= pat[n] and q[n] <= pop[n] for n in pat)
    if min(counts) > 0:  # every cell can be filled: all six equal, as many as the scarcest cell has
        assert set(p.values()) | set(q.values()) == {min(counts)}
        return
    if sum(p.values()) + sum(q.values()) and (p, q) != (pat, pop):
        per = {n: p[n] + q[n] for n in pat}
        assert len(set(per.values())) == 1 and sum(p.values()) == sum(q.values())


@given(st.lists(st.integers(1, 10**8), min_size=1, max_size=200, unique=True), st.integers(0, 1000))
def test_patient_split_is_deterministic_partition(ids, seed):
    a, b = split_patients(ids, seed), split_patients(list(reversed(ids)), seed)
    assert a == b and set(a) == set(ids) and set(a.values()) <= {"train", "test"}
