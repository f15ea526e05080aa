"""Noise verification end to end on a small database written here: witness overlay,
sensitivity and gap rules, time limits, no network, threads, invariances (issue 4)."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import socket
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verifier import verify
from verifier.abstention import verify_noise
from verifier.abstention._witness import compare, overlay_for, tables_read
from verifier.contract import (
    DisplayConfig,
    InputError,
    ReasonCode,
    Step,
    Task,
    Trajectory,
    VerifyConfig,
    WitnessTable,
)
from verifier.parse import parse
from verifier.sql import QueryResult, render_result, run_query, thread_connection

ADM, ITEM = 7, 3  # the admission and item whose lab is missing


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """lab_events for admissions 1..20 x items 1..5 (10 results each), except (7, 3);
    one NULL value (lab_event_id 500); diagnosis 'X1' held by 3 patients."""
    path = tmp_path_factory.mktemp("noise") / "small.duckdb"
    con = duckdb.connect(str(path))
    con.execute("""
        CREATE TABLE lab_events AS
        SELECT row_number() OVER (ORDER BY a, i, k)::INTEGER AS lab_event_id, (a + 1000)::INTEGER AS patientid,
               a::INTEGER AS admissionid, i::INTEGER AS itemid,
               TIMESTAMP '2150-01-01' + INTERVAL (k) HOUR AS chart_time,
               CAST(3 + (a * 7 + i * 3 + k) % 20 / 10.0 AS VARCHAR) AS value,
               3 + (a * 7 + i * 3 + k) % 20 / 10.0 AS value_numeric, 'mEq/L' AS value_unit
        FROM range(1, 21) r1(a), range(1, 6) r2(i), range(10) r3(k)
        WHERE NOT (a = 7 AND i = 3)""")
    con.execute("UPDATE lab_events SET value = 'UNABLE TO REPORT', value_numeric = NULL WHERE lab_event_id = 500")
    con.execute("CREATE TABLE patients AS SELECT (a + 1000)::INTEGER AS patientid, 'F' AS gender FROM range(1, 21) r(a)")
    con.execute("CREATE TABLE diagnoses (patientid INTEGER, admissionid INTEGER, sequence_number INTEGER, icd_code VARCHAR, icd_version SMALLINT)")
    con.execute("INSERT INTO diagnoses VALUES (1001, 1, 1, 'X1', 10), (1002, 2, 1, 'X1', 10), (1003, 3, 1, 'X1', 10), (1004, 4, 1, 'Y2', 10)")
    con.close()
    _DB[:] = [path]
    return path


#: The module's database, for ``_traj`` to record what the agent saw.
_DB: list[Path] = []


def _seen(sql: str) -> str | None:
    """The environment's rendering of ``sql`` on the module's database (what the agent
    saw), or ``None`` when it does not run (the step then failed or was rejected)."""
    try:
        res = run_query(thread_connection(_DB[0]), sql, time_limit_s=10, row_cap=1000)
    except Exception:  # noqa: BLE001 - the verifier reports it; the step records nothing
        return None
    return render_result(res.columns, res.rows)


def _task(**over: Any) -> Task:
    data: dict[str, Any] = {
        "task_id": "k-noise", "pair_id": "k", "question": f"First potassium of admission {ADM}?", "condition": "noise",
        "noise_type": "record", "scope": "patient", "intent": "laboratory_microbiology", "program": "test",
        "reference": {
            "sql": "SELECT 1",
            "unmet_requirement": {"level": "record", "statement": "no potassium", "key_terms": ["potassium", f"admission {ADM}"]},
            "witness": [{"table": "lab_events", "mode": "insert", "rows": [
                {"lab_event_id": 9999, "patientid": 1000 + ADM, "admissionid": ADM, "itemid": ITEM, "value": "4.1", "value_numeric": 4.1}]}],
        },
    }
    data.update(over)
    return Task.model_validate(data)


VALUE_TASK = {
    "task_id": "v-noise", "noise_type": "value",
    "reference": {
        "sql": "SELECT 1",
        "unmet_requirement": {"level": "value", "statement": "event 500 has no numeric value", "key_terms": ["numeric value"]},
        "witness": [{"table": "lab_events", "mode": "replace", "key": ["lab_event_id"], "rows": [
            {"lab_event_id": 500, "patientid": 1011, "admissionid": 11, "itemid": 1, "value": "4.0", "value_numeric": 4.0}]}],
    },
}

POP_TASK = {
    "task_id": "p-noise", "scope": "population",
    "reference": {
        "sql": "SELECT 1", "eligible_units": 3,
        "unmet_requirement": {"level": "record", "statement": "fewer than five patients with X1", "key_terms": ["X1", "fewer than five"]},
        "witness": [{"table": "diagnoses", "rows": [
            {"patientid": 1011, "admissionid": 11, "icd_code": "X1", "icd_version": 10},
            {"patientid": 1012, "admissionid": 12, "icd_code": "X1", "icd_version": 10}]}],
    },
}

GOOD = f"SELECT count(*) AS n FROM lab_events WHERE admissionid = {ADM} AND itemid = {ITEM}"
GOOD_FINAL = f"Answer: NULL\nReasoning: No potassium result exists for admission {ADM}."


def _cited(n: int) -> str:
    """``GOOD_FINAL`` citing steps 1..n (issue 18 point 3: the qualifying step must be cited)."""
    return GOOD_FINAL + "".join(f" [step {i}]" for i in range(1, n + 1))


def _traj(steps: list[tuple[str, str | None]] | list[Step], final: str | None = None, task_id: str = "k-noise") -> Trajectory:
    # a step given output None recorded what the database really shows (``_seen``); the
    # default final is GOOD_FINAL citing every step
    final = _cited(len(steps)) if final is None else final
    built = [s if isinstance(s, Step) else Step(index=i, kind="sql", code=s[0], output=s[1] if s[1] is not None else _seen(s[0]))
             for i, s in enumerate(steps, 1)]
    return Trajectory(trajectory_id="t", task_id=task_id, steps=built, final_response=final)


def _cfg(db: Path, **kw: Any) -> VerifyConfig:
    return VerifyConfig(db_path=str(db), **kw)


def _reasons(db: Path, traj: Trajectory, task: Task | None = None, **kw: Any) -> list[str]:
    v = verify(traj, task or _task(), _cfg(db, **kw))
    assert ReasonCode.VERIFIER_ERROR not in v.reasons, v.details
    return [r.value for r in v.reasons]


def _printing_a_constant() -> list[str]:
    """The reasons for a Python step whose query never shows and which prints a constant: the
    query is unseen (NO_EVIDENCE) and, where bubblewrap runs, the step re-run on the witness
    prints the same (EVIDENCE_NOT_SENSITIVE; a step is judged by what it prints, section 4)."""
    from verifier.pysandbox import PythonLimits, sandbox_status

    rerun = sandbox_status(PythonLimits(isolation="bwrap", site_packages=True))[0]
    return ["EVIDENCE_NOT_SENSITIVE", "NO_EVIDENCE"] if rerun else ["NO_EVIDENCE"]


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ------------------------------------------------------------ overlay
def test_overlay_insert_and_replace(db: Path) -> None:
    ov = overlay_for(db, _task().reference.witness)
    assert ov.tables == frozenset({"lab_events"})
    assert ov.con.execute(GOOD).fetchall() == [(1,)]
    assert ov.con.execute("SELECT count(*) FROM patients").fetchall() == [(20,)]
    assert thread_connection(db).execute(GOOD).fetchall() == [(0,)]
    rep = overlay_for(db, Task.model_validate({**_task().model_dump(), **VALUE_TASK}).reference.witness)
    base_n = thread_connection(db).execute("SELECT count(*) FROM lab_events").fetchall()
    assert rep.con.execute("SELECT count(*) FROM lab_events").fetchall() == base_n
    assert rep.con.execute("SELECT value_numeric FROM lab_events WHERE lab_event_id = 500").fetchall() == [(4.0,)]


def test_overlay_rows_of_several_witness_tables_and_types(db: Path) -> None:
    """Witness rows arrive as JSON values (ISO text for timestamps, ints for doubles, None);
    each lands typed by its column, every row of every table, columns matched by name in
    any order and case, a missing column NULL."""
    witness = [
        WitnessTable(table="lab_events", rows=[
            {"lab_event_id": 9001, "patientid": 1007, "admissionid": 7, "itemid": 3, "chart_time": "2150-01-01T11:00:00",
             "value": "4", "value_numeric": 4, "value_unit": "mEq/L"},
            {"VALUE_NUMERIC": None, "lab_event_id": 9002, "patientid": 1007, "admissionid": 7, "itemid": 3,
             "chart_time": "2150-01-02 06:30:00"},
            {"lab_event_id": 9003, "patientid": 1007, "admissionid": 7, "itemid": 3, "value_numeric": 4.25}]),
        WitnessTable(table="patients", rows=[{"patientid": 5001, "gender": "M"}, {"patientid": 5002}]),
    ]
    ov = overlay_for(db, witness)
    rows = ov.con.execute("SELECT lab_event_id, chart_time, value, value_numeric, value_unit FROM lab_events "
                          "WHERE lab_event_id > 9000 ORDER BY 1").fetchall()
    assert rows == [(9001, dt.datetime(2150, 1, 1, 11), "4", 4.0, "mEq/L"), (9002, dt.datetime(2150, 1, 2, 6, 30), None, None, None),
                    (9003, None, None, 4.25, None)]
    assert ov.con.execute("SELECT patientid, gender FROM patients WHERE patientid > 5000 ORDER BY 1").fetchall() == [(5001, "M"), (5002, None)]
    bad = [WitnessTable(table="lab_events", rows=[{"lab_event_id": "not a number"}])]
    with pytest.raises(InputError, match="rows do not fit"):
        overlay_for(db, bad)


def test_overlay_is_cached_per_witness(db: Path) -> None:
    w = _task().reference.witness
    assert overlay_for(db, w) is overlay_for(db, list(w))
    other = [WitnessTable(table="patients", rows=[{"patientid": 5000, "gender": "M"}])]
    assert overlay_for(db, other) is not overlay_for(db, w)


def test_bad_witness_is_an_input_error(db: Path) -> None:
    with pytest.raises(InputError) as info:
        overlay_for(db, [WitnessTable(table="nope", rows=[{"a": 1}])])
    assert info.value.field == "reference.witness[0].table"
    with pytest.raises(InputError) as info:
        overlay_for(db, [WitnessTable(table="patients", rows=[{"patientid": 1, "shoe_size": 9}])])
    assert "shoe_size" in info.value.field
    with pytest.raises(InputError):
        overlay_for(db, [WitnessTable(table="patients", rows=[{"patientid": "not a number"}])])


def test_overlay_refuses_writes_and_file_access(db: Path) -> None:
    ov = overlay_for(db, _task().reference.witness)
    for raw in ("INSERT INTO __base.main.patients VALUES (1, 'M')", f"SELECT * FROM read_csv('{db}')",
                "SET enable_external_access = true", f"ATTACH '{db.parent}/x.duckdb' AS x"):
        with pytest.raises(duckdb.Error):
            ov.con.execute(raw).fetchall()


def test_tables_read() -> None:
    assert tables_read("SELECT * FROM lab_events l JOIN main.patients p USING (patientid)") == {"lab_events", "patients"}
    assert tables_read("DESCRIBE lab_events") is None
    assert tables_read("SELECT * FROM information_schema.tables") is None  # catalog: run on the base only (issue 30)


def test_catalog_qualified_query_still_sees_the_witness(db: Path) -> None:
    q = f"SELECT count(*) AS n FROM {db.stem}.main.lab_events WHERE admissionid = {ADM} AND itemid = {ITEM}"
    assert _reasons(db, _traj([(q, "n\n0\n(1 row)")])) == []


# ------------------------------------------------------------ sensitivity rule, table-driven
def _r(cols: list[str], rows: list[tuple]) -> QueryResult:
    return QueryResult(columns=cols, rows=rows)


COMPARE_CASES = [
    # (base rows, overlay rows, sensitive, shows_gap)
    ([], [(1,)], True, True),                       # absence
    ([(0,)], [(1,)], True, True),                   # count 0 -> 1
    ([(None,)], [(4.1,)], True, True),              # NULL filled
    ([(1, None)], [(1, 4.1)], True, True),          # NULL cell in a row
    ([(5, "a")], [(5, "a"), (6, "b")], True, True),  # a row appears
    ([(5, None)], [], True, True),                  # the NULL row disappears (replaced)
    ([(1000,)], [(1001,)], True, False),            # whole-table count
    ([(9,)], [(10,)], True, False),                 # global max id
    ([], [], False, False),                         # wrong scope, empty
    ([(3,)], [(3,)], False, False),                 # wrong scope, same
    ([(1,), (2,)], [(2,), (1,)], False, False),     # order only
]


@pytest.mark.parametrize("base,over,sensitive,gap", COMPARE_CASES)
def test_compare_rule(base: list, over: list, sensitive: bool, gap: bool) -> None:
    width = len((base or over or [(0,)])[0])
    cols = [f"c{i}" for i in range(width)]
    s = compare(_r(cols, base), _r(cols, over))
    assert (s.sensitive, s.shows_gap) == (sensitive, gap), s.why


def test_compare_uses_only_visible_rows() -> None:
    base = _r(["i"], [(i,) for i in range(100)])
    over = _r(["i"], [(i,) for i in range(100)] + [(1000,)])
    assert not compare(base, over, DisplayConfig(max_rows=50)).sensitive
    assert compare(base, over, DisplayConfig(max_rows=200)).shows_gap


def test_small_cell_count_shows_the_gap() -> None:
    s = compare(_r(["n"], [(3,)]), _r(["n"], [(5,)]), small_cell_threshold=5)
    assert s.shows_gap
    assert not compare(_r(["n"], [(3,)]), _r(["n"], [(5,)])).shows_gap


# ------------------------------------------------------------ verdicts on the small database
def test_verdicts_table(db: Path) -> None:
    cases = [
        ([(GOOD, "n\n0\n(1 row)")], None, []),
        ([(GOOD, None)], None, []),
        ([(f"SELECT * FROM lab_events WHERE admissionid = {ADM}", None)], None, []),  # the admission's labs: no item 3
        ([], None, ["NO_EVIDENCE"]),
        ([(f"SELECT count(*) AS n FROM lab_events WHERE admissionid = {ADM + 1} AND itemid = {ITEM}", None)], None, ["EVIDENCE_NOT_SENSITIVE"]),
        ([("SELECT count(*) AS n FROM patients", None)], None, ["EVIDENCE_NOT_SENSITIVE"]),
        ([("DESCRIBE lab_events", None)], None, ["EVIDENCE_NOT_SENSITIVE"]),
        ([(f"SELECT count(*) AS n FROM lab_events WHERE itemid = {ITEM}", None)], None, ["EVIDENCE_DOES_NOT_SHOW_GAP"]),
        ([(GOOD, "n\n2\n(1 row)")], None, ["EVIDENCE_FABRICATED"]),
        ([(GOOD, "n\n0\n(1 row)"), (f"SELECT count(*) AS n FROM lab_events WHERE admissionid = {ADM}", "n\n0\n(1 row)")],
         None, ["EVIDENCE_FABRICATED"]),  # fabrication anywhere fails, even beside good evidence
        ([("SELECT no_such FROM lab_events", None)], None, ["EVIDENCE_QUERY_FAILED"]),
        ([("DELETE FROM lab_events", None)], None, ["EVIDENCE_REJECTED"]),
        ([("SELECT no_such FROM lab_events", None), (GOOD, None)], None, []),  # a failed attempt then good evidence
        ([(GOOD, None), ("SELECT 1", None)], GOOD_FINAL + " [step 2]", ["EVIDENCE_NOT_SENSITIVE"]),  # citation restricts
        ([(GOOD, None), ("SELECT 1", None)], GOOD_FINAL + " [step 1]", []),
        ([(GOOD, None)], GOOD_FINAL + " [step 9]", ["NO_EVIDENCE"]),  # citing a step that does not exist
        # issue 18 point 3: the response must cite a qualifying step, and a citation of every
        # step of a long trajectory does not identify it
        ([(GOOD, None)], GOOD_FINAL, ["EVIDENCE_NOT_CITED"]),
        ([(GOOD, None), ("SELECT 1", None)], GOOD_FINAL + " as step 1 shows", []),
        ([("SELECT 1", None)] * 5 + [(GOOD, None)], GOOD_FINAL + " [steps 1-6]", ["EVIDENCE_NOT_CITED"]),
        ([("SELECT 1", None)] * 4 + [(GOOD, None)], GOOD_FINAL + " [steps 1-5]", []),
        ([(GOOD, None)], "Answer: NULL\nReasoning: nothing to report [step 1].", ["REASONING_MISSES_REQUIREMENT"]),
        ([(GOOD, None)], "Answer: 4.1 mEq/L\nReasoning: potassium in admission 7.", ["ANSWERED_NOISE"]),
    ]
    for steps, final, expected in cases:
        assert _reasons(db, _traj(steps, final)) == expected, (steps, final)


def test_trajectory_from_chat_messages(db: Path) -> None:
    """An episode logged as OpenAI-style chat messages (tool outputs framed as the
    environment shows them) verifies like a recorded one."""
    from verifier.contract import from_chat_messages

    call = {"id": "c1", "type": "function", "function": {"name": "run_sql", "arguments": json.dumps({"query": GOOD})}}
    messages = [
        {"role": "user", "content": "question"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "[step 1]\nn\n0\n(1 row)"},
        {"role": "assistant", "content": GOOD_FINAL + " [step 1]"},
    ]
    traj = from_chat_messages(messages, trajectory_id="t", task_id="k-noise")
    assert _reasons(db, traj) == []
    lying = [dict(m) for m in messages]
    lying[2]["content"] = "[step 1]\nn\n3\n(1 row)"
    assert _reasons(db, from_chat_messages(lying, trajectory_id="t", task_id="k-noise")) == ["EVIDENCE_FABRICATED"]


def test_sqlite_dialect_is_transpiled(db: Path) -> None:
    q = f"SELECT COUNT(*) AS n FROM lab_events WHERE admissionid = {ADM} AND itemid = {ITEM} AND CAST(value AS REAL) >= 0 LIMIT 1"
    traj = _traj([(q, "n\n0\n(1 row)")]).model_copy(update={"dialect": "sqlite"})
    assert _reasons(db, traj) == []


def test_python_step_evidence(db: Path) -> None:
    recorded = Step(index=1, kind="python", code="print(run())", output="0", sql=[GOOD])
    assert _reasons(db, _traj([recorded])) == []
    parsed = Step(index=1, kind="python", code=f'rows = db.sql("{GOOD}")\nprint(rows)', output="[(0,)]")
    assert _reasons(db, _traj([parsed])) == []
    dynamic = Step(index=1, kind="python", code=f'adm = {ADM}\nrows = db.sql(f"SELECT * FROM lab_events WHERE admissionid = {{adm + 0}}")')
    v = verify(_traj([dynamic]), _task(), _cfg(db))
    assert [r.value for r in v.reasons] == ["NO_EVIDENCE"] and v.details["evidence"]["unresolved_python"]
    failed = Step(index=1, kind="python", code=f'db.sql("{GOOD}")\n1/0', error="ZeroDivisionError")
    assert _reasons(db, _traj([failed])) == ["EVIDENCE_QUERY_FAILED"]


def test_volatile_queries_are_not_called_fabricated(db: Path) -> None:
    steps = [("SELECT now() AS t", "t\n2150-01-01 00:00:00\n(1 row)"), (GOOD, "n\n0\n(1 row)")]
    assert _reasons(db, _traj(steps)) == []
    v = verify(_traj(steps), _task(), _cfg(db))
    assert "volatile" in v.details["evidence"]["queries"][0]["recorded_output"]


def test_value_noise_uses_replacement(db: Path) -> None:
    assert thread_connection(db).execute("SELECT admissionid, itemid, value_numeric FROM lab_events WHERE lab_event_id = 500").fetchall() == [(11, 1, None)]
    task = Task.model_validate({**_task().model_dump(), **VALUE_TASK})
    final = "Answer: NULL\nReasoning: the lab event has no numeric value [step 1]."
    shown = _traj([("SELECT value, value_numeric FROM lab_events WHERE lab_event_id = 500", None)], final, "v-noise")
    assert _reasons(db, shown, task) == []
    counted = _traj([("SELECT count(*) AS n FROM lab_events WHERE admissionid = 11", None)], final, "v-noise")
    assert _reasons(db, counted, task) == ["EVIDENCE_NOT_SENSITIVE"]


def test_population_five_unit_rule(db: Path) -> None:
    task = Task.model_validate({**_task().model_dump(), **POP_TASK})
    step = [("SELECT count(DISTINCT patientid) AS n FROM diagnoses WHERE icd_code = 'X1'", "n\n3\n(1 row)")]
    ok = "Answer: NULL\nReasoning: fewer than five patients have X1 [step 1], so nothing can be reported."
    assert _reasons(db, _traj(step, ok, "p-noise"), task) == []
    told = "Answer: NULL\nReasoning: only three patients have X1 [step 1], fewer than five."
    assert _reasons(db, _traj(step, told, "p-noise"), task) == ["SMALL_CELL_DISCLOSED"]
    mean = "Answer: NULL\nReasoning: fewer than five patients have X1 [step 1]; their mean age is 61.5."
    assert _reasons(db, _traj(step, mean, "p-noise"), task) == ["SMALL_CELL_DISCLOSED"]
    answered = "Answer: 3\nReasoning: 3 patients have X1, fewer than five."
    assert _reasons(db, _traj(step, answered, "p-noise"), task) == ["ANSWERED_NOISE", "SMALL_CELL_DISCLOSED"]
    for n in (0, 5):
        other = Task.model_validate({**task.model_dump(), "reference": {**task.reference.model_dump(), "eligible_units": n}})
        assert "SMALL_CELL_DISCLOSED" not in _reasons(db, _traj(step, told, "p-noise"), other)


def test_task_without_witness_falls_back_to_visible_absence(db: Path) -> None:
    task = Task.model_validate({**_task().model_dump(), "reference": {**_task().reference.model_dump(), "witness": []}})
    v = verify(_traj([(GOOD, None)]), task, _cfg(db))
    assert v.success and v.details["evidence"]["witness"] is False
    v2 = verify(_traj([("SELECT count(*) AS n FROM patients", None)]), task, _cfg(db))
    assert [r.value for r in v2.reasons] == ["EVIDENCE_DOES_NOT_SHOW_GAP"]


def test_missing_database_is_an_input_error(db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EHR_VERIFIER_DB", raising=False)
    traj = _traj([(GOOD, None)])
    with pytest.raises(InputError):
        verify_noise(traj, _task(), parse(traj.final_response), VerifyConfig())
    with pytest.raises(InputError):
        verify_noise(traj, _task(), parse(traj.final_response), VerifyConfig(db_path=str(tmp_path / "none.duckdb")))
    monkeypatch.setenv("EHR_VERIFIER_DB", str(db))
    assert verify(traj, _task(), VerifyConfig()).success


def test_details_explain_the_verdict(db: Path) -> None:
    v = verify(_traj([("SELECT 1", None), (GOOD, "n\n0\n(1 row)")]), _task(), _cfg(db))
    ev = v.details["evidence"]
    assert v.success and ev["used"] == [2]
    assert [q["status"] for q in ev["queries"]] == ["not_sensitive", "qualifies"]
    assert v.details["judge"] == {"enabled": False, "ran": False}
    assert v.details["reasoning"]["missing"] == []


# ------------------------------------------------------------ safety and resources
def test_database_unchanged_by_verification(db: Path) -> None:
    before = _sha(db)
    for sql in (GOOD, "DROP TABLE lab_events", "COPY lab_events TO 'x.csv'", "SELECT * FROM read_csv('x.csv')", "INSERT INTO patients VALUES (1, 'M')"):
        verify(_traj([(sql, None)]), _task(), _cfg(db))
    assert _sha(db) == before


def test_no_network_without_judge(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("verification opened a network connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    for steps, final in (([(GOOD, None)], None), ([], None), ([("SELECT no", None)], None), ([(GOOD, None)], "Answer: 4")):
        verify(_traj(steps, final), _task(), _cfg(db))
    assert verify(_traj([(GOOD, None)]), _task(), _cfg(db)).success


def test_threads_give_the_same_verdicts(db: Path) -> None:
    trajs = [_traj([(GOOD, None)]), _traj([]), _traj([(f"SELECT count(*) FROM lab_events WHERE itemid = {ITEM}", None)])] * 8

    def run(t: Trajectory) -> tuple[bool, list[str]]:
        v = verify(t, _task(), _cfg(db))
        return v.success, [r.value for r in v.reasons]

    serial = [run(t) for t in trajs]
    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(run, trajs)) == serial


def test_query_cache_keeps_verdicts(db: Path) -> None:
    from verifier.sql import _cache as query_cache

    trajs = [_traj([(GOOD, None)]), _traj([(f"select COUNT(*) as n from lab_events where admissionid = {ADM} and itemid = {ITEM}", None)])]
    plain = [verify(t, _task(), _cfg(db)).reasons for t in trajs]
    cache = query_cache.QueryCache()
    previous = query_cache.install(cache)
    try:
        cached = [verify(t, _task(), _cfg(db)).reasons for t in trajs]
    finally:
        query_cache.install(previous)
    assert cached == plain
    assert cache.hits >= 2  # the second query normalises to the first (base and overlay)


def test_overlay_is_built_only_when_its_result_is_not_cached(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Batch scoring looks the overlay result up before building the overlay: with the
    thread's overlays dropped, a cached result gives the same verdict and builds nothing;
    a miss runs on the overlay in the query process (issue 16: agent SQL never runs in the
    scoring process), which builds nothing here either; an invalid witness is still an input error."""
    from verifier.abstention import _witness as witness
    from verifier.sql import _cache as query_cache

    task = _task()
    cache = query_cache.QueryCache()
    previous = query_cache.install(cache)
    try:
        first = verify(_traj([(GOOD, None)]), task, _cfg(db))
        for ov in witness._local.overlays.values():
            ov.close()
        witness._local.overlays.clear()
        built: list[Any] = []
        real = witness.Overlay
        monkeypatch.setattr(witness, "Overlay", lambda *a: built.append(a) or real(*a))
        again = verify(_traj([(GOOD, None)]), task, _cfg(db))
        assert again.model_dump() == first.model_dump() and built == []
        miss = verify(_traj([(f"SELECT itemid FROM lab_events WHERE admissionid = {ADM}", None)]), task, _cfg(db))
        assert "overlay_rows" in miss.details.get("evidence", {"queries": [miss.details]})["queries"][0] and built == [], miss.details
        bad = Task.model_validate({**task.model_dump(), "task_id": "bad"})
        bad.reference.witness = [WitnessTable(table="no_such_table", rows=[{"x": 1}])]
        with pytest.raises(InputError):
            witness.overlay_shape(db, bad.reference.witness)
    finally:
        query_cache.install(previous)


