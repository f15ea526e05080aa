"""Issue 33 point 3: the harder construction programs of demographics_admissions,
diagnoses_procedures and billing (the requested hospitalization among several, the
admission before another, ED -> admission -> ICU links, event order across tables,
cohorts defined by two conditions, distinct procedures vs procedure rows).

On the synthetic hospital each program must yield pairs whose Clean answer is the value
recomputed here in plain Python from the raw rows (not by the reference SQL), and whose
Noise twin is a gap on the base that the witness rows make answerable.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from pathlib import Path

import duckdb
import pytest

from verifier.construction import load_programs, make_tasks
from verifier.construction.typed import to_answer
from witness_answer import witness_answer

NEW = {
    "nth_admission_discharge_location": ("demographics_admissions", "patient", "value"),
    "hours_ed_departure_to_icu": ("demographics_admissions", "patient", "record"),
    "patients_second_admission_of_type": ("demographics_admissions", "population", "record"),
    "drg_of_nth_admission": ("billing", "patient", "record"),
    "drg_of_admission_before": ("billing", "patient", "query"),
    "first_procedure_after_icu_discharge": ("diagnoses_procedures", "patient", "query"),
    "patients_with_two_diagnoses": ("diagnoses_procedures", "population", "query"),
    "distinct_procedures_in_dx_admissions": ("diagnoses_procedures", "population", "record"),
}
#: programs the synthetic hospital cannot exercise, with the reason (the generator is not changed: corpora are bound to it)
SYNTH_LACKS = {
    "nth_admission_discharge_location": "the synthetic hospital records a discharge location on every admission (no Value-level twin)",
}


def _rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[dict]:
    cur = con.execute(sql)
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]


def _ordered_admissions(con, patientid: int) -> list[dict]:
    adms = _rows(con, f"SELECT * FROM admissions WHERE patientid = {int(patientid)}")
    return sorted(adms, key=lambda a: (a["admission_time"], a["admissionid"]))


def _drg_rows(con, admissionid: int, drg_type: str) -> list[list]:
    got = [r for r in _rows(con, "SELECT * FROM drg_codes") if r["admissionid"] == admissionid and r["drg_type"] == drg_type]
    return sorted([r["drg_code"], r["description"]] for r in got)


def expected(con, program: str, p: dict):
    """The Clean answer recomputed from the raw rows, as the question states it."""
    if program == "nth_admission_discharge_location":
        return _ordered_admissions(con, p["patientid"])[p["ordinal"] - 1]["discharge_location"]
    if program == "hours_ed_departure_to_icu":
        adm = _rows(con, f"SELECT * FROM admissions WHERE admissionid = {p['admissionid']}")[0]
        first_icu = min(s["in_time"] for s in _rows(con, f"SELECT * FROM icu_stays WHERE admissionid = {p['admissionid']}"))
        return round((first_icu - adm["ed_out_time"]).total_seconds() / 3600, 1)
    if program == "patients_second_admission_of_type":
        by_pat = defaultdict(list)
        for a in _rows(con, "SELECT * FROM admissions"):
            by_pat[a["patientid"]].append(a)
        seconds = [sorted(v, key=lambda a: (a["admission_time"], a["admissionid"]))[1] for v in by_pat.values() if len(v) >= 2]
        return sum(a["admission_type"] == p["admission_type"] for a in seconds)
    if program == "drg_of_nth_admission":
        adm = _ordered_admissions(con, p["patientid"])[p["ordinal"] - 1]
        return _drg_rows(con, adm["admissionid"], p["drg_type"])
    if program == "drg_of_admission_before":
        adms = _ordered_admissions(con, p["patientid"])
        i = [a["admissionid"] for a in adms].index(p["admissionid"])
        return _drg_rows(con, adms[i - 1]["admissionid"], p["drg_type"])
    if program == "first_procedure_after_icu_discharge":
        stay = _rows(con, f"SELECT * FROM icu_stays WHERE icuadmissionid = {p['icuadmissionid']}")[0]
        dates = [r["chart_date"] for r in _rows(con, f"SELECT * FROM procedures WHERE admissionid = {stay['admissionid']}")]
        return min(d for d in dates if d > stay["out_time"].date())
    if program == "patients_with_two_diagnoses":
        pats = defaultdict(set)
        for d in _rows(con, "SELECT * FROM diagnoses"):
            pats[(d["icd_version"], d["icd_code"])].add(d["patientid"])
        return len(pats[(p["icd_version"], p["icd_code"])] & pats[(p["other_version"], p["other_code"])])
    if program == "distinct_procedures_in_dx_admissions":
        adms = {d["admissionid"] for d in _rows(con, "SELECT * FROM diagnoses")
                if (d["icd_version"], d["icd_code"]) == (p["icd_version"], p["icd_code"])}
        return len({(r["icd_version"], r["icd_code"]) for r in _rows(con, "SELECT * FROM procedures") if r["admissionid"] in adms})
    raise AssertionError(program)


def _value(answer):
    """The comparable value of a typed reference answer."""
    data = answer.model_dump()
    if data["type"] == "records":
        return sorted([list(r) for r in data["rows"]])
    v = data["value"]
    if data["type"] == "datetime":
        return (v if isinstance(v, dt.datetime) else dt.datetime.fromisoformat(str(v))).date()
    return v


def test_new_programs_are_declared_in_their_cells():
    """The eight programs exist with the intent, scope and noise level they were written for,
    each with at least three phrasings and an encounter/temporal tag."""
    progs = {p.name: p for p in load_programs()}
    for name, (intent, scope, noise) in NEW.items():
        assert name in progs, name
        p = progs[name]
        assert (p.intent, p.scope, p.noise) == (intent, scope, noise), name
        assert len(p.questions) >= 3 and {"encounter", "temporal"} & set(p.tags), name
    assert {s for s in (v[1] for v in NEW.values())} == {"patient", "population"}
    assert {n for n in (v[2] for v in NEW.values())} == {"record", "value", "query"}


@pytest.fixture(scope="module")
def synth_pairs(synth_db: Path):
    progs = [p for p in load_programs() if p.name in NEW]
    tasks, _report = make_tasks(synth_db, seed=0, programs=progs)
    return tasks


@pytest.mark.parametrize("program", sorted(NEW))
def test_program_pairs_on_synthetic_hospital(program, synth_pairs, synth_db):
    if program in SYNTH_LACKS:
        pytest.skip(SYNTH_LACKS[program])
    spec = {p.name: p for p in load_programs()}[program]
    tasks = [t for t in synth_pairs if t.program == program]
    assert tasks, f"{program}: no pair on the synthetic hospital"
    clean = {t.pair_id: t for t in tasks if t.condition == "clean"}
    con = duckdb.connect(str(synth_db), read_only=True)
    try:
        for t in (t for t in tasks if t.condition == "noise"):
            c = clean[t.pair_id]
            assert _value(c.reference.answer) == expected(con, program, c.params), c.task_id
            cols_rows = con.execute(t.reference.sql)
            cols = [d[0] for d in cols_rows.description]
            assert to_answer(spec.answer, cols, cols_rows.fetchall()) is None, t.task_id
            assert witness_answer(synth_db, t, spec.answer) is not None, t.task_id
    finally:
        con.close()


def test_procedure_after_icu_states_the_calendar_day_reading(demo_db):
    """Chart dates of ICD procedures have no time: a procedure dated on the ICU discharge day may be
    read as "after" the discharge. On the real demo every twin has no procedure on or after that day
    (so neither reading answers it), and a Clean pair whose answer changes under the other reading
    states the reference's reading in its question (before: a kept Clean pair changed under it, unstated)."""
    spec = {p.name: p for p in load_programs()}["first_procedure_after_icu_discharge"]
    tasks, _ = make_tasks(demo_db, seed=0, programs=[spec])
    assert tasks
    con = duckdb.connect(str(demo_db), read_only=True)
    try:
        for t in tasks:
            stay = _rows(con, f"SELECT * FROM icu_stays WHERE icuadmissionid = {t.params['icuadmissionid']}")[0]
            dates = [r["chart_date"] for r in _rows(con, f"SELECT * FROM procedures WHERE admissionid = {stay['admissionid']}")]
            on_or_after = [d for d in dates if d >= stay["out_time"].date()]
            if t.condition == "noise":
                assert dates and not on_or_after, t.task_id
            elif min(on_or_after) != _value(t.reference.answer):
                assert "after the day the patient left the ICU" in t.question, t.task_id
    finally:
        con.close()


