"""The synthetic default hospital: determinism, MIMIC-IV layout, referential integrity,
clinical plausibility, the planted gaps (checked in the built database) and the demo CLI."""

from __future__ import annotations

import csv
import gzip
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verifier.contract import InputError
from verifier.database import schema_tables
from verifier.synthetic import (
    GAP_KINDS,
    generate_hospital,
    planted_gaps,
    read_gaps,
    simulate,
)
from verifier.synthetic.catalog import load_catalog

EVENT_TABLES = ("patients", "admissions", "labevents", "chartevents", "emar", "prescriptions", "icustays")


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def gaps(synth_dir: Path) -> list:
    """The gap manifest of the session's synthetic hospital (the one synth_db is built from)."""
    return read_gaps(synth_dir)


@pytest.fixture(scope="module")
def con(synth_db: Path):
    c = duckdb.connect(str(synth_db), read_only=True)
    yield c
    c.close()


def _one(con, sql: str):
    row = con.execute(sql).fetchone()
    return None if row is None else row[0]


# -- determinism --------------------------------------------------------------------------
def test_same_seed_gives_byte_identical_files(synth_dir: Path, tmp_path: Path) -> None:
    again = generate_hospital(tmp_path / "again", seed=0)
    a, b = _files(synth_dir), _files(again)
    assert a.keys() == b.keys()
    assert [k for k in a if a[k] != b[k]] == []


def test_other_seed_gives_other_hospital(synth_dir: Path, tmp_path: Path) -> None:
    other = _files(generate_hospital(tmp_path / "other", seed=1))
    base = _files(synth_dir)
    for table in EVENT_TABLES:
        spec = next(t for t in schema_tables() if t.source == table)
        key = f"{spec.module}/{table}.csv.gz"
        assert base[key] != other[key], key


def test_gzip_header_has_no_mtime_or_name(synth_dir: Path) -> None:
    raw = (synth_dir / "hosp" / "patients.csv.gz").read_bytes()
    assert raw[:2] == b"\x1f\x8b"
    assert raw[4:8] == b"\x00\x00\x00\x00"  # mtime 0
    assert raw[3] & 0x08 == 0  # FNAME flag not set


# -- layout -------------------------------------------------------------------------------
def test_every_schema_table_present_with_source_columns_in_order(synth_dir: Path) -> None:
    specs = schema_tables()
    assert len(specs) == 31
    for spec in specs:
        path = synth_dir / spec.module / f"{spec.source}.csv.gz"
        with gzip.open(path, "rt", encoding="utf-8", newline="") as fh:
            header = next(csv.reader(fh))
        assert header == [c.source for c in spec.columns], spec.source


def test_csvs_read_with_declared_types_and_none_is_empty(synth_dir: Path) -> None:
    c = duckdb.connect()
    for spec in schema_tables():
        cols = {col.source: col.type for col in spec.columns}
        path = synth_dir / spec.module / f"{spec.source}.csv.gz"
        n = c.execute(
            f"SELECT count(*) FROM read_csv('{path}', header=true, columns={cols!r}, auto_detect=false)"
        ).fetchone()[0]
        assert n > 0, f"{spec.source} is empty"


def test_built_database_matches_sources(synth_db: Path, con) -> None:
    assert _one(con, "SELECT count(*) FROM patients") == 50
    for spec in schema_tables():
        assert _one(con, f"SELECT count(*) FROM {spec.name}") > 0, spec.name


def test_bad_arguments_raise_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="n_patients"):
        simulate(0, 5)
    with pytest.raises(InputError, match="seed"):
        simulate("zero", 50)  # type: ignore[arg-type]
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(InputError, match="out_dir"):
        generate_hospital(f)


# -- referential integrity and time lines ---------------------------------------------------
def _fk_queries() -> list[tuple[str, str]]:
    """One violation-count query per (table, shared identifier) from rules/schema.toml."""
    out = []
    for spec in schema_tables():
        names = {c.name for c in spec.columns}
        t = spec.name
        if "patientid" in names and t != "patients":
            out.append((f"{t}.patientid", f"SELECT count(*) FROM {t} x WHERE x.patientid NOT IN (SELECT patientid FROM patients)"))
        if "admissionid" in names and t != "admissions":
            out.append((f"{t}.admissionid", f"""SELECT count(*) FROM {t} x WHERE x.admissionid IS NOT NULL AND NOT EXISTS
                (SELECT 1 FROM admissions a WHERE a.admissionid = x.admissionid AND a.patientid = x.patientid)"""))
        if "icuadmissionid" in names and t != "icu_stays":
            out.append((f"{t}.icuadmissionid", f"""SELECT count(*) FROM {t} x WHERE NOT EXISTS (SELECT 1 FROM icu_stays s
                WHERE s.icuadmissionid = x.icuadmissionid AND s.admissionid = x.admissionid)"""))
        if "caregiver_id" in names and t != "caregivers":
            out.append((f"{t}.caregiver_id", f"SELECT count(*) FROM {t} WHERE caregiver_id NOT IN (SELECT caregiver_id FROM caregivers)"))
        for col in sorted(n for n in names if n.endswith("provider_id")):
            out.append((f"{t}.{col}", f"SELECT count(*) FROM {t} WHERE {col} IS NOT NULL AND {col} NOT IN (SELECT provider_id FROM providers)"))
    return out


