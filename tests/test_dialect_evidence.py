"""Evidence recorded on SQLite or PostgreSQL is re-executed with its dialect's semantics (issue 14, parts 2-3).

A SQLite copy of the synthetic hospital is built here with Python's ``sqlite3`` from the DuckDB
tables (EHRSQL's convention: INTEGER, REAL and TEXT columns, timestamps as ISO text). Noise
episodes are run there with evidence queries in SQLite idioms and recorded as the agent saw
them (the rendered table and the rows); the same episode written in DuckDB is run on DuckDB.
Both must get the same verdict, and no SQLite episode may be called fabricated. PostgreSQL
idioms are checked the same way against DuckDB only, by transpilation (the recorded output is
the DuckDB equivalent's, which is what PostgreSQL returns for them).
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from pathlib import Path
from typing import Any

import duckdb
import pytest
import sqlglot
from sqlglot import exp

from verifier import verify
from verifier.agents.reference_agents import abstention_reasoning
from verifier.agents.format import tagged_response
from verifier.contract import ReasonCode, Step, Trajectory, VerifyConfig
from verifier.sql import DialectUnsupported, check_read_only, render_result, run_query, to_duckdb, schema_of

#: The dataset's "now" (after every synthetic admission), as EHRSQL pins ``current_time``.
NOW = dt.datetime(2250, 12, 31, 23, 59, 0)
_SQLITE_TYPES = {"INTEGER": "INTEGER", "BIGINT": "INTEGER", "SMALLINT": "INTEGER", "TINYINT": "INTEGER",
                 "HUGEINT": "INTEGER", "DOUBLE": "REAL", "FLOAT": "REAL", "BOOLEAN": "INTEGER"}


def _sqlite_value(v: Any) -> Any:
    if isinstance(v, dt.datetime):
        return v.strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(v, bool):
        return int(v)
    if hasattr(v, "as_tuple"):  # Decimal
        return float(v)
    return v


@pytest.fixture(scope="module")
def sqlite_copy(synth_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The synthetic hospital copied into SQLite with Python's sqlite3."""
    out = tmp_path_factory.mktemp("sqlite") / "synth.sqlite"
    src = duckdb.connect(str(synth_db), read_only=True)
    dst = sqlite3.connect(out)
    for (table,) in src.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'").fetchall():
        cols = src.execute("SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ? "
                           "ORDER BY ordinal_position", [table]).fetchall()
        decl = ", ".join(f'"{c}" {_SQLITE_TYPES.get(t.split("(")[0], "REAL" if t.startswith("DECIMAL") else "TEXT")}'
                         for c, t in cols)
        dst.execute(f'CREATE TABLE "{table}" ({decl})')
        rows = src.execute(f'SELECT * FROM "{table}"').fetchall()
        dst.executemany(f'INSERT INTO "{table}" VALUES ({", ".join("?" * len(cols))})',
                        [tuple(_sqlite_value(v) for v in r) for r in rows])
    dst.commit()
    dst.close()
    src.close()
    return out


@pytest.fixture(scope="module")
def noise_tasks(synth_db: Path) -> dict[str, Any]:
    """One Noise task per program used below (``make_tasks`` on the synthetic hospital)."""
    from verifier.construction import load_programs, make_tasks

    # only the programs the templates use (a cap on pairs over all programs could leave one out)
    tasks, _ = make_tasks(synth_db, seed=0, programs=[p for p in load_programs() if p.name in PROGRAMS])
    out: dict[str, Any] = {}
    for t in tasks:
        if t.condition == "noise" and t.program in PROGRAMS and t.program not in out:
            out[t.program] = t
    assert set(out) == set(PROGRAMS)
    return out


#: program -> (time column, numeric column) used by the templates; table and filters come
#: from the task's reference SQL.
PROGRAMS = {
    "med_first_administration_time": ("chart_time", "emar_seq"),
    "transfer_first_into_unit": ("in_time", "transfer_id"),
    "lab_first_value_in_admission": ("chart_time", "value_numeric"),
}