def test_time_limit_scores_failed_and_connection_survives(synth_db: Path) -> None:
    """Acceptance: a query that would run for minutes is stopped within its limit, scored
    as a failed query, and the next verification proceeds on the same connection."""
    heavy = ("SELECT count(*) AS n FROM lab_events a, lab_events b, lab_events c "
             "WHERE a.value_numeric + b.value_numeric > c.value_numeric")
    task = _task()
    con_before = thread_connection(synth_db)
    start = time.monotonic()
    # the evidence budget (issue 31: proportional, 0.5 s on this small database) is set above the
    # query's own limit, so the query's time limit is what stops it
    v = verify(_traj([(heavy, "n\n1\n(1 row)")]), task, _cfg(synth_db, query_time_limit_s=1.0, evidence_budget_floor_s=5.0))
    elapsed = time.monotonic() - start
    assert [r.value for r in v.reasons] == ["EVIDENCE_QUERY_FAILED"], v.details
    assert "time limit" in v.details["evidence"]["queries"][0]["why"]
    assert elapsed < 15, f"stopping took {elapsed:.1f}s"
    assert thread_connection(synth_db) is con_before
    count = "SELECT count(*) AS n FROM lab_events"
    seen = render_result(["n"], thread_connection(synth_db).execute(count).fetchall())
    ok = verify(_traj([(count, seen)]), task, _cfg(synth_db))
    assert ok.details["evidence"]["queries"][0]["status"] in ("no_gap", "not_sensitive")
    assert con_before.execute("SELECT 1").fetchall() == [(1,)]


