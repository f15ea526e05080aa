"""A witness never fills a column the database does not record (``_witness.null_columns``).

A red-team policy answered NULL on "what number was charted at the last <item> entry?" with a query
that read only ``chart_events.value``, a column the MEDS-built demo leaves NULL in every row (its
schema says so), and the verdict passed: the task's witness row filled ``value`` as well as
``value_numeric``, so the overlay made the always-NULL column look sensitive. Blind reviewers failed
the episode: a column NULL everywhere shows nothing about one entry. The rule: columns that hold no
value in any row of the base table stay NULL in every witness row.
"""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pytest

from verifier.abstention._witness import Overlay, null_columns
from verifier.agents.reference_agents import abstention_reasoning
from verifier.contract import ReasonCode, WitnessTable
from verifier.env import EHREnv


@pytest.fixture()
def small_db(tmp_path: Path) -> Path:
    path = tmp_path / "obs.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE obs (pid INTEGER, item INTEGER, t TIMESTAMP, note VARCHAR, num DOUBLE, flag SMALLINT)")
    con.execute("INSERT INTO obs VALUES (1, 7, '2100-01-01 08:00', NULL, NULL, NULL), (1, 7, '2100-01-01 04:00', NULL, 2.0, NULL),"
                " (2, 7, '2100-01-02 04:00', NULL, 5.0, 1)")
    con.execute("CREATE TABLE empty_obs (pid INTEGER, note VARCHAR)")
    con.close()
    return path


def test_null_columns_lists_only_columns_null_in_every_row(small_db: Path) -> None:
    assert null_columns(small_db, "obs") == frozenset({"note"})
    assert null_columns(small_db, "empty_obs") == frozenset()  # nothing is known of an empty table's rows


def test_a_witness_leaves_unrecorded_columns_null(small_db: Path) -> None:
    row = {"pid": 1, "item": 7, "t": "2100-01-01 08:00:00", "note": "3.0", "num": 3.0, "flag": 0}
    for mode, key in (("replace", ["pid", "item", "t"]), ("insert", [])):
        ov = Overlay(small_db, [WitnessTable(table="obs", mode=mode, key=key, rows=[row])])
        try:
            got = ov.con.execute("SELECT note, num, flag FROM obs WHERE pid = 1 AND t = '2100-01-01 08:00'").fetchall()
        finally:
            ov.close()
        assert (None, 3.0, 0) in got, (mode, got)  # the recorded columns (num, flag) keep the witness values
        assert all(r[0] is None for r in got), (mode, got)


def _play(db: Path, task, sql: str):
    env = EHREnv(db)
    env.reset(task)
    env.step({"kind": "sql", "code": sql})
    _, _, _, _, info = env.step({"kind": "submit", "text": f"<answer>NULL</answer><reasoning>{abstention_reasoning(task, [1])}</reasoning>"})
    return info["verdict"]


def test_evidence_from_an_unrecorded_column_shows_no_gap_real_demo(demo_db: Path, demo_tasks: list) -> None:
    if not null_columns(demo_db, "chart_events"):
        pytest.skip("chart_events records every column in this build (no MEDS fill)")
    assert "value" in null_columns(demo_db, "chart_events")
    tasks = [t for t in demo_tasks if t.condition == "noise" and t.reference.witness
             and t.reference.witness[0].table == "chart_events" and t.reference.witness[0].mode == "replace"
             and re.match(r"\s*SELECT value_numeric AS value\b", t.reference.sql)]
    if not tasks:
        pytest.skip("no last-charted-value Noise task in this construction of the real demo")
    for t in tasks[:4]:
        honest = _play(demo_db, t, t.reference.sql)
        assert honest.success, (t.task_id, honest.reasons)
        text_only = re.sub(r"SELECT value_numeric AS value\b", "SELECT chart_time, value AS charted_value", t.reference.sql)
        verdict = _play(demo_db, t, text_only)
        assert not verdict.success and ReasonCode.EVIDENCE_NOT_SENSITIVE in verdict.reasons, (t.task_id, verdict.reasons)