def _parts(task: Any, dq: bool) -> dict[str, str]:
    """``{T}`` table, ``{W}`` SQLite filters (string literals double-quoted when ``dq``), ``{Wd}``
    DuckDB filters, ``{t}`` time column, ``{v}`` numeric column, ``{now}``."""
    tree = sqlglot.parse_one(task.reference.sql, read="duckdb")
    where = tree.args["where"].this
    table = tree.find(exp.Table).name
    wd = where.sql("duckdb")
    ws = where.copy()
    if dq:
        for lit in list(ws.find_all(exp.Literal)):
            if lit.is_string:
                lit.replace(exp.column(exp.to_identifier(lit.this, quoted=True)))
    t, v = PROGRAMS[task.program]
    return {"T": table, "W": ws.sql("sqlite"), "Wd": wd, "t": t, "v": v, "now": NOW.strftime("%Y-%m-%d %H:%M:%S")}


#: (idiom, SQLite query, the same query written for DuckDB, uses double-quoted literals).
SQLITE_IDIOMS: list[tuple[str, str, str, bool]] = [
    ("integer division", "SELECT COUNT(*) / COUNT(DISTINCT patientid) AS per_patient FROM {T} WHERE {W}",
     "SELECT COUNT(*) // NULLIF(COUNT(DISTINCT patientid), 0) AS per_patient FROM {T} WHERE {Wd}", False),
    ("integer division of columns", "SELECT {v} / 2 AS half, {v} AS raw FROM {T} WHERE {W}",
     "SELECT {v} // 2 AS half, {v} AS raw FROM {T} WHERE {Wd}", False),
    ("julian day difference", "SELECT strftime('%J', max({t})) - strftime('%J', min({t})) AS span_days FROM {T} WHERE {W}",
     "SELECT date_diff('second', min({t}), max({t})) / 86400.0 AS span_days FROM {T} WHERE {Wd}", False),
    ("julianday()", "SELECT julianday({t}) - julianday('2100-01-01') AS days FROM {T} WHERE {W}",
     "SELECT date_diff('second', TIMESTAMP '2100-01-01', {t}) / 86400.0 AS days FROM {T} WHERE {Wd}", False),
    ("double-quoted string literals", "SELECT MIN({t}) AS first FROM {T} WHERE {W}",
     "SELECT strftime(MIN({t}), '%Y-%m-%d %H:%M:%S') AS first FROM {T} WHERE {Wd}", True),
    ("datetime(current_time, start of year, -1 year)",
     "SELECT {t} FROM {T} WHERE {W} AND {t} < datetime(current_time, 'start of year', '-1 year')",
     "SELECT strftime({t}, '%Y-%m-%d %H:%M:%S') AS {t} FROM {T} WHERE {Wd} AND {t} < TIMESTAMP '2249-01-01'", False),
    ("date('now') pinned", "SELECT COUNT(*) AS n, date('now') AS today FROM {T} WHERE {W}",
     "SELECT COUNT(*) AS n, '2250-12-31' AS today FROM {T} WHERE {Wd}", False),
    ("NULL ordering ascending", "SELECT {t} FROM {T} WHERE {W} ORDER BY {t} LIMIT 3",
     "SELECT strftime({t}, '%Y-%m-%d %H:%M:%S') AS {t} FROM {T} WHERE {Wd} ORDER BY {t} NULLS FIRST LIMIT 3", False),
    ("NULL ordering descending", "SELECT {v} FROM {T} WHERE {W} ORDER BY {v} DESC LIMIT 3",
     "SELECT {v} FROM {T} WHERE {Wd} ORDER BY {v} DESC NULLS LAST LIMIT 3", False),
    ("division by zero", "SELECT COUNT(*) / 0 AS a, 1.0 / (COUNT(*) - COUNT(*)) AS b, COUNT(*) % 0 AS c FROM {T} WHERE {W}",
     "SELECT NULL AS a, NULL AS b, NULL AS c FROM {T} WHERE {Wd} HAVING COUNT(*) >= 0", False),
    ("strftime date format", "SELECT strftime('%Y-%m-%d', {t}) AS day FROM {T} WHERE {W}",
     "SELECT strftime({t}, '%Y-%m-%d') AS day FROM {T} WHERE {Wd}", False),
    ("strftime hour arithmetic", "SELECT strftime('%H', {t}) + 0 AS hour FROM {T} WHERE {W}",
     "SELECT hour({t}) AS hour FROM {T} WHERE {Wd}", False),
    ("strftime %s epoch", "SELECT strftime('%s', {t}) AS epoch FROM {T} WHERE {W}",
     "SELECT epoch({t})::BIGINT AS epoch FROM {T} WHERE {Wd}", False),
    ("strftime %f seconds", "SELECT strftime('%M:%f', {t}) AS ms FROM {T} WHERE {W}",
     "SELECT strftime({t}, '%M:%S.%g') AS ms FROM {T} WHERE {Wd}", False),
    ("strftime %j %w %W", "SELECT strftime('%j-%w-%W', {t}) AS doy FROM {T} WHERE {W}",
     "SELECT strftime({t}, '%j-%w-%W') AS doy FROM {T} WHERE {Wd}", False),
    ("year difference of strftime texts", "SELECT strftime('%Y', '2250-06-01') - strftime('%Y', {t}) AS years FROM {T} WHERE {W}",
     "SELECT 2250 - year({t}) AS years FROM {T} WHERE {Wd}", False),
    ("date modifiers: end of month", "SELECT date({t}, 'start of month', '+1 month', '-1 day') AS eom FROM {T} WHERE {W}",
     "SELECT strftime(last_day({t}), '%Y-%m-%d') AS eom FROM {T} WHERE {Wd}", False),
    ("date modifier: +1 month overflow", "SELECT datetime({t}, '+1 month') AS next FROM {T} WHERE {W}",
     "SELECT strftime(date_trunc('month', {t}) + INTERVAL 1 MONTH + (day({t}) - 1) * INTERVAL 1 DAY "
     "+ ({t} - date_trunc('day', {t})), '%Y-%m-%d %H:%M:%S') AS next FROM {T} WHERE {Wd}", False),
    ("date modifier: hours and weekday", "SELECT date({t}, '+36 hours', 'weekday 1') AS monday FROM {T} WHERE {W}",
     "SELECT strftime(({t} + INTERVAL 36 HOUR) + ((1 - dayofweek({t} + INTERVAL 36 HOUR) + 7) % 7) * INTERVAL 1 DAY, "
     "'%Y-%m-%d') AS monday FROM {T} WHERE {Wd}", False),
    ("timestamp text comparison", "SELECT COUNT(*) AS n FROM {T} WHERE {W} AND {t} > '2100'",
     "SELECT COUNT(*) AS n FROM {T} WHERE {Wd} AND strftime({t}, '%Y-%m-%d %H:%M:%S') > '2100'", False),
    ("substr of a timestamp", "SELECT substr({t}, 1, 7) AS month FROM {T} WHERE {W}",
     "SELECT strftime({t}, '%Y-%m') AS month FROM {T} WHERE {Wd}", False),
    ("LIKE on a timestamp", "SELECT COUNT(*) AS n FROM {T} WHERE {W} AND {t} LIKE '21%'",
     "SELECT COUNT(*) AS n FROM {T} WHERE {Wd} AND year({t}) BETWEEN 2100 AND 2199", False),
    ("case-insensitive LIKE", "SELECT COUNT(*) AS n, MIN({t}) AS first FROM {T} WHERE {W} AND '{T}' LIKE upper('{T}')",
     "SELECT COUNT(*) AS n, strftime(MIN({t}), '%Y-%m-%d %H:%M:%S') AS first FROM {T} WHERE {Wd}", False),
    ("CAST real AS INTEGER truncates", "SELECT CAST({v} * 1.0 + 0.7 AS INTEGER) AS whole FROM {T} WHERE {W}",
     "SELECT CAST(trunc({v} + 0.7) AS BIGINT) AS whole FROM {T} WHERE {Wd}", False),
    ("round half away from zero", "SELECT round({v} + 0.125, 2) AS r FROM {T} WHERE {W}",
     "SELECT round(CAST({v} + 0.125 AS DECIMAL(38, 12)), 2)::DOUBLE AS r FROM {T} WHERE {Wd}", False),
    ("total() on no rows", "SELECT total({v}) AS total, sum({v}) AS s FROM {T} WHERE {W}",
     "SELECT COALESCE(sum({v}), 0.0) AS total, sum({v}) AS s FROM {T} WHERE {Wd}", False),
    ("boolean as 0/1", "SELECT COUNT(*) > 0 AS found, COUNT(*) AS n FROM {T} WHERE {W}",
     "SELECT COUNT(*) > 0 AS found, COUNT(*) AS n FROM {T} WHERE {Wd}", False),
    ("avg of a comparison", "SELECT avg({v} > 0) AS share FROM {T} WHERE {W}",
     "SELECT avg(CAST({v} > 0 AS INTEGER)) AS share FROM {T} WHERE {Wd}", False),
    ("ifnull and iif", "SELECT ifnull(MIN({t}), 'none') AS first, iif(COUNT(*) = 0, 'absent', 'present') AS status FROM {T} WHERE {W}",
     "SELECT COALESCE(strftime(MIN({t}), '%Y-%m-%d %H:%M:%S'), 'none') AS first, "
     "CASE WHEN COUNT(*) = 0 THEN 'absent' ELSE 'present' END AS status FROM {T} WHERE {Wd}", False),
    ("group_concat", "SELECT group_concat({t}, ';') AS times FROM {T} WHERE {W}",
     "SELECT string_agg(strftime({t}, '%Y-%m-%d %H:%M:%S'), ';') AS times FROM {T} WHERE {Wd}", False),
    ("scalar max(a, b)", "SELECT max({v}, 3) AS m FROM {T} WHERE {W}",
     "SELECT greatest({v}, 3) AS m FROM {T} WHERE {Wd}", False),
    ("integer modulo", "SELECT {v} % 7 AS r FROM {T} WHERE {W}", "SELECT {v} % 7 AS r FROM {T} WHERE {Wd}", False),
    ("LIMIT offset, count", "SELECT {t} FROM {T} WHERE {W} ORDER BY {t} LIMIT 0, 2",
     "SELECT strftime({t}, '%Y-%m-%d %H:%M:%S') AS {t} FROM {T} WHERE {Wd} ORDER BY {t} NULLS FIRST LIMIT 2", False),
    ("bare column beside max()", "SELECT {t}, MAX({v}) AS top FROM {T} WHERE {W}",
     "SELECT strftime(arg_max({t}, {v}), '%Y-%m-%d %H:%M:%S') AS {t}, MAX({v}) AS top FROM {T} WHERE {Wd}", False),
    ("CAST strftime AS INTEGER", "SELECT CAST(strftime('%m', {t}) AS INTEGER) AS month FROM {T} WHERE {W}",
     "SELECT month({t}) AS month FROM {T} WHERE {Wd}", False),
]