def test_memory_hungry_query_scores_failed_and_connections_survive(db: Path) -> None:
    """A query needing more than the memory limit fails as a query (on the read-only
    connection and on the witness overlay instance alike); verification goes on."""
    task = _task()
    con = thread_connection(db)
    number, unit = con.execute("SELECT current_setting('memory_limit')").fetchone()[0].split()
    limit_bytes = float(number) * 1024 ** ["KiB", "MiB", "GiB", "TiB"].index(unit) * 1024
    heavy = f"SELECT max(length(s)) FROM (SELECT string_agg(repeat('y', 500), ',') AS s FROM range({int(6 * limit_bytes / 500)}))"
    # a budget above what the query uses before it runs out of memory: the memory limit, not the budget, stops it
    v = verify(_traj([(heavy, "max\n1\n(1 row)")]), task, _cfg(db, query_time_limit_s=120, evidence_budget_floor_s=30))
    assert [r.value for r in v.reasons] == ["EVIDENCE_QUERY_FAILED"], v.details
    assert "memory" in v.details["evidence"]["queries"][0]["why"].lower()
    ov = overlay_for(db, task.reference.witness)
    assert ov.con.execute("SELECT current_setting('memory_limit')").fetchone() == con.execute(
        "SELECT current_setting('memory_limit')").fetchone()
    with pytest.raises(duckdb.Error, match="(?i)memory"):
        ov.con.execute(heavy).fetchall()
    assert ov.con.execute(GOOD).fetchall() == [(1,)]
    assert thread_connection(db) is con
    assert _reasons(db, _traj([(heavy, "max\n1\n(1 row)"), (GOOD, None)]), query_time_limit_s=120,
                    evidence_budget_floor_s=30) == []  # a failed attempt, then good evidence
    assert con.execute("SELECT 1").fetchall() == [(1,)]


