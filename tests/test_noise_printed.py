"""A Python step is judged by what it prints (ARCHITECTURE.md section 4, step 6; ``abstention/_printed``).

Two failures of one root cause, when a Python step's evidence was judged only by the SQL it ran:

- an honest agent reads a whole table, keeps the scope's rows in its own code and prints them
  (none: the requirement is unmet); the whole-table SQL cannot show the witness in its first
  displayed rows, so the abstention was rejected although the printout shows the gap;
- a dump that reads the witnessed tables whole and prints only their sizes passed whenever the
  table's first displayed rows held the scope's row: the agent never saw them.

The step is now re-run in the bubblewrap sandbox on the base, the witness overlay and the
decoy/nuisance overlays, and judged on its printed lines. Tests on the synthetic hospital, and
on the real demo when MIMIC_DEMO_DIR exists (those skip, saying so, when it is absent).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier import VerifyConfig, verify
from verifier.abstention._printed import printed_result, rows_appear_beside_counts
from verifier.abstention._proportion import table_rows
from verifier.abstention._witness import compare
from verifier.agents.format import tagged_response
from verifier.agents.reference_agents import abstention_reasoning
from verifier.contract import Step, Task, Trajectory
from verifier.pysandbox import PythonLimits, sandbox_status
from verifier.sql import visible_rows

pytestmark = pytest.mark.skipif(
    not sandbox_status(PythonLimits(isolation="bwrap", site_packages=True))[0],
    reason="bubblewrap cannot run here: Python steps are not re-run (the details say so), nothing to test",
)

#: Patient-scope record-noise programs whose scope is columns of the one witnessed table.
FILTERABLE = ("lab_first_value_in_admission", "hcpcs_code_date", "icd_procedure_date", "med_first_administration_time",
              "micro_culture_organisms")


def _abstain(task: Task, code: str, output: str, sql: list[str]) -> Trajectory:
    step = Step(index=1, kind="python", code=code, output=output, sql=sql)
    return Trajectory(trajectory_id=f"{task.task_id}#py", task_id=task.task_id, steps=[step],
                      final_response=tagged_response("NULL", abstention_reasoning(task, [1])))


def _run_locally(db: Path, code: str) -> tuple[str, list[str]]:
    """What the environment would record for ``code`` (its printout and SQL), computed here
    with a plain read-only connection standing in for ``db`` (test code, trusted)."""
    con = duckdb.connect(str(db), read_only=True)
    sqls: list[str] = []

    class Db:
        def sql(self, q: str) -> Any:
            sqls.append(q)
            cur = con.execute(q)
            return type("R", (), {"rows": [tuple(r) for r in cur.fetchall()], "columns": [d[0] for d in cur.description]})()

    lines: list[str] = []
    exec(code, {"db": Db(), "print": lambda *a: lines.append(" ".join(str(x) for x in a))})  # noqa: S102
    con.close()
    return "".join(line + "\n" for line in lines), sqls


def _filter_in_python(task: Task, db: Path) -> str:
    """An honest step: the witnessed table read whole, the task's scope kept in Python code."""
    table = task.reference.witness[0].table
    cols = {r[0] for r in duckdb.connect(str(db), read_only=True).execute(f"DESCRIBE {table}").fetchall()}
    scope = {k: v for k, v in task.params.items() if k in cols}
    assert "admissionid" in scope or "patientid" in scope, (task.task_id, scope)
    return (f"res = db.sql('SELECT * FROM {table}')\n"
            "at = {c: i for i, c in enumerate(res.columns)}\n"
            f"scope = {scope!r}\n"
            "hits = [r for r in res.rows if all(r[at[c]] == v for c, v in scope.items())]\n"
            "print('rows in scope:', len(hits))\n"
            "for h in hits:\n    print(h)\n")