def _run_sqlite(con: sqlite3.Connection, sql: str) -> tuple[list[str], list[tuple]]:
    """Run ``sql`` as an EHRSQL-style harness does: "now" (``current_time``, ``'now'``) replaced by the
    dataset's time before SQLite sees it."""
    pinned = NOW.strftime("%Y-%m-%d %H:%M:%S")
    cur = con.execute(sql.replace("current_time", f"'{pinned}'").replace("'now'", f"'{pinned}'"))
    return [d[0] for d in cur.description], cur.fetchall()


def _run(db: Path, sql: str, row_cap: int = 10_000) -> Any:
    from verifier.sql import open_readonly

    return run_query(open_readonly(db), sql, time_limit_s=30.0, row_cap=row_cap)


def _rendered(columns: list[str], rows: list[tuple]) -> str:
    return render_result(columns, rows)


def _episode(task: Any, sql: str, columns: list[str], rows: list[tuple], dialect: str, structured: bool) -> Trajectory:
    step = Step(index=1, kind="sql", code=sql, output=_rendered(columns, rows),
                columns=list(columns) if structured else None, rows=[list(r) for r in rows] if structured else None)
    final = tagged_response("NULL", abstention_reasoning(task, [1]))
    return Trajectory(trajectory_id=f"{task.task_id}:{dialect}", task_id=task.task_id, steps=[step],
                      final_response=final, dialect=dialect)  # type: ignore[arg-type]


