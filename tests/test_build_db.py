"""build-db on the real MIMIC-IV demo: counts, values, derived age, MEDS chart events, schema comments, bad input.

Expected values come from the source files, read here independently of DuckDB
(Python's csv/gzip, pyarrow), except the acceptance figures of issue 2, which
are the official demo row counts (mimic-code ``validate_demo.sql``).
"""

from __future__ import annotations

import csv
import gzip
import io
import re
import shutil
from datetime import date, datetime
from pathlib import Path

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from verifier.contract import InputError, SourceDataError
from verifier.database import (
    ADMISSION_AGE,
    MEDS_LACKS,
    build_database,
    column_plan,
    describe_schema,
    find_csv,
    print_summary,
    schema_tables,
    schema_text,
    table_by_name,
    table_by_source,
)

# ---------------------------------------------------------------- helpers


def _rows(path: Path):
    """Yield the data rows of a (gzipped) CSV as lists of strings (header skipped)."""
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh)
        next(reader)
        yield from reader


def _header(path: Path) -> list[str]:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", newline="") as fh:
        return next(csv.reader(fh))


def _same(src: str, typ: str, got: object) -> bool:
    """Does DB value ``got`` equal the CSV text ``src`` for a column of DuckDB type ``typ``?

    Python's csv cannot tell an unquoted empty field (NULL) from a quoted empty
    string, so '' matches NULL or '' here; test_quoted_empty_string_kept pins that down.
    """
    if src == "":
        return got is None or got == ""
    if typ == "VARCHAR":
        return got == src
    if typ in ("INTEGER", "SMALLINT", "BIGINT"):
        return got == int(src)
    if typ == "DOUBLE":
        return got == float(src)
    if typ == "TIMESTAMP":
        return got == datetime.fromisoformat(src)
    if typ == "DATE":
        return got == date.fromisoformat(src)
    raise AssertionError(f"untested type {typ}")


@pytest.fixture(scope="session")
def source_samples(mimic_dir: Path) -> dict[str, tuple[int, dict[int, list[str]]]]:
    """Per table: (row count, {row index: row}) for the first 20 rows, every 997th, and the last."""
    out: dict[str, tuple[int, dict[int, list[str]]]] = {}
    for spec in schema_tables():
        path = find_csv(mimic_dir, spec)
        if path is None:
            continue
        sample: dict[int, list[str]] = {}
        n = 0
        last: list[str] = []
        for i, row in enumerate(_rows(path)):
            n = i + 1
            last = row
            if i < 20 or i % 997 == 0:
                sample[i] = row
        if n:
            sample[n - 1] = last
        out[spec.name] = (n, sample)
    return out


@pytest.fixture(scope="session")
def demo_con(demo_db: Path, tmp_path_factory: pytest.TempPathFactory):
    """Read-only connection to a private copy of the session demo database.

    DuckDB refuses a second connection to the same file with a different
    configuration in one process, and other tests hold demo_db open with
    sqlsafe's locked-down config; a copy keeps both sides independent.
    """
    copy = tmp_path_factory.mktemp("demo_copy") / "demo.duckdb"
    shutil.copyfile(demo_db, copy)
    con = duckdb.connect(str(copy), read_only=True)
    yield con
    con.close()


@pytest.fixture(scope="session")
def no_meds_build(tmp_path_factory: pytest.TempPathFactory, mimic_dir: Path):
    out = tmp_path_factory.mktemp("no_meds") / "demo.duckdb"
    return build_database(mimic_dir, out)


# ---------------------------------------------------------------- acceptance (issue 2)


def test_acceptance_counts(demo_con) -> None:
    n_tables = demo_con.execute("SELECT count(*) FROM information_schema.tables").fetchone()[0]
    n_cols = demo_con.execute("SELECT count(*) FROM information_schema.columns").fetchone()[0]
    assert (n_tables, n_cols) == (31, 343)
    counts = {t: demo_con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
              for t in ("patients", "admissions", "lab_events", "chart_events")}
    assert counts == {"patients": 100, "admissions": 275, "lab_events": 107_727, "chart_events": 668_862}


