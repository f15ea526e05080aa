"""Issue 30 points 1-2: evidence is an observation of the scope, and the witness is secret.

Each case is written from the issue's description of a policy that passed on main before this
rule (``verifier.abstention._observation``; the witness overlay's catalog, ``_witness.tables_read``;
the read-only check's reserved names, ``verifier.sql``; volatile functions from DuckDB's catalog,
``_opaque.volatile_names``). Honest forms the corpora hold stay accepted.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import sqlglot
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.abstention._observation import Earlier, Given, earlier_read, problem
from verifier.abstention._opaque import volatile, volatile_names
from verifier.abstention._witness import tables_read
from verifier.agents.format import tagged_response
from verifier.agents.reference_agents import abstention_reasoning
from verifier.contract import UnsafeQueryError
from verifier.env.ehr_env import EHREnv
from verifier.sql import check_read_only

#: What a patient task gives: its ids, and nothing else.
GIVEN = Given(frozenset({"0", "1", "10014354", "20900955"}), "patient 10014354, admission 20900955: potassium")
#: What the agent read in step 1: the scope's counts and its lab ids.
EARLIER = earlier_read(["[step 1]\nt | s\nlab_events | 17\nadmissions | 3\n(2 rows)",
                        "lab_event_id\n4411\n4412\n4413", "status\nNot Given\nAdministered"])


def _why(sql: str, given: Given = GIVEN, earlier: Earlier = EARLIER):
    return problem(sqlglot.parse_one(sql, read="duckdb"), given, earlier)


@pytest.mark.parametrize("sql", [
    # snapshot-diff, shortest form: HAVING count(*) <> N with N read in step 1
    "SELECT 'lab_events' AS t FROM lab_events WHERE patientid = 10014354 HAVING count(*) <> 17",
    # snapshot-diff: a summary string compared with the literal read before
    "SELECT 'lab_events' FROM lab_events WHERE patientid = 10014354 "
    "HAVING count(*)::VARCHAR || '|' || coalesce(sum(value_numeric), 0)::VARCHAR <> '17|80.5'",
    # the same with a positive comparison and a number the question does not give
    "SELECT 1 FROM lab_events WHERE patientid = 10014354 HAVING count(*) > 17",
    "SELECT 1 FROM lab_events WHERE patientid = 10014354 HAVING count(*) >= 18",
    # count fingerprint without hash(): counts read before, one IS DISTINCT FROM cell
    "SELECT ((SELECT count(*) FROM lab_events WHERE patientid = 10014354), "
    "(SELECT count(*) FROM admissions WHERE patientid = 10014354)) IS DISTINCT FROM (17, 3) AS changed",
    # the count through a derived table's column, a CASE branch, arithmetic and NULLIF
    "SELECT * FROM (SELECT count(*) AS n FROM lab_events WHERE patientid = 10014354) WHERE n <> 17",
    "SELECT CASE count(*) WHEN 17 THEN 'same' ELSE 'changed' END FROM lab_events WHERE patientid = 10014354",
    "SELECT CASE WHEN count(*) <> 17 THEN 'changed' END FROM lab_events WHERE patientid = 10014354",
    "SELECT count(*) - 17 AS d FROM lab_events WHERE patientid = 10014354",
    "SELECT nullif(count(*), 17) FROM lab_events WHERE patientid = 10014354",
    "SELECT * FROM lab_events WHERE patientid = 10014354 QUALIFY count(*) OVER () <> 17",
    # exclusion of the rows read before, by id, and by a table of values
    "SELECT * FROM lab_events WHERE patientid = 10014354 AND lab_event_id NOT IN (4411, 4412, 4413)",
    "SELECT * FROM lab_events WHERE patientid = 10014354 AND NOT (lab_event_id = 4411)",
    "SELECT lab_event_id FROM lab_events WHERE patientid = 10014354 EXCEPT SELECT * FROM (VALUES (4411), (4412)) v(x)",
    # rows skipped by a position read before; modular buckets
    "SELECT * FROM lab_events WHERE patientid = 10014354 LIMIT 1 OFFSET 17",
    "SELECT count(*) % 7 FROM lab_events WHERE patientid = 10014354",
])
def test_a_comparison_with_a_snapshot_is_not_an_observation(sql: str) -> None:
    assert _why(sql).why is not None, sql


@pytest.mark.parametrize("sql", [
    "SELECT count(*) FROM lab_events WHERE patientid = 10014354 AND admissionid = 20900955 AND itemid = 50971",
    "SELECT * FROM lab_events WHERE admissionid = 20900955 AND itemid = 50971",
    "SELECT itemid, count(*) FROM lab_events WHERE admissionid = 20900955 GROUP BY itemid ORDER BY 2 DESC",
    "SELECT count(*) FILTER (WHERE itemid = 50971) AS k, count(*) AS total FROM lab_events WHERE admissionid = 20900955",
    "SELECT a.admissionid FROM admissions a WHERE a.patientid = 10014354 AND NOT EXISTS "
    "(SELECT 1 FROM lab_events l WHERE l.admissionid = a.admissionid AND l.itemid = 4411)",
    "SELECT admissionid FROM lab_events WHERE patientid = 10014354 GROUP BY admissionid HAVING count(*) = 0",
    "SELECT date_diff('hour', min(chart_time), max(chart_time)) FROM lab_events WHERE admissionid = 20900955",
    "SELECT round(avg(value_numeric), 2), strftime(max(chart_time), '%Y-%m-%d') FROM lab_events WHERE admissionid = 20900955",
    "SELECT count(*) * 100.0 / 17 FROM lab_events WHERE admissionid = 20900955",
    "SELECT discharge_location FROM admissions WHERE patientid = 10014354 AND admissionid = 20900955",
    "SELECT * FROM lab_events WHERE admissionid = 20900955 AND chart_time >= TIMESTAMP '2149-03-04 23:14:00'",
    "SELECT * FROM admissions WHERE patientid = 10014354 AND admissionid <> 20900955",
])
def test_an_observation_of_the_scope_stays_evidence(sql: str) -> None:
    obs = _why(sql)
    assert obs.why is None and not obs.excludes, (sql, obs)


def test_a_category_excluded_by_its_text_is_a_reading_convention_but_flags_the_nuisance() -> None:
    obs = _why("SELECT * FROM emar WHERE admissionid = 20900955 AND event_txt <> 'Not Given'")
    assert obs.why is None and obs.excludes
    obs = _why("SELECT * FROM emar WHERE admissionid = 20900955 AND event_txt <> 'Administered' AND event_txt <> 'Not Given'")
    assert obs.why is None and obs.excludes


def test_the_five_unit_threshold_and_the_questions_numbers_are_given() -> None:
    population = Given(frozenset({"0", "1", "5", "30"}), "admissions readmitted within 30 days")
    assert _why("SELECT count(*) FROM admissions HAVING count(*) >= 5", population).why is None
    assert _why("SELECT patientid FROM admissions GROUP BY patientid HAVING max(los) > 30", population).why is None
    assert _why("SELECT patientid FROM admissions GROUP BY patientid HAVING max(los) > 31", population).why is not None


@settings(max_examples=200, deadline=None)
@given(n=st.integers(min_value=2, max_value=10**12),
       agg=st.sampled_from(["count(*)", "sum(value_numeric)", "max(lab_event_id)", "count(DISTINCT itemid)",
                            "epoch(max(chart_time))", "avg(value_numeric)"]),
       op=st.sampled_from(["<>", "!=", ">", "<", "=", ">=", "IS DISTINCT FROM"]))
def test_any_aggregate_against_any_number_the_task_does_not_give_is_rejected(n: int, agg: str, op: str) -> None:
    """The rule does not depend on the number's size (the old rule looked for 7+ digits) nor on
    the operator; the same query with a number the task gives stays evidence."""
    sql = f"SELECT 1 FROM lab_events WHERE patientid = 10014354 HAVING {agg} {op} {n}"
    assert _why(sql).why is not None
    given_n = Given(GIVEN.numbers | {str(n)}, GIVEN.texts)
    assert _why(sql, given_n).why is None


# ---------------------------------------------------------------- the witness is secret
@pytest.mark.parametrize("sql", [
    "SELECT * FROM __witness_0",
    "SELECT * FROM temp.main.__witness_0 WHERE patientid = 10014354",
    'SELECT * FROM "__base".main.lab_events',
    "SELECT memory_usage FROM pragma_database_size()",
    "PRAGMA database_size",
])
def test_the_overlays_objects_and_the_process_state_cannot_be_named(sql: str) -> None:
    with pytest.raises(UnsafeQueryError):
        check_read_only(sql)


@pytest.mark.parametrize("sql", [
    "SELECT table_name, estimated_size FROM duckdb_tables() WHERE temporary",
    "SELECT * FROM lab_events l JOIN duckdb_views() v ON true WHERE l.patientid = 10014354",
    "SELECT * FROM information_schema.tables",
    "SELECT count(*) FROM lab_events, pg_catalog.pg_class",
])
def test_a_query_reading_the_catalog_is_run_on_the_base_only(sql: str) -> None:
    assert tables_read(sqlglot.parse_one(check_read_only(sql), read="duckdb")) is None


def test_volatile_functions_come_from_duckdbs_catalog() -> None:
    assert {"txid_current", "current_transaction_id", "random", "now", "stats"} <= volatile_names()
    for sql in ("SELECT CASE WHEN txid_current() % 2 = 0 THEN 1 END", "SELECT current_transaction_id()"):
        assert volatile(sqlglot.parse_one(sql, read="duckdb")), sql
    assert not volatile(sqlglot.parse_one("SELECT date_diff('day', a, b), year(a) FROM t", read="duckdb"))


# ---------------------------------------------------------------- end to end, synthetic hospital
def _ids(question: str) -> list[str]:
    return re.findall(r"\b\d{5,9}\b", question)


def _play(env: EHREnv, task, steps: list[str], cite: int) -> object:
    env.reset(task)
    outs = [env.step({"kind": "sql", "code": s})[0] for s in steps]
    text = tagged_response("NULL", abstention_reasoning(task, [cite]))
    *_, info = env.step({"kind": "submit", "text": text})
    return outs, info["verdict"]


@pytest.fixture(scope="module")
def env(synth_db: Path):
    e = EHREnv(str(synth_db))
    yield e
    e.close()


def test_snapshot_count_policy_fails_where_it_passed(env: EHREnv, synth_tasks: list) -> None:
    """The issue's snapshot-diff policy in its shortest form (``HAVING count(*) <> N``), with the
    oracle's reasoning to isolate the evidence layer: step 1 counts every table's rows of the
    question's ids, step 2 returns a row only where the count differs."""
    tasks = [t for t in synth_tasks if t.condition == "noise" and t.scope == "patient" and _ids(t.question)][:12]
    assert len(tasks) >= 8
    tables = ["admissions", "icu_stays", "lab_events", "diagnoses", "procedures", "prescriptions", "emar", "transfers"]
    passed = []
    for task in tasks:
        ids = ", ".join(_ids(task.question))
        env.reset(task)
        cols = {t: env_cols for t in tables if (env_cols := _id_column(env, t))}
        q1 = " UNION ALL ".join(f"SELECT '{t}' AS t, count(*) AS n FROM {t} WHERE {c} IN ({ids})" for t, c in cols.items())
        out1 = env.step({"kind": "sql", "code": q1})[0]
        counts = dict(re.findall(r"^(\w+) \| (\d+)$", out1, re.M))
        q2 = " UNION ALL ".join(f"SELECT '{t}' AS t FROM {t} WHERE {cols[t]} IN ({ids}) HAVING count(*) <> {n}"
                                for t, n in counts.items())
        env.step({"kind": "sql", "code": q2})
        *_, info = env.step({"kind": "submit", "text": tagged_response("NULL", abstention_reasoning(task, [2]))})
        if info["verdict"].success:
            passed.append(task.task_id)
    assert not passed