def _key(v: Any) -> tuple:
    return v.success, [r.value for r in v.reasons]


def _cases(noise_tasks: dict) -> list[tuple[str, Any, str, str]]:
    out = []
    for idiom, lite, duck, dq in SQLITE_IDIOMS:
        for program, task in sorted(noise_tasks.items()):
            p = _parts(task, dq)
            if "{v}" in lite and program == "transfer_first_into_unit" and idiom.startswith("round"):
                continue
            out.append((idiom, task, lite.format(**p), duck.format(**p)))
    return out


def test_sqlite_idioms_get_the_verdict_of_the_same_episode_in_duckdb(sqlite_copy: Path, synth_db: Path, noise_tasks) -> None:
    cfg = VerifyConfig(db_path=str(synth_db), dataset_now=NOW)
    lite = sqlite3.connect(sqlite_copy)
    duck = duckdb.connect(str(synth_db), read_only=True)
    seen: dict[str, list[tuple]] = {}
    qualified = set()
    for idiom, task, lite_sql, duck_sql in _cases(noise_tasks):
        lcols, lrows = _run_sqlite(lite, lite_sql)
        dres = duck.execute(duck_sql)
        dcols, drows = [d[0] for d in dres.description], dres.fetchall()
        dv = verify(_episode(task, duck_sql, dcols, drows, "duckdb", True), task, cfg)
        for structured in (True, False):
            lv = verify(_episode(task, lite_sql, lcols, lrows, "sqlite", structured), task, cfg)
            assert ReasonCode.EVIDENCE_FABRICATED not in lv.reasons, (idiom, lite_sql, lv.details["evidence"])
            assert _key(lv) == _key(dv), (idiom, task.program, lite_sql, lv.details["evidence"], dv.details["evidence"])
        seen.setdefault(idiom, []).append(_key(dv))
        if dv.success:
            qualified.add(idiom)
    assert len(seen) >= 30
    # the idioms are real evidence: most qualify on at least one task
    assert len(qualified) >= 25, sorted(set(seen) - qualified)