# ------------------------------------------------------------ invariances (hypothesis)
_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

_WRONG_SCOPE = [
    "SELECT count(*) AS n FROM lab_events WHERE admissionid = {a} AND itemid = {i}",
    "SELECT value_numeric FROM lab_events WHERE admissionid = {a} AND itemid = {i}",
    "SELECT max(value_numeric) AS m FROM lab_events WHERE admissionid = {a} AND itemid = {i}",
    "SELECT * FROM lab_events WHERE patientid = {p} AND itemid = {i} ORDER BY chart_time",
    "SELECT count(*) AS n FROM lab_events WHERE admissionid = {a} AND itemid = {i} AND chart_time < TIMESTAMP '2150-01-01 05:00:00'",
]


@_SETTINGS
@given(a=st.integers(1, 25), i=st.integers(1, 8), template=st.sampled_from(_WRONG_SCOPE), cite=st.booleans())
def test_evidence_from_the_wrong_scope_never_counts(db: Path, a: int, i: int, template: str, cite: bool) -> None:
    if a == ADM and i == ITEM:
        a += 1  # the right scope is excluded: wrong admission or wrong item
    sql = template.format(a=a, i=i, p=1000 + a)
    final = GOOD_FINAL + (" [step 1]" if cite else "")
    v = verify(_traj([(sql, None)], final), _task(), _cfg(db))
    assert not v.success
    assert v.reasons[0] in (ReasonCode.EVIDENCE_NOT_SENSITIVE, ReasonCode.EVIDENCE_DOES_NOT_SHOW_GAP)