def _filterable(tasks: list[Task], per_program: int, db: Path) -> list[Task]:
    """Tasks of ``FILTERABLE`` whose witnessed table is read whole under the row cap (a read the
    cap cuts cannot see the witness: the rows past it never reach the code, rightly)."""
    con = duckdb.connect(str(db), read_only=True)
    size = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in {w.table for x in tasks for w in x.reference.witness}}
    con.close()
    by: dict[str, list[Task]] = {}
    for t in tasks:
        if (t.condition == "noise" and t.program in FILTERABLE and len(t.reference.witness) == 1
                and size[t.reference.witness[0].table] < VerifyConfig().row_cap):
            by.setdefault(t.program, []).append(t)
    rnd = random.Random(0)
    return [t for p in sorted(by) for t in rnd.sample(by[p], min(per_program, len(by[p])))]


def _assert_honest_filter_passes(tasks: list[Task], db: Path) -> None:
    config = VerifyConfig(db_path=str(db))
    assert tasks
    for task in tasks:
        code = _filter_in_python(task, db)
        output, sqls = _run_locally(db, code)
        assert output.startswith("rows in scope: 0\n"), (task.task_id, output[:200])
        v = verify(_abstain(task, code, output, sqls), task, config)
        assert v.success, (task.task_id, [r.value for r in v.reasons], v.details["evidence"]["budget"], v.details["evidence"]["queries"])
        used = [r for r in v.details["evidence"]["queries"] if r["status"] == "qualifies"]
        assert [r["origin"] for r in used] == ["python_output"], used
        # the replays handle the rows in Python: the Python rate, not DuckDB's (clean-clone CI: the
        # whole lab_events read used 0.40 s of a 0.51 s budget idle and ran out under load)
        rows = min(table_rows(db, [task.reference.witness[0].table]), config.row_cap)
        assert v.details["evidence"]["budget"]["time_budget_s"] >= config.evidence_budget_floor_s + config.evidence_budget_s_per_python_row * rows


def test_whole_table_read_filtered_in_python_shows_the_gap_synthetic(synth_db: Path, synth_tasks: list) -> None:
    """(a) The printout of the scope's rows, kept from a whole-table read in Python code, is the
    evidence: the abstention is accepted (it was EVIDENCE_NOT_SENSITIVE)."""
    _assert_honest_filter_passes(_filterable(synth_tasks, 2, synth_db), synth_db)


@pytest.mark.real_data
def test_whole_table_read_filtered_in_python_shows_the_gap_real_demo(demo_db: Path, demo_tasks: list) -> None:
    """(a) on the real MIMIC-IV demo (skips, saying so, when MIMIC_DEMO_DIR is absent)."""
    _assert_honest_filter_passes(_filterable(demo_tasks, 1, demo_db), demo_db)


def test_printed_evidence_must_be_reproduced(synth_db: Path, synth_tasks: list) -> None:
    """A printout the code does not produce on the database is fabricated evidence."""
    task = _filterable(synth_tasks, 1, synth_db)[0]
    code = _filter_in_python(task, synth_db)
    output, sqls = _run_locally(synth_db, code)
    forged = output.replace("rows in scope: 0", "rows in scope: none at all")
    v = verify(_abstain(task, code, forged, sqls), task, VerifyConfig(db_path=str(synth_db)))
    assert [r.value for r in v.reasons][:1] == ["EVIDENCE_FABRICATED"], v.details["evidence"]["queries"]


def test_a_rerun_that_does_not_finish_gives_a_reason(synth_db: Path, synth_tasks: list) -> None:
    """Code that finishes on the base but loops on the witness is stopped at the evidence budget's
    wall time: a failed or over-budget re-run, with its reason, never VERIFIER_ERROR."""
    task = _filterable(synth_tasks, 1, synth_db)[0]
    code = _filter_in_python(task, synth_db) + "while hits:\n    pass\n"
    output, sqls = _run_locally(synth_db, code)
    v = verify(_abstain(task, code, output, sqls), task, VerifyConfig(db_path=str(synth_db), evidence_time_budget_s=3))
    reasons = {r.value for r in v.reasons}
    assert not v.success and "VERIFIER_ERROR" not in reasons
    assert reasons & {"EVIDENCE_QUERY_FAILED", "EVIDENCE_BUDGET_EXCEEDED"}, reasons
    rec = [r for r in v.details["evidence"]["queries"] if r["origin"] == "python_output"][0]
    assert rec["status"] in ("failed", "over_budget") and ("did not finish" in rec["why"] or "budget" in rec["why"]), rec