def test_the_same_idioms_against_a_fresh_witness_overlay_are_recorded_values(sqlite_copy: Path, synth_db: Path, noise_tasks) -> None:
    """Each SQLite idiom, carried over, returns on DuckDB exactly what SQLite returns (rows compared
    type-aware), on the base database: the translation is faithful, not merely lenient."""
    from verifier.abstention._dialect import output_matches_across

    lite = sqlite3.connect(sqlite_copy)
    schema = schema_of(synth_db)
    # run on a table with rows (the Noise scope is empty): every idiom over all rows of its table
    for idiom, task, lite_sql, _duck in _cases(noise_tasks):
        unscoped = lite_sql.replace(_parts(task, "double-quoted" in idiom)["W"], "1 = 1")
        cols, rows = _run_sqlite(lite, unscoped)
        result = _run(synth_db, to_duckdb(unscoped, "sqlite", schema=schema, now=NOW), row_cap=100_000)
        step = Step(index=1, kind="sql", code=unscoped, output=None, columns=list(cols), rows=[list(r) for r in rows])
        ok, why = output_matches_across(step, result, None, "sqlite")
        assert ok, (idiom, unscoped, why, rows[:3], result.rows[:3])


def test_plain_transpilation_got_these_idioms_wrong(sqlite_copy: Path, synth_db: Path) -> None:
    """The failures the issue reports, on the old path (sqlglot's transpilation alone)."""
    lite = sqlite3.connect(sqlite_copy)
    cases = {
        "SELECT COUNT(*) / COUNT(DISTINCT patientid) FROM admissions": "differs",
        "SELECT strftime('%J', discharge_time) - strftime('%J', admission_time) FROM admissions": "fails",
        'SELECT COUNT(*) FROM patients WHERE gender = "F"': "fails",
        "SELECT COUNT(*) FROM admissions WHERE admission_time > datetime(current_time, 'start of year', '-1 year')": "fails",
    }
    for sql, how in cases.items():
        expected = lite.execute(sql).fetchall()
        try:
            old = _run(synth_db, check_read_only(sql, "sqlite")).rows
        except Exception:  # noqa: BLE001 - the old failure
            old = None
        assert (old is None) if how == "fails" else (old is not None and old != expected), sql
        new = _run(synth_db, to_duckdb(sql, "sqlite", schema=schema_of(synth_db), now=dt.datetime(2100, 12, 31, 23, 59)))
        if "current_time" not in sql:
            assert [tuple(float(x) if isinstance(x, (int, float)) else x for x in r) for r in new.rows] == \
                [tuple(float(x) if isinstance(x, (int, float)) else x for x in r) for r in expected], sql