def test_every_table_count_equals_source(demo_con, source_samples) -> None:
    for name, (n, _) in source_samples.items():
        assert demo_con.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0] == n, name


def test_schema_matches_rules(demo_con) -> None:
    got = {(t, c): ty for t, c, ty, _ in describe_schema(demo_con)}
    want = {(t.name, c.name): c.type for t in schema_tables() for c in t.columns}
    want[("admissions", ADMISSION_AGE)] = "INTEGER"
    assert got == want


def test_values_preserved_in_source_order(demo_con, source_samples, mimic_dir: Path) -> None:
    """Sampled rows of every CSV table equal the source column by column (rowid = source line order)."""
    for name, (_, sample) in source_samples.items():
        spec = table_by_name(name)
        pos = {h.lower(): i for i, h in enumerate(_header(find_csv(mimic_dir, spec)))}
        cols = ", ".join(f'"{c.name}"' for c in spec.columns)
        idx = sorted(sample)
        got = demo_con.execute(
            f'SELECT rowid, {cols} FROM "{name}" WHERE rowid IN ({", ".join(map(str, idx))}) ORDER BY rowid'
        ).fetchall()
        assert [g[0] for g in got] == idx, name
        for row in got:
            src = sample[row[0]]
            for k, col in enumerate(spec.columns):
                text = src[pos[col.source.lower()]]
                assert _same(text, col.type, row[k + 1]), (name, row[0], col.name, text, row[k + 1])


@pytest.mark.parametrize(
    ("source", "table", "column"),
    [("hosp/transfers", "transfers", "in_time"), ("hosp/pharmacy", "pharmacy_orders", "enter_time"),
     ("icu/icustays", "icu_stays", "out_time"), ("icu/procedureevents", "icu_procedure_events", "store_time")],
)
def test_timestamps_keep_seconds_and_fractions(demo_con, mimic_dir: Path, source: str, table: str, column: str) -> None:
    """Source seconds (and fractional seconds, e.g. procedureevents storetime) survive the build."""
    path = mimic_dir / f"{source}.csv.gz"
    k = [h.lower() for h in _header(path)].index(table_by_name(table).column(column).source.lower())
    texts = [r[k] for r in _rows(path) if r[k]]
    want_s = sum(1 for t in texts if datetime.fromisoformat(t).second != 0)
    want_us = sum(1 for t in texts if datetime.fromisoformat(t).microsecond != 0)
    got_s, got_us = demo_con.execute(
        f"SELECT count(*) FILTER (WHERE second({column}) <> 0), "
        f"count(*) FILTER (WHERE microsecond({column}) % 1000000 <> 0) FROM {table}"
    ).fetchone()
    assert (got_s, got_us) == (want_s, want_us)
    assert want_s > 0


_FIELD = re.compile(r'(?:"((?:[^"]|"")*)"|([^,"\r\n]*))(,|\r?\n|$)')


def _fields_with_quoting(text: str):
    """Split CSV text into records of (value, quoted) pairs."""
    pos, rec = 0, []
    while pos < len(text):
        m = _FIELD.match(text, pos)
        assert m is not None, text[pos:pos + 80]
        quoted = m.group(1) is not None
        rec.append(((m.group(1) or "").replace('""', '"') if quoted else m.group(2), quoted))
        pos = m.end()
        if m.group(3) != ",":
            yield rec
            rec = []
            if m.group(3) == "":
                break