def _shown_first(task: Task, db: Path) -> bool:
    """Whether the row a ``replace`` witness changes sits in the first displayed rows of its table."""
    w = task.reference.witness[0]
    con = duckdb.connect(str(db), read_only=True)
    cur = con.execute(f"SELECT * FROM {w.table}")
    rows, cols = cur.fetchall(), [d[0] for d in cur.description]
    con.close()
    keys = {tuple(r.get(k) for k in w.key) for r in w.rows}
    at = [cols.index(k) for k in w.key]
    return any(tuple(row[i] for i in at) in keys for row in visible_rows(rows, cols))


def test_dump_printing_table_sizes_is_not_evidence(synth_db: Path, synth_tasks: list) -> None:
    """(b) A step that reads every witnessed table whole and prints only their sizes is rejected,
    also on the tasks whose changed row happens to be among the first rows a whole-table listing
    displays (it passed there: the SQL's shown rows stood for what the agent saw)."""
    config = VerifyConfig(db_path=str(synth_db))
    tasks = [t for t in synth_tasks if t.condition == "noise" and len(t.reference.witness) == 1
             and t.reference.witness[0].mode == "replace" and _shown_first(t, synth_db)]
    assert len(tasks) >= 3
    for task in tasks[:12]:
        table = task.reference.witness[0].table
        code = f"n = len(db.sql('SELECT * FROM {table}').rows)\nprint(n)\n"
        output, sqls = _run_locally(synth_db, code)
        v = verify(_abstain(task, code, output, sqls), task, config)
        assert not v.success, (task.task_id, v.details["evidence"]["queries"])
        statuses = {r["origin"]: r["status"] for r in v.details["evidence"]["queries"]}
        assert statuses["python_recorded"] == "unseen" and statuses["python_output"] != "qualifies", statuses


# ---------------------------------------------------------------- printed lines as rows
def test_printed_lines_compare_like_rows() -> None:
    """Absence lines give no row; a list of tuples printed on one line is one row per tuple."""
    assert printed_result("[]\nrows in scope: 0\nEmpty DataFrame\n").rows == []
    assert printed_result("[(1, 'a, b'), (2, None)]").rows == [("1", "a, b"), ("2", None)]
    base, over = printed_result("rows in scope: 0\n"), printed_result("rows in scope: 1\n(7, 'K', 4.1)\n")
    assert compare(base, over).shows_gap
    listing, grown = printed_result("1 1\n(3, 'x')\n"), printed_result("2 2\n(3, 'x')\n(4, 'y')\n")
    s = compare(listing, grown)
    assert s.sensitive and rows_appear_beside_counts(s.new, s.gone)
    sizes, bigger = printed_result("admissions 275\nlab_events 9120\n"), printed_result("admissions 275\nlab_events 9121\n")
    s = compare(sizes, bigger)
    assert s.sensitive and not s.shows_gap and not rows_appear_beside_counts(s.new, s.gone)


_LINES = st.lists(st.text(st.sampled_from("abc xyz019_,.()'"), min_size=1, max_size=20), min_size=1, max_size=8)


@settings(max_examples=60, deadline=None)
@given(_LINES, _LINES, st.randoms())
def test_reordering_printed_lines_changes_no_judgement(base: list[str], over: list[str], rnd: random.Random) -> None:
    """Printed lines are compared as a multiset: printing the same rows in another order (a
    dict or a query without ORDER BY) judges alike."""
    shuffled = over[:]
    rnd.shuffle(shuffled)
    a = compare(printed_result("\n".join(base)), printed_result("\n".join(over)))
    b = compare(printed_result("\n".join(base)), printed_result("\n".join(shuffled)))
    assert (a.sensitive, a.shows_gap, sorted(map(repr, a.new)), sorted(map(repr, a.gone))) == \
        (b.sensitive, b.shows_gap, sorted(map(repr, b.new)), sorted(map(repr, b.gone)))
    assert rows_appear_beside_counts(a.new, a.gone) == rows_appear_beside_counts(b.new, b.gone)