ADM_WINDOW = "JOIN admissions a USING (admissionid) WHERE x.{c} < a.admission_time OR x.{c} > a.discharge_time"
STAY_WINDOW = "JOIN icu_stays s USING (icuadmissionid) WHERE x.{c} < s.in_time OR x.{c} > s.out_time"

TIME_CHECKS = {
    "icu stay inside admission": "SELECT count(*) FROM icu_stays s JOIN admissions a USING (admissionid) "
                                 "WHERE s.in_time < a.admission_time OR s.out_time > a.discharge_time OR s.out_time <= s.in_time",
    "admissions of a patient do not overlap": """SELECT count(*) FROM admissions a JOIN admissions b USING (patientid)
        WHERE a.admissionid < b.admissionid AND a.admission_time < b.discharge_time AND b.admission_time < a.discharge_time""",
    "icu stays do not overlap": """SELECT count(*) FROM icu_stays a JOIN icu_stays b USING (patientid)
        WHERE a.icuadmissionid < b.icuadmissionid AND a.in_time < b.out_time AND b.in_time < a.out_time""",
    "los matches in/out": "SELECT count(*) FROM icu_stays WHERE abs(length_of_stay_days - "
                          "epoch(out_time - in_time) / 86400) > 1e-4",
    "lab inside admission": "SELECT count(*) FROM lab_events x " + ADM_WINDOW.format(c="chart_time"),
    "emar inside admission": "SELECT count(*) FROM medication_administrations x " + ADM_WINDOW.format(c="chart_time"),
    "prescription inside admission": "SELECT count(*) FROM prescriptions x " + ADM_WINDOW.format(c="start_time")
                                     + " OR x.stop_time > a.discharge_time OR x.stop_time < x.start_time",
    "microbiology inside admission": "SELECT count(*) FROM microbiology_events x " + ADM_WINDOW.format(c="chart_time"),
    "transfer inside admission": """SELECT count(*) FROM transfers x JOIN admissions a USING (admissionid)
        WHERE x.in_time < coalesce(a.ed_registration_time, a.admission_time) OR x.in_time > a.discharge_time""",
    "chart event inside stay": "SELECT count(*) FROM chart_events x " + STAY_WINDOW.format(c="chart_time"),
    "output event inside stay": "SELECT count(*) FROM output_events x " + STAY_WINDOW.format(c="chart_time"),
    "input event inside stay": "SELECT count(*) FROM input_events x " + STAY_WINDOW.format(c="start_time")
                               + " OR x.end_time > s.out_time",
    "ingredient event inside stay": "SELECT count(*) FROM ingredient_events x " + STAY_WINDOW.format(c="start_time"),
    "procedure event inside stay": "SELECT count(*) FROM icu_procedure_events x " + STAY_WINDOW.format(c="start_time")
                                   + " OR x.end_time > s.out_time",
    "datetime event inside stay": "SELECT count(*) FROM datetime_events x " + STAY_WINDOW.format(c="chart_time"),
    "outpatient labs outside admissions": """SELECT count(*) FROM lab_events l JOIN admissions a USING (patientid)
        WHERE l.admissionid IS NULL AND l.chart_time BETWEEN a.admission_time AND a.discharge_time""",
    "omr outside admissions": """SELECT count(*) FROM outpatient_measurements o JOIN admissions a USING (patientid)
        WHERE o.chart_date BETWEEN CAST(a.admission_time AS DATE) AND CAST(a.discharge_time AS DATE)""",
    "death flag iff death time": "SELECT count(*) FROM admissions WHERE (hospital_expire_flag = 1) <> (death_time IS NOT NULL)",
    "death time is discharge and dod": """SELECT count(*) FROM admissions a JOIN patients p USING (patientid)
        WHERE a.death_time IS NOT NULL AND (a.death_time <> a.discharge_time OR p.date_of_death <> CAST(a.death_time AS DATE))""",
    "no admission after death": """SELECT count(*) FROM admissions a JOIN patients p USING (patientid)
        WHERE p.date_of_death IS NOT NULL AND CAST(a.admission_time AS DATE) > p.date_of_death""",
    "admission age consistent": """SELECT count(*) FROM admissions a JOIN patients p USING (patientid)
        WHERE a.admission_age <> p.anchor_age + year(a.admission_time) - p.anchor_year
           OR a.admission_age < p.anchor_age OR a.admission_age > 95""",
    "anchor year group shape": "SELECT count(*) FROM patients WHERE NOT regexp_matches(anchor_year_group, '^20[0-9]{2} - 20[0-9]{2}$')",
    "shifted future years": "SELECT count(*) FROM admissions WHERE year(admission_time) < 2100",
    "MIMIC id ranges": """SELECT (SELECT count(*) FROM patients WHERE patientid NOT BETWEEN 10000000 AND 19999999)
        + (SELECT count(*) FROM admissions WHERE admissionid NOT BETWEEN 20000000 AND 29999999)
        + (SELECT count(*) FROM icu_stays WHERE icuadmissionid NOT BETWEEN 30000000 AND 39999999)""",
    "ICD version by admission": """SELECT count(*) FROM (SELECT admissionid FROM diagnoses
        GROUP BY admissionid HAVING count(DISTINCT icd_version) > 1)""",
}