@pytest.mark.parametrize("sql,why", [
    ("SELECT typeof(patientid) FROM admissions", "typeof"),
    ("SELECT datetime(admission_time, 'localtime') FROM admissions", "localtime"),
    ("SELECT strftime('%e', admission_time) FROM admissions", "%e"),
    ("SELECT date(2459000.5) FROM admissions", "numeric time value"),
    ("SELECT strftime('%Y', admission_time) = 2150 FROM admissions", "compared with a number"),
    ("SELECT gender + 1 FROM patients", "arithmetic on text"),
    ("SELECT datetime(admission_time, '+1.5 months') FROM admissions", "fractional"),
])
def test_what_cannot_be_carried_over_is_dialect_unsupported_never_failed_or_fabricated(sql: str, why: str, synth_db: Path, noise_tasks) -> None:
    with pytest.raises(DialectUnsupported, match=why):
        to_duckdb(sql, "sqlite", schema=schema_of(synth_db), now=NOW)
    task = noise_tasks["transfer_first_into_unit"]
    traj = _episode(task, sql, ["x"], [(1,)], "sqlite", False)
    v = verify(traj, task, VerifyConfig(db_path=str(synth_db), dataset_now=NOW))
    assert v.reasons == [ReasonCode.EVIDENCE_DIALECT_UNSUPPORTED], v.reasons
    assert v.details["evidence"]["queries"][0]["status"] == "dialect_unsupported"


def test_a_translation_duckdb_cannot_run_is_dialect_unsupported(synth_db: Path, noise_tasks) -> None:
    task = noise_tasks["transfer_first_into_unit"]
    # SQLite accepts a bare column beside count() (its value comes from an arbitrary row); DuckDB does not
    sql = "SELECT care_unit, count(*) FROM transfers"
    v = verify(_episode(task, sql, ["care_unit", "count(*)"], [("x", 3)], "sqlite", False), task,
               VerifyConfig(db_path=str(synth_db), dataset_now=NOW))
    assert v.reasons == [ReasonCode.EVIDENCE_DIALECT_UNSUPPORTED]


