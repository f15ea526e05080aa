"""Filling ``chart_events`` from a MEDS event file when ``icu/chartevents`` is absent.

The MIMIC-IV demo MEDS export (PhysioNet mimic-iv-demo-meds 0.0.1, flattened)
carries ICU chart events as rows with ``code = 'LAB//<itemid>//<unit>'`` and
``itemid >= 220000`` (the ICU ``d_items`` range; hospital lab items are
5xxxx), ``value`` = the raw ``valuenum`` as float32, ``time`` = charttime. It
drops the stay and admission identifiers, which are recovered from the ICU
stay whose window holds the event (same patient, ``in_time <= chart_time <=
out_time``). Everything else it lacks is left NULL and stated (:data:`MEDS_LACKS`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb

from ..contract import SourceDataError
from ._csv import duckdb_reason, sql_literal

#: Columns the MEDS file must have.
MEDS_COLUMNS = ("subject_id", "time", "code", "value")

#: Smallest ICU (``d_items``) itemid; smaller LAB codes are hospital lab events.
ICU_ITEMID_MIN = 220000

#: The MEDS placeholder written where ``valueuom`` was empty.
MEDS_NO_UNIT = "UNK"

#: What a MEDS-built chart_events lacks (column -> why), stated in the output, the report and the table comment.
MEDS_LACKS = {
    "value": "text values (value is NULL; numeric results are in value_numeric, text-only results have both NULL)",
    "caregiver_id": "caregiver",
    "store_time": "store time",
    "warning": "warning flag",
}


@dataclass(frozen=True)
class MedsLoad:
    """Outcome of the MEDS fill: file, rows inserted, matching source rows, events outside every ICU stay."""

    path: Path
    rows: int
    source_rows: int
    unlinked: int


def _check_columns(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    try:
        names = [r[0].lower() for r in con.execute(f"DESCRIBE SELECT * FROM read_parquet({sql_literal(str(path))})").fetchall()]
    except duckdb.Error as exc:
        raise SourceDataError(path, f"cannot read MEDS parquet: {duckdb_reason(exc)}") from exc
    for col in MEDS_COLUMNS:
        if col not in names:
            raise SourceDataError(path, f"column {col!r} missing from the MEDS file (has {names})")


def load_meds_chart_events(con: duckdb.DuckDBPyConnection, path: Path) -> MedsLoad:
    """Insert the ICU chart events of the MEDS file into ``chart_events`` (``icu_stays`` must be loaded).

    Values: float32 -> its shortest decimal text -> DOUBLE, so 98.6 stays 98.6
    (not 98.59999847). Unit: the code's third part, ``UNK`` -> NULL. An event
    inside two overlapping stays of the patient is linked to the later one.
    Source order is kept.

    Raises:
        SourceDataError: file missing/unreadable, a required column missing, or a row count mismatch.
    """
    if not path.is_file():
        raise SourceDataError(path, "MEDS file not found")
    _check_columns(con, path)
    src = f"read_parquet({sql_literal(str(path))}, file_row_number = true)"
    pattern = sql_literal(r"^LAB//(\d+)//(.*)$")
    events = f"""
        SELECT file_row_number AS rid, subject_id, "time", "value",
               CAST(regexp_extract(code, {pattern}, 1) AS INTEGER) AS itemid,
               regexp_extract(code, {pattern}, 2) AS unit
        FROM {src}
        WHERE regexp_matches(code, {pattern})
          AND CAST(regexp_extract(code, {pattern}, 1) AS BIGINT) >= {ICU_ITEMID_MIN}
    """
    insert = f"""
        INSERT INTO chart_events
            (patientid, admissionid, icuadmissionid, caregiver_id, chart_time, store_time,
             itemid, "value", value_numeric, value_unit, warning)
        SELECT e.subject_id, s.admissionid, s.icuadmissionid, NULL, e."time", NULL,
               e.itemid, NULL, CAST(CAST(e."value" AS VARCHAR) AS DOUBLE),
               NULLIF(NULLIF(e.unit, {sql_literal(MEDS_NO_UNIT)}), ''), NULL
        FROM ({events}) e
        LEFT JOIN icu_stays s
          ON s.patientid = e.subject_id AND e."time" BETWEEN s.in_time AND s.out_time
        QUALIFY row_number() OVER (PARTITION BY e.rid ORDER BY s.in_time DESC NULLS LAST, s.icuadmissionid) = 1
        ORDER BY e.rid
    """
    try:
        con.execute(insert)
        source_rows = con.execute(f"SELECT count(*) FROM ({events})").fetchone()[0]
        rows, unlinked = con.execute(
            "SELECT count(*), count(*) FILTER (WHERE icuadmissionid IS NULL) FROM chart_events"
        ).fetchone()
    except duckdb.Error as exc:
        raise SourceDataError(path, f"cannot load chart events: {duckdb_reason(exc)}") from exc
    if rows != source_rows:
        raise SourceDataError(path, f"row count mismatch: MEDS has {source_rows} chart events, chart_events has {rows}")
    return MedsLoad(path, rows, source_rows, unlinked)
