"""The robustness audit of construction (issue 12 point 1) on the synthetic hospital.

Each failure kind the issue lists is planted into a COPY of the built synthetic
database (the generator's output for the seed is untouched: the episode corpus is
replayed on it): a name variant, a second source, an equivalent status, an
unlinked anchor, a window edge, a comment-only value. Each test shows that the
audit drops the affected twin (``relaxation_<kind>``) or makes its question
explicit, and that without the program's relaxations (the old construction) the
same candidate was kept as it was. Where a reading convention of the shared
instructions settles the reading (``rules/conventions.toml``, issue 33 point 1), the
same plant keeps the pair without a sentence and records the other reading's
answer as the near miss (the ``stated`` fixture runs both).
"""

from __future__ import annotations

import dataclasses
import random
import shutil
from pathlib import Path

import duckdb
import pytest

from verifier.construction import load_programs, make_tasks
from verifier.construction.engine import Pair, ProgramRunner, Rejected
from verifier.construction.overlay import Overlay
from verifier.construction.relax import name_variants, parse_relax
from verifier.contract import RulesError
from verifier.database.conventions import conventions
from verifier.env.instructions import SHARED_INSTRUCTIONS


def _spec(name: str):
    return next(p for p in load_programs() if p.name == name)


@pytest.fixture()
def db_copy(synth_db: Path, tmp_path: Path) -> Path:
    out = tmp_path / "copy.duckdb"
    shutil.copyfile(synth_db, out)
    return out


def _plant(db: Path, *sql: str) -> None:
    con = duckdb.connect(str(db))
    try:
        for s in sql:
            con.execute(s)
    finally:
        con.close()