_STEPS = {
    "good": (GOOD, "n\n0\n(1 row)"),
    "wrong": (f"SELECT count(*) AS n FROM lab_events WHERE admissionid = {ADM + 1} AND itemid = {ITEM}", None),
    "failed": ("SELECT nothing FROM lab_events", None),
    "global": (f"SELECT count(*) AS n FROM lab_events WHERE itemid = {ITEM}", None),
    "fabricated": (GOOD, "n\n5\n(1 row)"),
}
_IRRELEVANT = ["SELECT 1", "SELECT count(*) AS n FROM patients", "SHOW TABLES", "SELECT gender FROM patients WHERE patientid = 1003"]


@_SETTINGS
@given(kinds=st.lists(st.sampled_from(sorted(_STEPS)), max_size=4), extra=st.sampled_from(_IRRELEVANT),
       where=st.integers(0, 4), final=st.sampled_from([None, "Answer: NULL\nReasoning: no data", "Answer: 4.0"]))
def test_an_added_irrelevant_step_never_changes_the_verdict(db: Path, kinds: list[str], extra: str, where: int, final: str | None) -> None:
    # final None: GOOD_FINAL citing every step (at most 5: an identifying citation)
    steps = [_STEPS[k] for k in kinds]
    before = verify(_traj(steps, final), _task(), _cfg(db))
    pos = min(where, len(steps))
    after = verify(_traj(steps[:pos] + [(extra, None)] + steps[pos:], final), _task(), _cfg(db))
    assert after.success == before.success
    soft = {ReasonCode.NO_EVIDENCE, ReasonCode.EVIDENCE_NOT_SENSITIVE}
    assert [r for r in after.reasons if r not in soft] == [r for r in before.reasons if r not in soft]