def test_distinct_procedures_twin_has_a_near_miss(synth_pairs, synth_db):
    """Every Noise twin of distinct_procedures_in_dx_admissions has one to four admissions with the
    diagnosis and an ICD procedure: an agent that drops the five-unit rule finds a count, so the
    twin tests the rule rather than an empty result (before: twins with no such admission at all)."""
    con = duckdb.connect(str(synth_db), read_only=True)
    try:
        twins = [t for t in synth_pairs if t.program == "distinct_procedures_in_dx_admissions" and t.condition == "noise"]
        assert twins
        for t in twins:
            adms = {d["admissionid"] for d in _rows(con, "SELECT * FROM diagnoses")
                    if (d["icd_version"], d["icd_code"]) == (t.params["icd_version"], t.params["icd_code"])}
            with_proc = adms & {r["admissionid"] for r in _rows(con, "SELECT * FROM procedures")}
            assert 1 <= len(with_proc) <= 4, t.task_id
    finally:
        con.close()


def test_second_admission_questions_ask_about_the_second_admission_only():
    """Blind reviewers of corpus c41 judged "How many patients had a second hospitalization of admission type
    X?" ambiguous: it also reads as "two admissions of type X" (10 instead of 5 on one task). Every phrasing
    must say the second admission is of the type, as the reference computes."""
    program = next(p for p in load_programs() if p.name == "patients_second_admission_of_type")
    for q in program.questions:
        assert "second" in q and "had a second" not in q, q  # "had a second X of type T": two of type T?
