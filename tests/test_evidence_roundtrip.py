"""The same episode, the same verdict, in memory or from JSONL (issue 17 kind 11).

Every DuckDB result type must round-trip through the contract and compare equal:
the environment records a SQL step's rows (``verifier.sql.json_cell``), the trajectory
is written with ``model_dump_json`` and read back, and the fabrication check
(``verifier.abstention._canon.canon_cell`` / ``_evidence.output_matches``) must see
the recorded rows as the re-executed ones in both forms. Before the fix an INTERVAL
column (``next_adm - discharge_time``) came back as ``"P13DT8H"`` and the episode
became ``EVIDENCE_FABRICATED``; a BLOB made ``model_dump_json`` raise; NaN became null.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from pathlib import Path

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verifier import Trajectory, verify
from verifier.abstention import output_matches
from verifier.abstention._canon import canon_cell
from verifier.agents.reference_agents import abstention_reasoning
from verifier.contract import ReasonCode, Step, VerifyConfig, read_jsonl, write_jsonl
from verifier.env import EHREnv, EnvConfig
from verifier.sql import QueryResult, json_cell, render_result

# ---------------------------------------------------------------- DuckDB literals of every result type
_ints = st.integers(-10**6, 10**6)


def _interval(draw) -> str:
    parts = [f"INTERVAL ({draw(st.integers(-400, 400))}) DAY", f"INTERVAL {draw(st.integers(0, 23))} HOUR",
             f"INTERVAL {draw(st.integers(0, 59))} MINUTE", f"INTERVAL {draw(st.integers(0, 24))} MONTH",
             f"INTERVAL {draw(st.integers(0, 10**6))} MICROSECOND"]
    return "(" + " + ".join(draw(st.lists(st.sampled_from(parts), min_size=1, max_size=4, unique=True))) + ")"


@st.composite
def literals(draw) -> str:
    """A SQL expression of one DuckDB result type (sometimes NULL, sometimes nested)."""
    kind = draw(st.sampled_from([
        "interval", "decimal", "time", "timetz", "timestamptz", "timestamp", "date", "blob", "uuid", "hugeint",
        "double", "nonfinite", "list", "struct", "map", "nested", "ubigint", "varchar", "bool", "null_typed",
    ]))
    if kind == "interval":
        return _interval(draw)
    if kind == "decimal":
        scale = draw(st.integers(0, 6))
        width = draw(st.integers(max(scale, 1) + 1, 38))
        digits = draw(st.integers(0, 10 ** min(width - scale, 15) - 1))
        frac = draw(st.integers(0, 10 ** scale - 1)) if scale else 0
        text = f"{digits}.{frac:0{scale}d}" if scale else str(digits)
        return f"'{'-' if draw(st.booleans()) else ''}{text}'::DECIMAL({width},{scale})"
    if kind in ("time", "timetz"):
        t = f"{draw(st.integers(0, 23)):02d}:{draw(st.integers(0, 59)):02d}:{draw(st.integers(0, 59)):02d}"
        if kind == "time":
            return f"TIME '{t}.{draw(st.integers(0, 999999)):06d}'"
        return f"TIMETZ '{t}{draw(st.sampled_from(['+00', '+02', '-05:30', '+14']))}'"
    if kind in ("timestamptz", "timestamp", "date"):
        d = draw(st.dates(min_value=dt.date(1900, 1, 1), max_value=dt.date(2200, 12, 31))).isoformat()
        if kind == "date":
            return f"DATE '{d}'"
        t = f"{draw(st.integers(0, 23)):02d}:{draw(st.integers(0, 59)):02d}:{draw(st.integers(0, 59)):02d}"
        if kind == "timestamp":
            return f"TIMESTAMP '{d} {t}.{draw(st.integers(0, 999999)):06d}'"
        return f"TIMESTAMPTZ '{d} {t}{draw(st.sampled_from(['+00', '+02', '-08', '+05:45']))}'"
    if kind == "blob":
        data = draw(st.binary(max_size=12))
        return "'" + "".join(f"\\x{b:02X}" for b in data) + "'::BLOB"
    if kind == "uuid":
        return f"'{uuid.UUID(int=draw(st.integers(0, 2**128 - 1)))}'::UUID"
    if kind == "hugeint":
        return f"{draw(st.integers(-(2**127) + 1, 2**127 - 1))}::HUGEINT"
    if kind == "ubigint":
        return f"{draw(st.integers(0, 2**64 - 1))}::UBIGINT"
    if kind == "double":
        return f"{draw(st.floats(allow_nan=False, allow_infinity=False, width=64))!r}::DOUBLE"
    if kind == "nonfinite":
        return f"'{draw(st.sampled_from(['NaN', 'inf', '-inf']))}'::{draw(st.sampled_from(['DOUBLE', 'FLOAT']))}"
    if kind == "list":
        inner = draw(st.lists(_ints.map(str) | st.just("NULL"), max_size=4))
        return "[" + ", ".join(inner) + "]::BIGINT[]"
    if kind == "struct":
        return f"{{'a': {draw(_ints)}, 'b': DATE '2150-06-07', 'c': {_interval(draw)}, 'd': 'x'}}"
    if kind == "map":
        keys = draw(st.lists(st.integers(-50, 50), max_size=4, unique=True))
        return "MAP {" + ", ".join(f"{k}: '{k * 2}'::DECIMAL(6,1)" for k in keys) + "}" if keys else "MAP {}"
    if kind == "nested":
        return "[{'t': TIMESTAMPTZ '2150-01-01 05:00:00+02', 'v': 1.5::DECIMAL(4,1)}, NULL]"
    if kind == "varchar":
        return "'" + draw(st.text(alphabet="abcXYZ 019-:|", max_size=8)).replace("'", "''") + "'"
    if kind == "bool":
        return draw(st.sampled_from(["TRUE", "FALSE"]))
    return f"NULL::{draw(st.sampled_from(['INTERVAL', 'DECIMAL(10,2)', 'BLOB', 'UUID', 'DATE']))}"


SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def mem():
    con = duckdb.connect()
    yield con
    con.close()


@SETTINGS
@given(literals(), literals())
def test_every_result_type_round_trips_through_the_contract(mem, a, b):
    """Recorded rows (JSON form) compare equal to the re-executed rows before and after a
    JSON round trip of the step, in both the structured and the rendered comparison."""
    sql = f"SELECT {a} AS a, {b} AS b, 1 AS n"
    cur = mem.execute(sql)
    cols = [d[0] for d in cur.description]
    rows = cur.fetchall()
    result = QueryResult(columns=cols, rows=rows, truncated=False)
    step = Step(index=1, kind="sql", code=sql, output=render_result(cols, rows), columns=cols,
                rows=[[json_cell(v) for v in r] for r in rows])
    again = Step.model_validate_json(step.model_dump_json())
    for v, recorded, reloaded in zip(rows[0], step.rows[0], again.rows[0]):
        assert canon_cell(v) == canon_cell(recorded) == canon_cell(reloaded), (v, recorded, reloaded)
    assert output_matches(step, result)[0]
    assert output_matches(again, result)[0], output_matches(again, result)
    text_only = again.model_copy(update={"columns": None, "rows": None})
    assert output_matches(text_only, result)[0]


@pytest.mark.parametrize("sql", [
    "SELECT INTERVAL 13 DAY + INTERVAL 8 HOUR AS los",
    "SELECT TIMESTAMP '2150-06-20 10:00' - TIMESTAMP '2150-06-07 02:00' AS gap",
    "SELECT TIMESTAMP '2152-07-01 10:05' - TIMESTAMP '2151-06-20 09:00' AS gap",  # pydantic writes P1Y11DT1H5M
    "SELECT 'NaN'::DOUBLE AS x, 'inf'::DOUBLE AS y",
    "SELECT '\\x00\\xFF'::BLOB AS b",
    "SELECT TIMESTAMPTZ '2150-01-01 05:00:00+02' AS t",
    "SELECT 1.50::DECIMAL(10,2) AS d",
])
def test_raw_rows_recorded_by_another_framework_also_round_trip(mem, sql):
    """A trajectory built in memory with raw DuckDB values (not the environment's JSON
    form) dumps without error and compares equal after reload (pydantic's ISO durations,
    NaN as "NaN")."""
    cur = mem.execute(sql)
    cols, rows = [d[0] for d in cur.description], cur.fetchall()
    result = QueryResult(columns=cols, rows=rows, truncated=False)
    step = Step(index=1, kind="sql", code=sql, columns=cols, rows=[list(r) for r in rows])
    if any(isinstance(v, bytes) for v in rows[0]):
        return  # raw bytes cannot be JSON text; the environment records them as text (json_cell)
    again = Step.model_validate_json(step.model_dump_json())
    assert output_matches(step, result)[0] and output_matches(again, result)[0], again.rows


# ---------------------------------------------------------------- the environment, a real Noise task
@pytest.fixture(scope="module")
def noise_task(synth_db: Path):
    """A Noise task of the synthetic hospital whose evidence query returns rows on the base."""
    from verifier.construction import make_tasks

    tasks = make_tasks(synth_db, seed=0)[0]
    con = duckdb.connect(str(synth_db), read_only=True)
    try:
        for t in tasks:
            if t.condition == "noise" and t.noise_type == "value" and con.execute(t.reference.sql).fetchall():
                return t
    finally:
        con.close()
    pytest.fail("no value-noise task with rows on the base")


@pytest.fixture(scope="module")
def env(synth_db: Path):
    e = EHREnv(str(synth_db), EnvConfig(max_steps=4))
    yield e
    e.close()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(literals())
def test_env_verdict_in_memory_equals_verdict_from_jsonl(env, noise_task, synth_db, tmp_path_factory, extra):
    """The oracle's evidence with an extra column of any result type: the verdict scored in
    memory equals the verdict after model_dump_json and reload, after a JSONL file, and on
    the loaded dict; and the evidence is never called fabricated."""
    config = VerifyConfig(db_path=str(synth_db))
    env.reset(noise_task)
    sql = f"SELECT q.*, {extra} AS extra FROM ({noise_task.reference.sql.strip()}) q"
    obs, *_ = env.step({"kind": "sql", "code": sql})
    assert not obs.startswith("Error"), obs
    env.step({"kind": "submit", "text": f"<answer>NULL</answer>\n<reasoning>{abstention_reasoning(noise_task, [1])}"
                                        "</reasoning>"})
    traj = env.trajectory
    in_memory = verify(traj, noise_task, config)
    assert ReasonCode.EVIDENCE_FABRICATED not in in_memory.reasons, in_memory.details
    reloaded = verify(Trajectory.model_validate_json(traj.model_dump_json()), noise_task, config)
    path = tmp_path_factory.mktemp("jsonl") / "t.jsonl"
    write_jsonl(path, [traj])
    from_file = verify(next(read_jsonl(path, Trajectory)), noise_task, config)
    from_dict = verify(json.loads(path.read_text().splitlines()[0]), noise_task, config)
    assert in_memory.model_dump() == reloaded.model_dump() == from_file.model_dump() == from_dict.model_dump()


def test_env_oracle_evidence_still_qualifies(env, noise_task, synth_db):
    """Control: the unmodified oracle evidence passes in memory and from JSON."""
    config = VerifyConfig(db_path=str(synth_db))
    env.reset(noise_task)
    env.step({"kind": "sql", "code": noise_task.reference.sql})
    env.step({"kind": "submit", "text": f"<answer>NULL</answer>\n<reasoning>{abstention_reasoning(noise_task, [1])}"
                                        "</reasoning>"})
    traj = env.trajectory
    assert verify(traj, noise_task, config).success
    assert verify(Trajectory.model_validate_json(traj.model_dump_json()), noise_task, config).success