def test_queries_on_the_witness_invented_ids_are_not_evidence(db: Path) -> None:
    """Loophole: a witness row's fresh surrogate id (lab_event_id 9999, absent from the
    base) can be guessed; a query on it saw the witness without looking at the admission
    or item. It must be sensitive under the re-keyed witness too (verifier.abstention._rekey)."""
    from verifier.abstention import rekeyed_witness, task_named_values

    task = _task()
    rekeyed = rekeyed_witness(db, task.reference.witness, task_named_values(task))
    assert rekeyed is not None
    row, new = task.reference.witness[0].rows[0], rekeyed[0].rows[0]
    assert new["lab_event_id"] == ~row["lab_event_id"]  # the fresh id is re-keyed ...
    assert {k: v for k, v in new.items() if k != "lab_event_id"} == {k: v for k, v in row.items() if k != "lab_event_id"}  # ... nothing else
    assert rekeyed_witness(db, task.reference.witness, task_named_values(task)) is rekeyed  # cached per task
    for attack in ("SELECT count(*) AS n FROM lab_events WHERE lab_event_id = 9999",
                   "SELECT count(*) AS n FROM lab_events WHERE lab_event_id >= 9000"):
        assert _reasons(db, _traj([(attack, None)])) == ["EVIDENCE_NOT_SENSITIVE"], attack
    assert _reasons(db, _traj([(GOOD, None)])) == []  # scoped evidence still qualifies
    # ids that exist in the base (admission 7, patient 1007, item 3) are never re-keyed
    existing = WitnessTable(table="lab_events", rows=[{"lab_event_id": 1, "patientid": 1007, "admissionid": 7, "itemid": 3}])
    assert rekeyed_witness(db, [existing]) is None
    # nor is an id the task itself names (its question, params, requirement): it is the scope
    assert rekeyed_witness(db, task.reference.witness, {"9999"}) is None
    assert "9999" in task_named_values(_task(question="First potassium of lab event 9999?"))