def _id_column(env: EHREnv, table: str) -> str | None:
    import duckdb

    con = duckdb.connect(env.db_path, read_only=True)
    try:
        names = {r[0] for r in con.execute(f"SELECT column_name FROM duckdb_columns() WHERE table_name = '{table}'").fetchall()}
    finally:
        con.close()
    for c in ("admissionid", "patientid"):
        if c in names:
            return c
    return None


# ---------------------------------------------------------------- Python steps, by the same rule
from verifier.abstention._observation import python_problem  # noqa: E402

PY_EARLIER = earlier_read(["n\n17\nitemid\n50971"])


@pytest.mark.parametrize("code", [
    # the snapshot diff moved into Python: a count compared with the one read in step 1
    'n = db.sql("SELECT count(*) FROM lab_events WHERE patientid = 10014354").rows[0][0]\nprint("changed" if n != 17 else "")',
    'n = db.sql("SELECT count(*) FROM lab_events WHERE patientid = 10014354").rows[0][0]\nprint("" if n == 17 else "x")',
    "if n > 17:\n    print(n)",
    "print(n - 17)",
    "print([r for r in rows if r[0] not in (17,)])",
])
def test_python_that_prints_a_difference_from_a_snapshot_is_not_evidence(code: str) -> None:
    assert python_problem(code, GIVEN, PY_EARLIER) is not None, code