def test_fabricated_sqlite_output_is_still_fabricated(sqlite_copy: Path, synth_db: Path, noise_tasks) -> None:
    cfg = VerifyConfig(db_path=str(synth_db), dataset_now=NOW)
    lite = sqlite3.connect(sqlite_copy)
    for _idiom, task, lite_sql, _ in _cases(noise_tasks)[:12]:
        cols, rows = _run_sqlite(lite, lite_sql)
        lie = [tuple(41 if not isinstance(c, str) else "2151-01-01 00:00:00" for c in cols)] + list(rows)
        for structured in (True, False):
            v = verify(_episode(task, lite_sql, cols, lie, "sqlite", structured), task, cfg)
            assert ReasonCode.EVIDENCE_FABRICATED in v.reasons, (lite_sql, structured)


#: (idiom, PostgreSQL query, the same query written for DuckDB).
POSTGRES_IDIOMS: list[tuple[str, str, str]] = [
    ("integer division", "SELECT count(*) / NULLIF(count(DISTINCT patientid), 0) AS per_patient FROM {T} WHERE {Wd}",
     "SELECT count(*) // NULLIF(count(DISTINCT patientid), 0) AS per_patient FROM {T} WHERE {Wd}"),
    ("::numeric rounding", "SELECT round(avg({v})::numeric, 2) AS mean FROM {T} WHERE {Wd}",
     "SELECT round(CAST(avg({v}) AS DECIMAL(38, 10)), 2) AS mean FROM {T} WHERE {Wd}"),
    ("now() pinned with an interval", "SELECT count(*) AS n FROM {T} WHERE {Wd} AND {t} > now() - INTERVAL '200 years'",
     "SELECT count(*) AS n FROM {T} WHERE {Wd} AND {t} > TIMESTAMP '2050-12-31 23:59:00'"),
    ("EXTRACT(EPOCH FROM a - b)", "SELECT EXTRACT(EPOCH FROM max({t}) - min({t})) / 3600 AS hours FROM {T} WHERE {Wd}",
     "SELECT date_diff('second', min({t}), max({t})) / 3600 AS hours FROM {T} WHERE {Wd}"),
    ("to_char", "SELECT to_char({t}, 'YYYY-MM-DD HH24:MI') AS at FROM {T} WHERE {Wd}",
     "SELECT strftime({t}, '%Y-%m-%d %H:%M') AS at FROM {T} WHERE {Wd}"),
    ("date_trunc and ::date", "SELECT date_trunc('day', {t})::date AS day FROM {T} WHERE {Wd}",
     "SELECT CAST({t} AS DATE) AS day FROM {T} WHERE {Wd}"),
    ("NULL ordering descending", "SELECT {v} FROM {T} WHERE {Wd} ORDER BY {v} DESC LIMIT 3",
     "SELECT {v} FROM {T} WHERE {Wd} ORDER BY {v} DESC NULLS FIRST LIMIT 3"),
    ("ILIKE and FILTER", "SELECT count(*) FILTER (WHERE '{T}' ILIKE '%A%') AS n FROM {T} WHERE {Wd}",
     "SELECT count(*) AS n FROM {T} WHERE {Wd}"),
    ("string_agg and boolean output", "SELECT string_agg({t}::text, ';') AS times, count(*) > 0 AS found FROM {T} WHERE {Wd}",
     "SELECT string_agg(CAST({t} AS VARCHAR), ';') AS times, count(*) > 0 AS found FROM {T} WHERE {Wd}"),
    ("DISTINCT ON", "SELECT DISTINCT ON (patientid) patientid, {t} FROM {T} WHERE {Wd} ORDER BY patientid, {t}",
     "SELECT patientid, min({t}) AS {t} FROM {T} WHERE {Wd} GROUP BY patientid ORDER BY patientid"),
    ("CURRENT_DATE - date", "SELECT count(*) AS n FROM {T} WHERE {Wd} AND CURRENT_DATE - {t}::date > 0",
     "SELECT count(*) AS n FROM {T} WHERE {Wd} AND DATE '2250-12-31' - CAST({t} AS DATE) > 0"),
]