DICTIONARY_CHECKS = {
    "lab itemids": "SELECT count(*) FROM lab_events WHERE itemid NOT IN (SELECT itemid FROM lab_items)",
    "chart itemids": "SELECT count(*) FROM chart_events WHERE itemid NOT IN (SELECT itemid FROM icu_items WHERE links_to = 'chartevents')",
    "input itemids": "SELECT count(*) FROM input_events WHERE itemid NOT IN (SELECT itemid FROM icu_items WHERE links_to = 'inputevents')",
    "ingredient itemids": "SELECT count(*) FROM ingredient_events WHERE itemid NOT IN (SELECT itemid FROM icu_items WHERE links_to = 'ingredientevents')",
    "output itemids": "SELECT count(*) FROM output_events WHERE itemid NOT IN (SELECT itemid FROM icu_items WHERE links_to = 'outputevents')",
    "procedure itemids": "SELECT count(*) FROM icu_procedure_events WHERE itemid NOT IN (SELECT itemid FROM icu_items WHERE links_to = 'procedureevents')",
    "datetime itemids": "SELECT count(*) FROM datetime_events WHERE itemid NOT IN (SELECT itemid FROM icu_items WHERE links_to = 'datetimeevents')",
    "diagnosis codes": "SELECT count(*) FROM diagnoses d ANTI JOIN icd_diagnosis_codes c USING (icd_code, icd_version)",
    "procedure codes": "SELECT count(*) FROM procedures d ANTI JOIN icd_procedure_codes c USING (icd_code, icd_version)",
    "hcpcs codes": "SELECT count(*) FROM hcpcs_events WHERE hcpcs_code NOT IN (SELECT code FROM hcpcs_codes)",
    "emar links to its order": """SELECT count(*) FROM medication_administrations m
        WHERE m.poe_id NOT IN (SELECT poe_id FROM provider_orders) OR m.pharmacy_id NOT IN (SELECT pharmacy_id FROM pharmacy_orders)""",
    "prescription has a pharmacy order": "SELECT count(*) FROM prescriptions ANTI JOIN pharmacy_orders USING (pharmacy_id)",
    "emar detail has its emar": "SELECT count(*) FROM medication_administration_details ANTI JOIN medication_administrations USING (emar_id)",
}


@pytest.mark.parametrize("name,sql", _fk_queries() + sorted(TIME_CHECKS.items()) + sorted(DICTIONARY_CHECKS.items()),
                         ids=lambda v: v if " " not in v or len(v) < 60 else None)
def test_no_violations(con, name: str, sql: str) -> None:
    assert _one(con, sql) == 0, name


def test_some_admissions_without_icu_and_some_with_several_stays(con) -> None:
    assert _one(con, "SELECT count(*) FROM admissions a ANTI JOIN icu_stays s USING (admissionid)") > 0
    assert _one(con, "SELECT count(*) FROM icu_stays") > 10


# -- clinical plausibility --------------------------------------------------------------------
def test_lab_units_follow_the_catalog_except_planted(con, gaps) -> None:
    cat = load_catalog()
    planted = {g.ids["lab_event_id"] for g in gaps if g.name in ("lab_unit_null", "lab_unit_contradiction")}
    for item in cat.lab_items:
        rows = con.execute("SELECT lab_event_id, value_unit FROM lab_events WHERE itemid = ?", [item.itemid]).fetchall()
        wrong = [r for r in rows if r[1] != (item.unit or None) and r[0] not in planted]
        assert wrong == [], item.label