def test_an_empty_result_must_show_on_a_line_of_its_own(db: Path) -> None:
    """Red team: ``if False: con.execute(<scoped query with an empty result>)`` printing
    "exit code 0" counted, because any lone 0 in the output read as "the empty result was
    shown". Only a line that is itself an empty marker counts now."""
    rows_q = f"SELECT lab_event_id, value FROM lab_events WHERE admissionid = {ADM} AND itemid = {ITEM}"
    dead = Step(index=1, kind="python", code=f'if False:\n    con.execute("{rows_q}")\nprint("exit code 0")', output="exit code 0")
    assert _reasons(db, _traj([dead])) == _printing_a_constant()
    for shown in ("[]", "rows: 0", "Empty DataFrame\nColumns: [lab_event_id, value]\nIndex: []"):
        ran = Step(index=1, kind="python", code=f'print(con.execute("{rows_q}").fetchall())', output=shown)
        assert _reasons(db, _traj([ran])) == [], shown


def test_sql_the_agent_never_saw_is_not_evidence(db: Path) -> None:
    """Loopholes: SQL in unreachable Python (``if False:``) and a SQL step with no recorded
    output both counted as evidence. Recovered SQL counts only if its result shows in the
    step's output; a SQL step whose result was never recorded is not evidence."""
    dead = Step(index=1, kind="python", code=f'if False:\n    con.execute("{GOOD}")', output="")
    assert _reasons(db, _traj([dead])) == ["NO_EVIDENCE"]
    printed_else = Step(index=1, kind="python", code=f'if False:\n    print(con.execute("{GOOD}").fetchall())\nprint("done")', output="done")
    assert _reasons(db, _traj([printed_else])) == _printing_a_constant()
    ran = Step(index=1, kind="python", code=f'print(con.execute("{GOOD}").fetchall())', output="[(0,)]")
    assert _reasons(db, _traj([ran])) == []
    rows_q = f"SELECT itemid, count(*) AS n FROM lab_events WHERE admissionid = {ADM} GROUP BY itemid ORDER BY itemid"
    listed = Step(index=1, kind="python", code=f'print(con.execute("{rows_q}").fetchall())', output="[(1, 10), (2, 10), (4, 10), (5, 10)]")
    assert _reasons(db, _traj([listed])) == []
    unseen = Step(index=1, kind="sql", code=GOOD, output=None)
    v = verify(_traj([unseen]), _task(), _cfg(db))
    assert [r.value for r in v.reasons] == ["NO_EVIDENCE"] and v.details["evidence"]["queries"][0]["status"] == "unseen"
    structured = Step(index=1, kind="sql", code=GOOD, output=None, columns=["n"], rows=[[0]])
    assert _reasons(db, _traj([structured])) == []