def _rows(db: Path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def _check(db: Path, name: str, pick, relax: bool = True) -> Pair | str:
    """Verify the candidate ``pick(row)`` selects (first in order); a Pair, or the rejection reason."""
    spec = _spec(name)
    if not relax:
        spec = dataclasses.replace(spec, relax=())
    ov = Overlay(db)
    try:
        runner = ProgramRunner(spec, ov, random.Random(0), lambda _p: None)
        cols, rows = ov.query(spec.candidates)
        cands = [dict(zip(cols, r)) for r in rows if pick(dict(zip(cols, r)))]
        assert cands, f"no candidate of {name} matches"
        try:
            return runner.verify_candidate(cands[0])
        except Rejected as rej:
            return rej.reason
    finally:
        ov.close()


def _first_pair(db: Path, name: str) -> Pair:
    spec = _spec(name)
    ov = Overlay(db)
    try:
        runner = ProgramRunner(spec, ov, random.Random(0), lambda _p: None)
        cols, rows = ov.query(spec.candidates)
        for r in rows:
            try:
                return runner.verify_candidate(dict(zip(cols, r)))
            except Rejected:
                continue
    finally:
        ov.close()
    pytest.fail(f"{name}: no verified pair on the synthetic hospital")


def _same_params(pair: Pair):
    want = pair.clean.params
    return lambda row: all(row.get(k) == v for k, v in want.items())


def _emar_row(patientid: int, admissionid: int, medication: str, status: str, when: str, tag: str) -> str:
    return (f"INSERT INTO medication_administrations BY NAME SELECT {patientid} AS patientid, {admissionid} AS admissionid, "
            f"'{tag}' AS emar_id, 1 AS emar_seq, '{medication}' AS medication, '{status}' AS event_text, "
            f"{when} AS chart_time, {when} AS schedule_time, {when} AS store_time")


# --- name variants ------------------------------------------------------------------------

def test_name_variants_rule():
    names = ["Famotidine", "Famotidine (IV)", "famotidine", "Famotidine-Ca", "Famotidines", "Heparin Sodium", "IV Famotidine"]
    assert name_variants("Famotidine", names) == ["Famotidine (IV)", "Famotidine-Ca", "IV Famotidine", "famotidine"]
    assert name_variants("Heparin", names) == ["Heparin Sodium"]  # synonyms.toml: heparin / heparin sodium


@pytest.fixture(params=["convention", "no_convention"])
def stated(request, monkeypatch) -> bool:
    """Each planted reading is audited twice: with ``rules/conventions.toml`` as shipped (a convention
    of the shared instructions settles it: a trap, issue 33 point 1) and with no convention covering
    it (the reading is an ambiguity: the twin goes or the question states the reading, issue 12)."""
    if request.param == "no_convention":
        monkeypatch.setattr("verifier.construction.audit.settling", lambda *a, **k: None)
    return request.param == "convention"


def _trap(got, kind: str, convention: str, twin: bool) -> None:
    """``got`` kept the pair without a sentence; the other reading's answer is the recorded near miss."""
    assert isinstance(got, Pair), got
    task = got.noise if twin else got.clean
    entry = [a for a in task.reference.audit if a.kind == kind]
    assert [a.outcome for a in entry] == ["convention"], task.reference.audit
    assert entry[0].detail.startswith(f"{convention}: ") and entry[0].detail != f"{convention}: None"
    assert convention in [c.id for c in conventions()] and any(c.text in SHARED_INSTRUCTIONS for c in conventions() if c.id == convention)
    # ... and it counts as the task's near miss (kind ``convention``), so the twin ranks and tags as one
    misses = [m for m in task.reference.near_misses if m.kind == "convention"]
    assert [m.condition for m in misses] == [convention], task.reference.near_misses
    assert str(misses[0].answer.model_dump(mode="json")) and task.reference.near_misses


def test_name_variant_twin(db_copy, stated):
    pair = _first_pair(db_copy, "med_first_administration_time")
    p = pair.noise.params
    _plant(db_copy, _emar_row(p["patientid"], p["admissionid"], p["medication"] + " (IV)", "Administered",
                              f"(SELECT admission_time + INTERVAL 3 HOUR FROM admissions WHERE admissionid = {p['admissionid']})", "plant-name"))
    got = _check(db_copy, "med_first_administration_time", _same_params(pair))
    if stated:
        _trap(got, "name", "exact_name", twin=True)
        assert "exactly as" not in got.noise.question
    else:
        assert got == "relaxation_name"
    old = _check(db_copy, "med_first_administration_time", _same_params(pair), relax=False)
    assert isinstance(old, Pair) and old.noise.params == pair.noise.params  # the old construction kept it


def test_name_variant_clean(db_copy, stated):
    pair = _first_pair(db_copy, "med_first_administration_time")
    p = pair.clean.params
    first = pair.clean.reference.answer.value
    _plant(db_copy, _emar_row(p["patientid"], p["admissionid"], p["medication"].upper(), "Administered",
                              f"TIMESTAMP '{first}' - INTERVAL 1 HOUR", "plant-case"))
    got = _check(db_copy, "med_first_administration_time", _same_params(pair))
    assert isinstance(got, Pair)
    if stated:
        _trap(got, "name", "exact_name", twin=False)
        assert "exactly as" not in got.clean.question
        assert got.clean.reference.answer.value == first  # the reference still reads the exact name
        return
    assert f'exactly as "{p["medication"]}"' in got.clean.question
    assert f'exactly as "{got.noise.params["medication"]}"' in got.noise.question
    assert [a.outcome for a in got.clean.reference.audit if a.kind == "name"] == ["explicit"]
    assert p["medication"].upper() in got.clean.reference.audit[0].detail


# --- another source of the same fact ------------------------------------------------------

def test_second_source_twin(db_copy, stated):
    pair = _first_pair(db_copy, "med_first_administration_time")
    p = pair.noise.params
    _plant(db_copy,
           f"INSERT INTO icu_items BY NAME SELECT 999001 AS itemid, '{p['medication']}' AS label",
           f"INSERT INTO input_events BY NAME SELECT {p['patientid']} AS patientid, {p['admissionid']} AS admissionid, 999001 AS itemid, "
           f"admission_time + INTERVAL 5 HOUR AS start_time, admission_time + INTERVAL 6 HOUR AS end_time, 1.0 AS amount "
           f"FROM admissions WHERE admissionid = {p['admissionid']}")
    got = _check(db_copy, "med_first_administration_time", _same_params(pair))
    if stated:
        _trap(got, "source", "administered", twin=True)
    else:
        assert got == "relaxation_source"
    assert isinstance(_check(db_copy, "med_first_administration_time", _same_params(pair), relax=False), Pair)


# --- statuses meaning the same --------------------------------------------------------------

def test_equivalent_status_twin(db_copy, stated):
    pair = _first_pair(db_copy, "med_first_administration_in_icu_stay")
    p = pair.noise.params
    adm = _rows(db_copy, f"SELECT admissionid, in_time FROM icu_stays WHERE icuadmissionid = {p['icuadmissionid']}")[0]
    _plant(db_copy, _emar_row(p["patientid"], adm[0], p["medication"], "Flushed",
                              f"TIMESTAMP '{adm[1]}' + INTERVAL 30 MINUTE", "plant-flush"))
    got = _check(db_copy, "med_first_administration_in_icu_stay", _same_params(pair))
    if stated:
        _trap(got, "status", "administered", twin=True)
    else:
        assert got == "relaxation_status"
    assert isinstance(_check(db_copy, "med_first_administration_in_icu_stay", _same_params(pair), relax=False), Pair)


def test_equivalent_status_clean(db_copy, stated):
    pair = _first_pair(db_copy, "med_first_administration_time")
    p = pair.clean.params
    _plant(db_copy, _emar_row(p["patientid"], p["admissionid"], p["medication"], "Flushed",
                              f"TIMESTAMP '{pair.clean.reference.answer.value}' - INTERVAL 2 HOUR", "plant-flush"))
    got = _check(db_copy, "med_first_administration_time", _same_params(pair))
    assert isinstance(got, Pair)
    if stated:
        _trap(got, "status", "administered", twin=False)
        assert "status 'Administered'" not in got.clean.question
    else:
        assert "status 'Administered'" in got.clean.question and "status 'Administered'" in got.noise.question
    old = _check(db_copy, "med_first_administration_time", _same_params(pair), relax=False)
    assert "status 'Administered'" not in old.clean.question


# --- unlinked events inside the encounter's window ---------------------------------------------

def test_unlinked_anchor_twin(db_copy, stated):
    pair = _first_pair(db_copy, "lab_first_value_in_admission")
    p = pair.noise.params
    _plant(db_copy,
           f"INSERT INTO lab_events BY NAME SELECT 99000001 AS lab_event_id, {p['patientid']} AS patientid, NULL AS admissionid, "
           f"{p['itemid']} AS itemid, admission_time + INTERVAL 1 HOUR AS chart_time, '4.2' AS value, 4.2 AS value_numeric, "
           f"(SELECT min(value_unit) FROM lab_events WHERE itemid = {p['itemid']}) AS value_unit "
           f"FROM admissions WHERE admissionid = {p['admissionid']}")
    got = _check(db_copy, "lab_first_value_in_admission", _same_params(pair))
    if stated:
        _trap(got, "unlinked", "linked_by_id", twin=True)
        assert "4.2" in [a for a in got.noise.reference.audit if a.kind == "unlinked"][0].detail
    else:
        assert got == "relaxation_unlinked"
    assert isinstance(_check(db_copy, "lab_first_value_in_admission", _same_params(pair), relax=False), Pair)


def test_unlinked_anchor_clean(db_copy, stated):
    pair = _first_pair(db_copy, "lab_first_value_in_admission")
    p = pair.clean.params
    first = pair.clean.reference.answer
    # drawn before the admission (e.g. in the emergency department), without an admission id
    _plant(db_copy,
           f"UPDATE admissions SET ed_registration_time = admission_time - INTERVAL 6 HOUR WHERE admissionid = {p['admissionid']}",
           f"INSERT INTO lab_events BY NAME SELECT 99000002 AS lab_event_id, {p['patientid']} AS patientid, NULL AS admissionid, "
           f"{p['itemid']} AS itemid, admission_time - INTERVAL 3 HOUR AS chart_time, '{first.value + 1}' AS value, "
           f"{first.value + 1} AS value_numeric, '{first.unit}' AS value_unit FROM admissions WHERE admissionid = {p['admissionid']}")
    got = _check(db_copy, "lab_first_value_in_admission", _same_params(pair))
    assert isinstance(got, Pair)
    assert (f"linked to admission {p['admissionid']}" in got.clean.question) is not stated
    if stated:
        _trap(got, "unlinked", "linked_by_id", twin=False)
    assert got.clean.reference.answer == first  # the reference still computes the linked reading


# --- the other window definition ------------------------------------------------------------

def test_window_edge_makes_clean_explicit(db_copy):
    pair = _first_pair(db_copy, "readmissions_within_days")
    p = pair.clean.params
    # a readmission at the window's edge: within `days` calendar days, beyond days x 24 hours
    last = _rows(db_copy, f"""
        SELECT a.patientid, a.discharge_time FROM admissions a
        WHERE a.admission_type = '{p['admission_type']}' AND hour(a.discharge_time) BETWEEN 1 AND 20
          AND NOT EXISTS (SELECT 1 FROM admissions b WHERE b.patientid = a.patientid AND b.admission_time > a.admission_time)
        ORDER BY a.admissionid LIMIT 1""")[0]
    _plant(db_copy,
           f"INSERT INTO admissions BY NAME SELECT 99000003 AS admissionid, {last[0]} AS patientid, 'PLANTED' AS admission_type, "
           f"TIMESTAMP '{last[1]}' + INTERVAL {p['days'] * 24 + 2} HOUR AS admission_time, "
           f"TIMESTAMP '{last[1]}' + INTERVAL {p['days'] * 24 + 50} HOUR AS discharge_time")
    got = _check(db_copy, "readmissions_within_days", _same_params(pair))
    assert isinstance(got, Pair)
    assert "calendar days" in got.clean.question and "calendar days" in got.noise.question
    assert [a.outcome for a in got.clean.reference.audit] == ["explicit"]
    assert got.clean.reference.answer.value == pair.clean.reference.answer.value + 1
    old = _check(db_copy, "readmissions_within_days", _same_params(pair), relax=False)
    assert "calendar days" not in old.clean.question


# --- comment-only values --------------------------------------------------------------------

@pytest.mark.parametrize(("comment", "result"), [("<20", True), ("TR.", True), ("NEG.", True), ("hemolysed, not reported", False)])
def test_comment_only_value(db_copy, comment, result, stated):
    """A twin whose last result is written only as text (a censored number, a qualitative grade) is
    answerable for a reader unless the question's reading is stated: by the ``numeric_value``
    convention of the shared instructions (no sentence; the text reading is the twin's near miss), or,
    without it, by the sentence added to both twins (``settles_twin``); text that is no result changes
    nothing."""
    # the last result of one item in an admission has no numeric value; its comment may hold one
    adm, pat, item = _rows(db_copy, """
        SELECT l.admissionid, l.patientid, l.itemid FROM lab_events l
        WHERE l.admissionid IS NOT NULL AND l.value_numeric IS NOT NULL
          AND l.itemid IN (SELECT itemid FROM lab_events GROUP BY 1 HAVING count(value_numeric) >= 20)
          AND l.value_unit IS NOT NULL
        GROUP BY 1, 2, 3 QUALIFY count(*) OVER (PARTITION BY l.admissionid) >= 2
        ORDER BY 1, 3 LIMIT 1""")[0]
    _plant(db_copy,
           f"INSERT INTO lab_events BY NAME SELECT 99000004 AS lab_event_id, {pat} AS patientid, {adm} AS admissionid, {item} AS itemid, "
           f"max(chart_time) + INTERVAL 1 HOUR AS chart_time, NULL AS value, NULL AS value_numeric, NULL AS value_unit, "
           f"'{comment}' AS comments FROM lab_events WHERE admissionid = {adm}")
    pick = lambda row: row["admissionid"] == adm and row["twin_itemid"] == item  # noqa: E731
    got = _check(db_copy, "lab_last_value_missing", pick)
    assert isinstance(got, Pair)
    sentence = "not a numeric value"
    outcomes = [a.outcome for a in got.noise.reference.audit if a.kind == "comment"]
    if result and stated:
        assert sentence not in got.noise.question and sentence not in got.clean.question
        _trap(got, "comment", "numeric_value", twin=True)
    elif result:
        assert sentence in got.noise.question and sentence in got.clean.question
        assert outcomes == ["explicit"]
        old = _check(db_copy, "lab_last_value_missing", pick, relax=False)
        assert isinstance(old, Pair) and sentence not in old.noise.question
    else:
        assert sentence not in got.noise.question
        assert outcomes == ["same"]


# --- declaration and report -----------------------------------------------------------------

def test_relaxations_are_validated():
    with pytest.raises(RulesError, match="kind"):
        parse_relax({"kind": "guess"}, "x", ("a",))
    with pytest.raises(RulesError, match="param"):
        parse_relax({"kind": "name", "param": "b", "table": "t", "column": "c"}, "x", ("a",))
    with pytest.raises(RulesError, match="group"):
        parse_relax({"kind": "status", "group": "nope"}, "x", ("a",))
    with pytest.raises(RulesError, match="reference"):
        parse_relax({"kind": "window"}, "x", ("a",))
    with pytest.raises(RulesError, match="explicit"):
        parse_relax({"kind": "absent", "reference": "SELECT 1"}, "x", ("a",))
    kinds = {r.kind for p in load_programs() for r in p.relax}
    assert kinds == {"name", "status", "source", "unlinked", "window", "comment", "absent"}


def test_audit_counted_in_report(db_copy, stated):
    pair = _first_pair(db_copy, "med_first_administration_time")
    p = pair.noise.params
    _plant(db_copy, _emar_row(p["patientid"], p["admissionid"], p["medication"] + " (IV)", "Administered",
                              f"(SELECT admission_time + INTERVAL 3 HOUR FROM admissions WHERE admissionid = {p['admissionid']})", "plant-name"))
    tasks, report = make_tasks(db_copy, seed=0, programs=[_spec("med_first_administration_time")])
    assert all(len(t.reference.audit) == 3 for t in tasks)
    if stated:
        assert report.rejections.get("relaxation_name", 0) == 0 and report.audit.get("name|convention", 0) >= 1
        return
    assert report.rejections.get("relaxation_name", 0) >= 1
    assert report.audit.get("name|twin_answerable", 0) == report.rejections["relaxation_name"]
    assert p not in [t.params for t in tasks if t.condition == "noise"]


# --- the unit of counting of the five-unit rule (issue 12 point 2) ------------------------------

def test_five_unit_rule_counting_unit_stated(synth_db):
    """A population Clean task with >= 5 eligible admissions but < 5 patients says which units
    the five-unit rule counts; with >= 5 patients it does not need to."""
    spec = _spec("lab_mean_by_diagnosis")
    tasks, report = make_tasks(synth_db, seed=0, programs=[spec])
    clean = [t for t in tasks if t.condition == "clean"]
    assert clean
    seen = set()
    for t in clean:
        p = t.params
        patients = _rows(synth_db, f"""SELECT count(DISTINCT a.patientid) FROM admissions a WHERE a.admissionid IN (
            SELECT l.admissionid FROM lab_events l JOIN diagnoses d ON d.admissionid = l.admissionid
            WHERE l.itemid = {p['itemid']} AND l.value_numeric IS NOT NULL
              AND d.icd_code = '{p['icd_code']}' AND d.icd_version = {p['icd_version']})""")[0][0]
        [entry] = [a for a in t.reference.audit if a.kind == "units"]
        stated = "For the five-unit rule, count admissions, not patients." in t.question
        assert stated == (patients < 5) == (entry.outcome == "explicit"), (t.task_id, patients)
        seen.add(stated)
    assert seen == {True, False}  # both kinds occur on the synthetic hospital
    # the report counts every audited candidate, also verified pairs the near-miss preference left out
    assert report.audit["units|explicit"] >= sum(1 for t in clean if "five-unit rule" in t.question) > 0