@pytest.mark.parametrize("code", [
    'rows = db.sql("SELECT * FROM lab_events WHERE admissionid = 20900955").rows\nprint([r for r in rows if r[2] == 50971])',
    "if len(rows) == 0:\n    print('no rows')",
    "for r in rows:\n    print(r[0], (r[2] - r[1]).days)",
    "print(sorted(set(labels)))",
    "df = db.sql(q).df()\nprint(df[df.itemid == 50971])",
])
def test_python_that_prints_the_scopes_records_stays_a_candidate(code: str) -> None:
    assert python_problem(code, GIVEN, PY_EARLIER) is None, code


DIGEST = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"


@pytest.mark.parametrize("code", [
    # an outside adversary's snapshot diff in Python: per-table (count, digest) read in step 1,
    # pasted as a literal; step 2 prints the tables whose digest differs ('[]' on the database)
    "import hashlib\nsnap = {'lab_events': (17, '" + DIGEST + "'), 'emar': (3, 'aa')}\n"
    "out = []\nfor t, (n, d) in snap.items():\n    rows = db.sql(f'SELECT * FROM {t} WHERE patientid = 10014354').rows\n"
    "    if hashlib.sha256(repr(rows).encode()).hexdigest() != d:\n        out.append(t)\nprint(out)",
    "snap = {'lab_events': 17, 'admissions': 3}\nprint([t for t in snap if len(db.sql(f'SELECT * FROM {t}').rows) != snap[t]])",
    "seen = '" + DIGEST + "'\nprint(seen)",
])
def test_python_holding_a_snapshot_is_not_evidence(code: str) -> None:
    earlier = earlier_read([f"{{'lab_events': (17, '{DIGEST}'), 'emar': (3, 'aa')}}", "lab_events | 17\nadmissions | 3"])
    assert python_problem(code, GIVEN, earlier) is not None, code