def test_quoted_empty_string_kept(demo_con, mimic_dir: Path) -> None:
    """A quoted empty field ("") stays '' and an unquoted empty field is NULL (PostgreSQL COPY semantics)."""
    with gzip.open(mimic_dir / "hosp" / "prescriptions.csv.gz", "rt", encoding="utf-8", newline="") as fh:
        records = list(_fields_with_quoting(fh.read()))
    header = [v for v, _ in records[0]]
    k = header.index("form_rx")
    quoted_empty = sum(1 for r in records[1:] if r[k] == ("", True))
    null = sum(1 for r in records[1:] if r[k] == ("", False))
    got = demo_con.execute(
        "SELECT count(*) FILTER (WHERE form_rx = ''), count(*) FILTER (WHERE form_rx IS NULL) FROM prescriptions"
    ).fetchone()
    assert got == (quoted_empty, null)
    assert quoted_empty > 0


def test_admission_age_formula(demo_con, mimic_dir: Path) -> None:
    patients = {r[0]: (int(r[2]), int(r[3])) for r in _rows(mimic_dir / "hosp" / "patients.csv.gz")}
    want = {}
    for r in _rows(mimic_dir / "hosp" / "admissions.csv.gz"):
        age, year = patients[r[0]]
        want[int(r[1])] = age + int(r[2][:4]) - year
    got = dict(demo_con.execute(f"SELECT admissionid, {ADMISSION_AGE} FROM admissions").fetchall())
    assert got == want
    assert len(set(want.values())) > 10


# ---------------------------------------------------------------- MEDS chart events