def test_postgres_idioms_get_the_verdict_of_the_same_episode_in_duckdb(synth_db: Path, noise_tasks) -> None:
    cfg = VerifyConfig(db_path=str(synth_db), dataset_now=NOW)
    duck = duckdb.connect(str(synth_db), read_only=True)
    qualified = set()
    for idiom, pg, dk in POSTGRES_IDIOMS:
        for _program, task in sorted(noise_tasks.items()):
            p = _parts(task, False)
            pg_sql, dk_sql = pg.format(**p), dk.format(**p)
            res = duck.execute(dk_sql)
            cols, rows = [d[0] for d in res.description], res.fetchall()
            dv = verify(_episode(task, dk_sql, cols, rows, "duckdb", True), task, cfg)
            pv = verify(_episode(task, pg_sql, cols, rows, "postgres", True), task, cfg)
            assert ReasonCode.EVIDENCE_FABRICATED not in pv.reasons, (idiom, pg_sql, pv.details["evidence"])
            assert _key(pv) == _key(dv), (idiom, pg_sql, pv.details["evidence"], dv.details["evidence"])
            if pv.success:
                qualified.add(idiom)
        # faithful, not lenient: over all rows of the table, the carried-over query returns the DuckDB equivalent's rows
        p = _parts(next(iter(noise_tasks.values())), False)
        un_pg, un_dk = pg.format(**{**p, "Wd": "1 = 1"}), dk.format(**{**p, "Wd": "1 = 1"})
        got = duck.execute(to_duckdb(un_pg, "postgres", schema=schema_of(synth_db), now=NOW)).fetchall()
        want = duck.execute(un_dk).fetchall()
        assert sorted(map(repr, got)) == sorted(map(repr, want)) or got == want, (idiom, got[:3], want[:3])
    assert len(POSTGRES_IDIOMS) >= 10 and len(qualified) >= 8, qualified


def test_postgres_booleans_and_utc_timestamps_compare_type_aware(synth_db: Path) -> None:
    from verifier.abstention._dialect import output_matches_across
    from verifier.sql import QueryResult

    result = QueryResult(columns=["found", "at", "v"], rows=[(True, dt.datetime(2150, 1, 2, 3, 4, 5), 6.9)])
    step = Step(index=1, kind="sql", code="-", columns=["found", "at", "v"], rows=[["t", "2150-01-02T03:04:05+00", "6.90"]])
    assert output_matches_across(step, result, None, "postgres")[0]
    lie = step.model_copy(update={"rows": [["f", "2150-01-02T03:04:05+00", "6.90"]]})
    assert not output_matches_across(lie, result, None, "postgres")[0]
    lite = Step(index=1, kind="sql", code="-", output="found | at | v\n1 | 2150-01-02 03:04:05 | 6.9\n(1 row)")
    assert output_matches_across(lite, result, None, "sqlite")[0]
    assert not output_matches_across(lite.model_copy(update={"output": "found | at | v\n0 | 2150-01-02 03:04:05 | 6.9\n(1 row)"}),
                                     result, None, "sqlite")[0]


@pytest.mark.parametrize("pg,value", [
    ("SELECT EXTRACT(YEAR FROM TIMESTAMP '2153-01-01') / 10", 215.3),  # EXTRACT is numeric in PostgreSQL
    ("SELECT date_part('year', TIMESTAMP '2153-01-01') / 10", 215.3),
    ("SELECT sum(x::bigint) / 2 FROM (VALUES (3)) v(x)", 1.5),  # sum(bigint) is numeric
    ("SELECT sum(x::int) / 2 FROM (VALUES (3)) v(x)", 1),  # sum(integer) is bigint: integer division
    ("SELECT 7 / 2, -7 / 2, 7.0 / 2", (3, -3, 3.5)),
])
def test_postgres_result_types_decide_integer_division(pg: str, value: Any, synth_db: Path) -> None:
    row = _run(synth_db, to_duckdb(pg, "postgres", schema=schema_of(synth_db))).rows[0]
    got = row if isinstance(value, tuple) else row[0]
    assert (tuple(float(v) for v in got) == tuple(float(v) for v in value)) if isinstance(value, tuple) else float(got) == value