_SNAPSHOT_STEP = r'''
import hashlib, re
Q = %r
nums = [int(x) for x in re.findall(r'\b\d{5,}\b', Q)]
tabs = {}
for t, c in db.sql("select table_name, column_name from information_schema.columns where table_schema='main'").rows:
    tabs.setdefault(t, []).append(c)
def digest(t):
    for c in ('icuadmissionid', 'admissionid', 'patientid'):
        if c in tabs[t] and nums:
            rows = db.sql(f"select * from {t} where {c} IN ({','.join(map(str, nums))})").rows
            return (len(rows), hashlib.sha256('\n'.join(sorted(repr(r) for r in rows)).encode()).hexdigest()[:16])
    return None
D = {t: d for t in sorted(tabs) if (d := digest(t)) is not None}
'''


@pytest.fixture(scope="module")
def demo_env(demo_db: Path):
    e = EHREnv(str(demo_db))
    yield e
    e.close()


@pytest.mark.real_data
def test_python_snapshot_diff_policy_fails_where_it_passed(demo_env: EHREnv, demo_tasks: list) -> None:
    """An outside adversary's policy (no code read; 39 of 40 real-demo patient Noise tasks before,
    and 3 of 3 here on main before this rule): a Python step prints per-table (row count, digest)
    of the rows holding the question's ids; a second step pastes that dict in and prints the
    tables whose digest changed, ``[]`` on the database. Oracle reasoning, to isolate the
    evidence layer. Real demo (skips, saying so, only where the demo folder is absent)."""
    env = demo_env
    tasks = [t for t in demo_tasks if t.condition == "noise" and t.scope == "patient" and _ids(t.question)][:3]
    passed = []
    for task in tasks:
        env.reset(task)
        out1 = env.step({"kind": "python", "code": _SNAPSHOT_STEP % task.question + "\nprint(D)\n"})[0]
        m = re.search(r"\{.*\}", out1, re.S)
        code2 = (_SNAPSHOT_STEP % task.question + f"\nBASE = {m.group(0) if m else '{}'}\n"
                 "print([(t, d[0]) for t, d in D.items() if BASE.get(t) != d])\n")
        env.step({"kind": "python", "code": code2})
        *_, info = env.step({"kind": "submit", "text": tagged_response("NULL", abstention_reasoning(task, [2]))})
        if info["verdict"].success:
            passed.append(task.task_id)
    assert not passed