@pytest.mark.parametrize("itemid,lo,hi", [(50971, 2.0, 7.5), (50912, 0.2, 8.0), (50931, 40, 700), (51221, 12, 60),
                                          (50983, 115, 160), (51301, 1.0, 40.0)])
def test_lab_values_plausible(con, itemid: int, lo: float, hi: float) -> None:
    # mmol/L glucose is the planted unit contradiction: judge mg/dL values only
    bad = _one(con, f"SELECT count(*) FROM lab_events WHERE itemid = {itemid} AND value_unit IS DISTINCT FROM 'mmol/L' "
                    f"AND value_numeric NOT BETWEEN {lo} AND {hi}")
    assert bad == 0


@pytest.mark.parametrize("itemid,unit,lo,hi", [(220045, "bpm", 35, 180), (220179, "mmHg", 60, 200),
                                               (220277, "%", 75, 100), (223762, "°C", 35, 41),
                                               (226512, "kg", 35, 150)])
def test_vital_values_plausible(con, itemid: int, unit: str, lo: float, hi: float) -> None:
    assert _one(con, f"SELECT count(*) FROM chart_events WHERE itemid = {itemid}") > 0
    assert _one(con, f"SELECT count(*) FROM chart_events WHERE itemid = {itemid} AND (value_unit <> '{unit}' "
                     f"OR value_numeric NOT BETWEEN {lo} AND {hi})") == 0


def test_fahrenheit_in_range_except_the_planted_celsius_number(con) -> None:
    out = con.execute("SELECT value_numeric FROM chart_events WHERE itemid = 223761 "
                      "AND value_numeric NOT BETWEEN 95 AND 106").fetchall()
    assert len(out) == 1 and 35 <= out[0][0] <= 41


def test_real_drug_names_with_dose_units(con) -> None:
    rows = dict(con.execute("SELECT drug, any_value(dose_unit_rx) FROM prescriptions GROUP BY drug").fetchall())
    for drug, unit in (("Furosemide", "mg"), ("Insulin", "UNIT"), ("Vancomycin", "mg"), ("Heparin", "UNIT"),
                       ("Metoprolol Tartrate", "mg"), ("Potassium Chloride", "mEq")):
        assert rows.get(drug) == unit, drug


def test_billing_and_microbiology_content(con) -> None:
    assert {r[0] for r in con.execute("SELECT DISTINCT drg_type FROM drg_codes").fetchall()} == {"HCFA", "APR"}
    assert _one(con, "SELECT count(*) FROM drg_codes WHERE drg_type = 'HCFA' AND drg_severity IS NOT NULL") == 0
    assert {r[0] for r in con.execute("SELECT DISTINCT icd_version FROM diagnoses").fetchall()} == {9, 10}
    assert {r[0] for r in con.execute("SELECT DISTINCT icd_version FROM procedures").fetchall()} == {9, 10}
    assert _one(con, "SELECT count(*) FROM microbiology_events WHERE organism_name IS NOT NULL AND antibiotic_name IS NOT NULL") > 0
    assert _one(con, "SELECT count(*) FROM microbiology_events WHERE organism_name IS NULL") > 0
    assert _one(con, "SELECT count(*) FROM hcpcs_events") > 0


# -- planted gaps --------------------------------------------------------------------------------
def test_manifest_equals_planted_gaps_api(synth_dir: Path) -> None:
    assert read_gaps(synth_dir) == planted_gaps(seed=0, n_patients=50)


def test_every_gap_name_is_planted(gaps) -> None:
    assert {g.name for g in gaps} == set(GAP_KINDS)
    assert {g.kind for g in gaps} == {"record", "value", "query", "population", "feature"}


def test_each_gap_exists_in_built_db(con, gaps) -> None:
    failed = [(g.name, g.ids) for g in gaps if _one(con, g.check_sql) is not True]
    assert failed == []


def test_gap_checks_are_not_vacuous(con, gaps) -> None:
    """Pointing a gap's check at an identifier that does not exist makes it false."""
    checked = 0
    for g in gaps:
        key = next((k for k in ("icuadmissionid", "lab_event_id", "admissionid", "patientid")
                    if k in g.ids and str(g.ids[k]) in g.check_sql), None)
        if key is None:
            continue
        sql = g.check_sql.replace(str(g.ids[key]), "999")
        assert _one(con, sql) is not True, (g.name, key)
        checked += 1
    assert checked >= 15