def _meds_chart_events(meds_file: Path):
    """The MEDS rows that are ICU chart events (LAB code, itemid >= 220000), in file order, via pyarrow."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    table = pq.read_table(meds_file, columns=["subject_id", "time", "code", "value"])
    parts = pc.extract_regex(table.column("code"), r"^LAB//(?P<item>\d+)//(?P<unit>.*)$")
    item = pc.cast(pc.struct_field(parts, "item"), "int64")
    keep = pc.fill_null(pc.greater_equal(item, 220000), False)
    return table.filter(keep)


@pytest.fixture(scope="session")
def meds_events(meds_file: Path):
    return _meds_chart_events(meds_file)


def test_meds_chart_events_values_units_links(demo_con, meds_events) -> None:
    import pyarrow.compute as pc

    events = meds_events
    idx = list(range(0, events.num_rows, max(1, events.num_rows // 400)))
    sample = events.take(idx)
    got = demo_con.execute(
        "SELECT patientid, chart_time, itemid, value_numeric, value_unit, value, caregiver_id, store_time, warning "
        "FROM chart_events WHERE rowid IN (SELECT unnest(?::BIGINT[])) ORDER BY rowid",
        [idx],
    ).fetchall()
    assert len(got) == len(idx)
    vals = pc.cast(sample.column("value"), "string").to_pylist()  # float32 -> its shortest decimal text
    for subj, when, code, val, row in zip(sample.column("subject_id").to_pylist(), sample.column("time").to_pylist(),
                                          sample.column("code").to_pylist(), vals, got):
        _, item, unit = code.split("//", 2)
        assert row[0] == subj and row[1] == when and row[2] == int(item)
        assert row[3] == (None if val is None else float(val))
        assert row[4] == (None if unit == "UNK" else unit)
        assert row[5:] == (None, None, None, None)
    assert any(r[3] is not None and r[3] != round(r[3]) for r in got)
    assert any(r[4] is None for r in got) and any(r[4] is not None for r in got)


def test_meds_chart_events_linked_to_enclosing_stay(demo_con) -> None:
    bad = demo_con.execute(
        "SELECT count(*) FROM chart_events c JOIN icu_stays s ON s.icuadmissionid = c.icuadmissionid "
        "WHERE NOT (s.patientid = c.patientid AND s.admissionid = c.admissionid "
        "AND c.chart_time BETWEEN s.in_time AND s.out_time)"
    ).fetchone()[0]
    missed = demo_con.execute(
        "SELECT count(*) FROM chart_events c WHERE c.icuadmissionid IS NULL AND EXISTS "
        "(SELECT 1 FROM icu_stays s WHERE s.patientid = c.patientid AND c.chart_time BETWEEN s.in_time AND s.out_time)"
    ).fetchone()[0]
    linked = demo_con.execute("SELECT count(icuadmissionid) FROM chart_events").fetchone()[0]
    assert (bad, missed) == (0, 0)
    assert linked > 0.99 * 668_862


def test_meds_report_and_comment_state_what_is_lacking(tmp_path: Path, mimic_dir: Path, meds_events, demo_con) -> None:
    comment = demo_con.execute("SELECT comment FROM duckdb_tables() WHERE table_name = 'chart_events'").fetchone()[0]
    for col in MEDS_LACKS:
        assert col in comment
    col_doc = {c: d for t, c, _, d in describe_schema(demo_con) if t == "chart_events"}
    assert all("always NULL" in col_doc[c] for c in MEDS_LACKS)
    assert not any("always NULL" in d for c, d in col_doc.items() if c not in MEDS_LACKS)
    # the report and the printed summary; a small source keeps this fast: icu_stays + 5,000 MEDS chart events
    import pyarrow.parquet as pq

    src = tmp_path / "mimic"
    (src / "icu").mkdir(parents=True)
    shutil.copy(mimic_dir / "icu" / "icustays.csv.gz", src / "icu")
    small = tmp_path / "meds.parquet"
    pq.write_table(meds_events.slice(0, 5000), small)
    report = build_database(src, tmp_path / "x.duckdb", chartevents_meds=small)
    assert report.table("chart_events").origin == "meds"
    assert report.table("chart_events").rows == report.table("chart_events").source_rows == 5000
    assert report.meds_lacks == tuple(MEDS_LACKS.values())
    buf = io.StringIO()
    print_summary(report, Console(file=buf, width=300))
    text = buf.getvalue()
    for what in ("caregiver", "store time", "warning flag", "text values"):
        assert what in text


# ---------------------------------------------------------------- absent tables, schema description


def test_without_meds_chart_events_named_and_empty(no_meds_build) -> None:
    report = no_meds_build
    assert report.missing_tables == ("chart_events",)
    assert report.n_tables == 31 and report.n_columns == 343
    for width in (80, 200):
        buf = io.StringIO()
        print_summary(report, Console(file=buf, width=width))
        line = next(ln for ln in buf.getvalue().splitlines() if ln.strip().startswith("chart_events"))
        assert "ABSENT" in line
        assert "chart_events created empty" in " ".join(buf.getvalue().split())
    con = duckdb.connect(str(report.out), read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM chart_events").fetchone()[0] == 0
        cols = [r[1] for r in describe_schema(con) if r[0] == "chart_events"]
        assert cols == [c.name for c in table_by_source("chartevents").columns]
        assert "ABSENT" in con.execute(
            "SELECT comment FROM duckdb_tables() WHERE table_name = 'chart_events'").fetchone()[0]
    finally:
        con.close()


def test_schema_description_in_database(demo_con) -> None:
    rows = describe_schema(demo_con)
    assert len(rows) == 343
    assert all(desc.strip() for _, _, _, desc in rows)
    text = schema_text(demo_con)
    for spec in schema_tables():
        assert f"\n{spec.name}: " in "\n" + text
    assert "admission_age INTEGER - Age in years at admission" in text


# ---------------------------------------------------------------- bad input


def _copy_patients(tmp_path: Path, mimic_dir: Path) -> Path:
    src = tmp_path / "mimic"
    (src / "hosp").mkdir(parents=True)
    shutil.copy(mimic_dir / "hosp" / "patients.csv.gz", src / "hosp")
    return src


def _assert_nothing_left(out: Path) -> None:
    assert not out.exists()
    assert list(out.parent.iterdir()) == [], list(out.parent.iterdir())


def test_missing_folder(tmp_path: Path) -> None:
    out = tmp_path / "out" / "db.duckdb"
    with pytest.raises(SourceDataError) as exc:
        build_database(tmp_path / "nope", out)
    assert str(tmp_path / "nope") in str(exc.value)
    assert not out.exists()


@pytest.mark.parametrize("layout", [("hosp",), ("icu",), ("hosp", "icu")])
def test_no_source_table_at_all_fails(tmp_path: Path, layout: tuple[str, ...]) -> None:
    """Empty hosp/ and/or icu/ (or only unrelated files): no 0-row database, a SourceDataError naming the folder."""
    src = tmp_path / "mimic"
    for module in layout:
        (src / module).mkdir(parents=True)
    (src / layout[0] / "README.txt").write_text("not a table")
    out = tmp_path / "out" / "db.duckdb"
    with pytest.raises(SourceDataError, match="no source table file") as exc:
        build_database(src, out)
    assert str(src) in str(exc.value)
    assert not out.exists()


def test_bad_output_path(tmp_path: Path, mimic_dir: Path) -> None:
    src = _copy_patients(tmp_path, mimic_dir)
    with pytest.raises(InputError, match="folder"):
        build_database(src, tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(InputError) as exc:
        build_database(src, blocker / "db.duckdb")
    assert exc.value.field == "out"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "mimic"]


def test_csv_lacking_a_column(tmp_path: Path, mimic_dir: Path) -> None:
    src = _copy_patients(tmp_path, mimic_dir)
    rows = [r for r in csv.reader(io.StringIO(gzip.decompress((src / "hosp" / "patients.csv.gz").read_bytes()).decode()))]
    k = rows[0].index("anchor_year")
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows([r[:k] + r[k + 1:] for r in rows])
    (src / "hosp" / "patients.csv.gz").unlink()
    (src / "hosp" / "patients.csv").write_text(buf.getvalue())
    out = tmp_path / "out" / "db.duckdb"
    out.parent.mkdir()
    with pytest.raises(SourceDataError) as exc:
        build_database(src, out)
    assert "patients.csv" in str(exc.value) and "anchor_year" in str(exc.value)
    _assert_nothing_left(out)


def test_truncated_gz(tmp_path: Path, mimic_dir: Path) -> None:
    src = _copy_patients(tmp_path, mimic_dir)
    data = (mimic_dir / "hosp" / "labevents.csv.gz").read_bytes()
    (src / "hosp" / "labevents.csv.gz").write_bytes(data[: len(data) // 2])
    out = tmp_path / "out" / "db.duckdb"
    out.parent.mkdir()
    with pytest.raises(SourceDataError) as exc:
        build_database(src, out)
    assert "labevents.csv.gz" in str(exc.value)
    _assert_nothing_left(out)


def test_value_not_fitting_type_names_file(tmp_path: Path, mimic_dir: Path) -> None:
    src = _copy_patients(tmp_path, mimic_dir)
    text = gzip.decompress((src / "hosp" / "patients.csv.gz").read_bytes()).decode()
    lines = text.splitlines()
    parts = lines[5].split(",")  # patients has no quoted fields
    parts[2] = "old"  # anchor_age (SMALLINT)
    lines[5] = ",".join(parts)
    (src / "hosp" / "patients.csv.gz").write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    out = tmp_path / "db.duckdb"
    with pytest.raises(SourceDataError) as exc:
        build_database(src, out)
    assert "patients.csv.gz" in str(exc.value) and "anchor_age" in str(exc.value)
    assert not out.exists() and [p.name for p in tmp_path.iterdir()] == ["mimic"]


def test_failed_build_leaves_existing_file_untouched(tmp_path: Path, mimic_dir: Path) -> None:
    src = _copy_patients(tmp_path, mimic_dir)
    out = tmp_path / "db.duckdb"
    out.write_bytes(b"previous")
    (src / "hosp" / "admissions.csv.gz").write_bytes(b"not gzip")
    with pytest.raises(SourceDataError, match="admissions.csv.gz"):
        build_database(src, out)
    assert out.read_bytes() == b"previous"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["db.duckdb", "mimic"]


def test_bad_meds_file_named(tmp_path: Path, mimic_dir: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    src = _copy_patients(tmp_path, mimic_dir)
    meds = tmp_path / "meds.parquet"
    pq.write_table(pa.table({"subject_id": [1], "time": [datetime(2150, 1, 1)], "value": [1.0]}), meds)
    out = tmp_path / "out" / "db.duckdb"
    out.parent.mkdir()
    with pytest.raises(SourceDataError) as exc:
        build_database(src, out, chartevents_meds=meds)
    assert "meds.parquet" in str(exc.value) and "'code'" in str(exc.value)
    _assert_nothing_left(out)
    with pytest.raises(SourceDataError, match="absent.parquet"):
        build_database(src, out, chartevents_meds=tmp_path / "absent.parquet")
    _assert_nothing_left(out)


def test_reordered_uppercase_header_loads_same_values(tmp_path: Path, mimic_dir: Path) -> None:
    """Columns are matched by name, case-insensitively, whatever their order in the file."""
    src = _copy_patients(tmp_path, mimic_dir)
    rows = list(_rows(mimic_dir / "hosp" / "patients.csv.gz"))
    header = _header(mimic_dir / "hosp" / "patients.csv.gz")
    order = list(reversed(range(len(header))))
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([header[i].upper() for i in order])
    w.writerows([[r[i] for i in order] for r in rows])
    (src / "hosp" / "patients.csv.gz").write_bytes(gzip.compress(buf.getvalue().encode()))
    report = build_database(src, tmp_path / "db.duckdb")
    assert report.table("patients").rows == len(rows)
    con = duckdb.connect(str(tmp_path / "db.duckdb"), read_only=True)
    try:
        got = con.execute("SELECT * FROM patients ORDER BY rowid").fetchall()
    finally:
        con.close()
    spec = table_by_name("patients")
    for r, g in zip(rows, got):
        assert all(_same(r[k], c.type, g[k]) for k, c in enumerate(spec.columns))


def test_extra_source_column_is_named_not_silently_dropped(tmp_path: Path, mimic_dir: Path) -> None:
    src = _copy_patients(tmp_path, mimic_dir)
    rows = [_header(mimic_dir / "hosp" / "patients.csv.gz")] + list(_rows(mimic_dir / "hosp" / "patients.csv.gz"))
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows([r + (["site_code"] if i == 0 else ["X"]) for i, r in enumerate(rows)])
    (src / "hosp" / "patients.csv.gz").write_bytes(gzip.compress(buf.getvalue().encode()))
    report = build_database(src, tmp_path / "db.duckdb")
    assert report.table("patients").rows == len(rows) - 1
    assert any("site_code" in n for n in report.table("patients").notes)
    assert any("site_code" in n for n in report.notes)


# ---------------------------------------------------------------- header mapping (property)


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_column_plan_any_order_and_case(data) -> None:
    spec = data.draw(st.sampled_from(schema_tables()))
    header = data.draw(st.permutations([c.source for c in spec.columns]))
    header = [h.upper() if data.draw(st.booleans()) else h.lower() for h in header]
    plan, ignored = column_plan(Path("x.csv"), spec, header)
    assert ignored == ()
    assert sorted(plan.items()) == sorted((c.name, c.type) for c in spec.columns)
    by_source = {c.source.lower(): c.name for c in spec.columns}
    assert list(plan) == [by_source[h.lower()] for h in header]
    drop = data.draw(st.integers(0, len(header) - 1))
    missing = next(c.source for c in spec.columns if c.source.lower() == header[drop].lower())
    with pytest.raises(SourceDataError, match=re.escape(repr(missing))):
        column_plan(Path("x.csv"), spec, header[:drop] + header[drop + 1:])