def test_both_temporal_orders_for_each_drug(gaps) -> None:
    pairs = {(g.ids["drug"], g.name) for g in gaps if g.kind == "query"}
    for drug in ("Potassium Chloride", "Insulin"):
        assert {(drug, "drug_before_threshold"), (drug, "drug_after_threshold")} <= pairs
    for g in gaps:
        if g.kind == "query":
            before = g.ids["first_administration_time"] < g.ids["first_crossing_time"]
            assert before == (g.name == "drug_before_threshold")


def test_population_sizes_for_five_unit_rule(gaps) -> None:
    small = [g.ids["count"] for g in gaps if g.name == "small_population"]
    large = [g.ids["count"] for g in gaps if g.name == "large_population"]
    assert sorted(small) == [1, 2, 3, 4]
    assert large and min(large) >= 5


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**31 - 1), n=st.integers(min_value=20, max_value=35))
def test_any_seed_plants_every_gap_in_consistent_time_lines(seed: int, n: int) -> None:
    h = simulate(seed, n)
    assert {g.name for g in h.gaps} == set(GAP_KINDS)
    assert len(h.tables["patients"]) == n
    for a in h.admissions():
        assert a.admittime < a.dischtime
        for s in a.icu_stays:
            assert a.admittime <= s.intime < s.outtime <= a.dischtime
        assert all(a.admittime <= t <= a.dischtime for t in a.lab_draws)


# -- demo CLI -------------------------------------------------------------------------------------
def _cli() -> list[str]:
    exe = Path(sys.executable).with_name("ehr-verifier")
    if exe.is_file():
        return [str(exe)]
    found = shutil.which("ehr-verifier")
    return [found] if found else [sys.executable, "-m", "verifier.cli"]


def test_demo_command_runs_from_any_directory(tmp_path: Path) -> None:
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("MIMIC_DEMO_DIR", "MIMIC_DEMO_MEDS")}
    proc = subprocess.run(_cli() + ["demo", "--workdir", "work", "--seed", "0"], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr
    assert "31 tables, 343 columns" in proc.stdout
    # the main job runs the whole gym: tasks, rollouts of every reference agent, scores
    assert "Agents compared" in proc.stdout
    rows = {line.split("│")[1].strip(): line for line in proc.stdout.splitlines() if line.startswith("│")}
    for agent in ("oracle", "always-null", "answer-anyway", "wrong-scope", "fabricator"):
        assert agent in rows, f"no report row for {agent}"
    assert rows["oracle"].count("100.0%") >= 2, rows["oracle"]
    for agent, reason in (("always-null", "NO_EVIDENCE"), ("answer-anyway", "ANSWERED_NOISE")):
        assert reason in rows[agent], rows[agent]
    assert (cwd / "work" / "tasks.jsonl").is_file()
    assert (cwd / "work" / "scores" / "oracle" / "summary.json").is_file()
    assert (cwd / "work" / "scores" / "report.png").is_file()  # all agents in one figure
    # every long step shows progress on stderr; stdout keeps the report, with no header-only table
    for step in ("build-db", "roll out oracle", "roll out fabricator", "score oracle", "score fabricator"):
        assert step in proc.stderr, step
    assert "ABSTAINED_ON_CLEAN" in proc.stdout and "…" not in proc.stdout
    assert "Rejected candidates by reason" not in proc.stdout or "0 of" not in proc.stdout
    db = cwd / "work" / "hospital.duckdb"
    with duckdb.connect(str(db), read_only=True) as c:
        assert c.execute("SELECT count(*) FROM patients").fetchone()[0] == 50
    assert (cwd / "work" / "hospital" / "gaps.json").is_file()


@pytest.mark.slow
def test_demo_in_a_temporary_folder_prints_no_path_it_removes(tmp_path: Path, monkeypatch) -> None:
    """Without --workdir every file lives in a temporary folder removed at the end: no path into it is printed."""
    import tempfile

    from rich.console import Console

    from verifier.demo import run_demo

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the demo's temporary folder is created here
    out, bars = Console(record=True, width=120), Console(record=True, width=120)
    result = run_demo(seed=0, console=out, progress_console=bars)
    text = out.export_text()
    assert not result.kept and not result.db_path.exists()
    assert "Agents compared" in text and "now removed" in text
    assert str(tmp_path) not in text and "ehr-verifier-demo-" not in text, [l for l in text.splitlines() if str(tmp_path) in l]
    shown = bars.export_text()  # export_text empties the record
    assert "roll out oracle" in shown and "score fabricator" in shown
