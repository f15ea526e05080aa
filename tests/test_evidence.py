"""Evidence extraction (SQL steps, Python steps, citations) and the fabrication
comparison rule (issue 4, items 2-3)."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.abstention import (
    canon_cell,
    extract_evidence,
    output_matches,
    sql_in_python,
)
from verifier.contract import DisplayConfig, Step, Trajectory
from verifier.sql import QueryResult, render_result

Q = "SELECT count(*) AS n FROM lab_events WHERE admissionid = 7 AND itemid = 3"


# ------------------------------------------------------------ Python SQL recovery
@pytest.mark.parametrize(
    "code,expected",
    [
        (f'db.sql("{Q}")', [Q]),
        (f'con.execute("{Q}").fetchall()', [Q]),
        (f'q = "{Q}"\nrows = con.execute(q).fetchall()', [Q]),
        (f'import pandas as pd\ndf = pd.read_sql("{Q}", con)', [Q]),
        ('q = "SELECT 1 "\nq2 = q + "AS x"\ndb.sql(q2)', ["SELECT 1 AS x"]),
        ('db.sql(f"SELECT {1}")', []),  # a non-string value in an f-string is not static
        ('db.sql(sql="SELECT 2")', ["SELECT 2"]),
        ('t = "lab_events"\ndb.sql(f"SELECT * FROM {t}")', ["SELECT * FROM lab_events"]),
        ('from textwrap import dedent\ndb.sql(dedent("""\n  SELECT 3\n"""))', ["\n  SELECT 3\n"]),
        ('q = "SELECT 1"\nq = make()\ndb.sql(q)', []),  # rebinding to an unknown value forgets the literal
        ('for a in [1, 2]:\n    db.sql("SELECT 4")', ["SELECT 4"]),
        ('print("SELECT 5")', []),  # printing SQL is not running it
        ("def f(:\n", []),
    ],
)
def test_sql_in_python(code: str, expected: list[str]) -> None:
    sqls, unresolved = sql_in_python(code)
    assert sqls == expected
    if code.startswith('db.sql(f"SELECT {1}")'):
        assert unresolved and "not a static string" in unresolved[0]


def _traj(steps: list[Step]) -> Trajectory:
    return Trajectory(trajectory_id="t", task_id="x", steps=steps, final_response="")


def test_extract_evidence_orders_and_marks_origin() -> None:
    steps = [
        Step(index=1, kind="sql", code="SELECT 1", output="1\n1\n(1 row)"),
        Step(index=2, kind="python", code="whatever()", sql=["SELECT 2", "SELECT 3"]),
        Step(index=3, kind="python", code='db.sql("SELECT 4")'),
        Step(index=4, kind="sql", code="SELECT bad", error="Error: query failed"),
    ]
    ev = extract_evidence(_traj(steps))
    assert [(q.step, q.position, q.sql, q.origin) for q in ev.queries] == [
        (1, 0, "SELECT 1", "sql"),
        (2, 0, "SELECT 2", "python_recorded"),
        (2, 1, "SELECT 3", "python_recorded"),
        (3, 0, "SELECT 4", "python_ast"),
        (4, 0, "SELECT bad", "sql"),
    ]
    assert ev.queries[-1].failed and not ev.queries[0].failed


def test_citations_restrict_evidence_and_invalid_ones_are_reported() -> None:
    steps = [Step(index=i, kind="sql", code=f"SELECT {i}") for i in range(1, 5)]
    ev = extract_evidence(_traj(steps), [3, 9, 1])
    assert [q.step for q in ev.queries] == [1, 3]
    assert ev.cited == [1, 3] and ev.invalid_citations == [9]
    only_invalid = extract_evidence(_traj(steps), [12])
    assert only_invalid.queries == [] and only_invalid.invalid_citations == [12]


@settings(max_examples=100, deadline=None)
@given(n=st.integers(0, 8), cites=st.lists(st.integers(-2, 10), max_size=5))
def test_cited_evidence_is_exactly_the_valid_cited_steps(n: int, cites: list[int]) -> None:
    steps = [Step(index=i, kind="sql", code=f"SELECT {i}") for i in range(1, n + 1)]
    ev = extract_evidence(_traj(steps), cites)
    valid = sorted({c for c in cites if 1 <= c <= n})
    if cites:
        assert [q.step for q in ev.queries] == valid
    else:
        assert [q.step for q in ev.queries] == list(range(1, n + 1))


# ------------------------------------------------------------ canonical cells
@pytest.mark.parametrize(
    "a,b",
    [
        (4, 4.0), (decimal.Decimal("4.10"), 4.1), ("4.1", 4.1), (None, "NULL"), ("None", None),
        (dt.datetime(2180, 7, 23, 14, 0), "2180-07-23T14:00:00"), (dt.datetime(2180, 7, 23, 14, 0), "2180-07-23 14:00:00"),
        (dt.date(2180, 7, 23), "2180-07-23"), (0.1 + 0.2, 0.3), (True, "true"),
    ],
)
def test_canon_cell_equates_the_same_value(a: object, b: object) -> None:
    assert canon_cell(a) == canon_cell(b)


@pytest.mark.parametrize("a,b", [(4.1, 4.2), ("a", "b"), (None, 0), (dt.date(2180, 7, 23), "2180-07-24"), (1, "1a")])
def test_canon_cell_separates_different_values(a: object, b: object) -> None:
    assert canon_cell(a) != canon_cell(b)


# ------------------------------------------------------------ fabrication rule
RES = QueryResult(columns=["itemid", "value_numeric"], rows=[(50971, 4.1), (50971, 3.9), (50912, None)])


def _sql_step(output: str | None = None, **kw: object) -> Step:
    return Step(index=1, kind="sql", code="SELECT ...", output=output, **kw)  # type: ignore[arg-type]


def test_exact_render_matches() -> None:
    ok, why = output_matches(_sql_step(render_result(RES.columns, RES.rows)), RES)
    assert ok, why


def test_render_form_is_order_free_and_checks_count_and_cells() -> None:
    reordered = "itemid | value_numeric\n50912 | NULL\n50971 | 3.9\n50971 | 4.1\n(3 rows)"
    assert output_matches(_sql_step(reordered), RES)[0]
    wrong_count = "itemid | value_numeric\n50971 | 4.1\n(1 row)"
    assert not output_matches(_sql_step(wrong_count), RES)[0]
    wrong_cell = "itemid | value_numeric\n50912 | NULL\n50971 | 3.9\n50971 | 4.7\n(3 rows)"
    assert not output_matches(_sql_step(wrong_cell), RES)[0]
    wrong_header = "item | value\n50912 | NULL\n50971 | 3.9\n50971 | 4.1\n(3 rows)"
    assert not output_matches(_sql_step(wrong_header), RES)[0]


def test_render_form_with_display_truncation() -> None:
    many = QueryResult(columns=["i"], rows=[(i,) for i in range(100)])
    shown = render_result(many.columns, many.rows, DisplayConfig(max_rows=10))
    assert "showing first 10" in shown
    assert output_matches(_sql_step(shown), many)[0]
    chars = render_result(many.columns, many.rows, DisplayConfig(max_rows=100, max_chars=100))
    assert "[truncated]" in chars
    assert output_matches(_sql_step(chars), many)[0]
    claims_fewer = render_result(many.columns, many.rows[:50], DisplayConfig(max_rows=10))
    assert not output_matches(_sql_step(claims_fewer), many)[0]


def test_cells_with_line_breaks_and_pipes() -> None:
    res = QueryResult(columns=["id", "comments"], rows=[(1, "line one\nline two"), (2, "a | b")])
    text = render_result(res.columns, list(reversed(res.rows)))
    assert output_matches(_sql_step(text), res)[0]
    assert not output_matches(_sql_step(text.replace("line two", "line 3")), res)[0]


def test_structured_rows_and_text_must_both_match() -> None:
    rows = [[50912, None], [50971, 4.1], [50971, 3.9]]
    honest = render_result(RES.columns, RES.rows)
    assert output_matches(_sql_step(honest, columns=list(RES.columns), rows=rows), RES)[0]
    edited = "itemid | value_numeric\n(0 rows)"
    assert not output_matches(_sql_step(edited, columns=list(RES.columns), rows=rows), RES)[0]


def test_structured_rows_compared_as_multisets() -> None:
    ok = _sql_step("x", columns=["itemid", "value_numeric"], rows=[[50912, None], [50971, 4.1], [50971, 3.9]])
    assert output_matches(ok, RES)[0]
    bad = _sql_step("x", columns=["itemid", "value_numeric"], rows=[[50912, None], [50971, 4.1]])
    assert not output_matches(bad, RES)[0]
    bad_cols = _sql_step("x", columns=["itemid", "v"], rows=[[50912, None], [50971, 4.1], [50971, 3.9]])
    assert not output_matches(bad_cols, RES)[0]


@pytest.mark.parametrize(
    "text,ok",
    [
        ("[(50971, 4.1), (50971, 3.9), (50912, None)]", True),
        ("| itemid | value_numeric |\n|---|---|\n| 50971 | 4.10 |\n| 50971 | 3.9 |", True),
        ('[{"itemid": 50971, "value_numeric": 4.1}]', True),
        ("[]", False),
        ("Empty DataFrame\nColumns: [itemid, value_numeric]", False),
        ("0 rows", False),
        ("[(50971, 5.6)]", False),
        ("[(50999, 4.1)]", False),
        ("   itemid  value_numeric\n0   50971            4.1\n1   50971            3.9\n2   50912            NaN", True),
        ("   itemid  value_numeric\n0   50971            4.1\n1   50971            7.7", False),
        ("Query executed in 0.023 s. Result: [(50971, 4.1), (50971, 3.9), (50912, None)]", True),
        ("3 rows in set (0.01 sec)\n50971 4.1\n50971 3.9\n50912 NULL", True),
    ],
)
def test_foreign_formats(text: str, ok: bool) -> None:
    assert output_matches(_sql_step(text), RES)[0] is ok


def test_foreign_empty_claim_on_empty_result_is_fine() -> None:
    empty = QueryResult(columns=["n"], rows=[])
    assert output_matches(_sql_step("[]"), empty)[0]
    assert not output_matches(_sql_step("[(3,)]"), empty)[0]


def test_python_and_missing_outputs_are_not_compared() -> None:
    py = Step(index=1, kind="python", code="print(1)", output="anything 123456")
    assert output_matches(py, RES)[0]
    assert output_matches(_sql_step(None), RES)[0]


@settings(max_examples=150, deadline=None)
@given(
    rows=st.lists(
        st.tuples(st.integers(-10**6, 10**6), st.one_of(st.none(), st.floats(-1e6, 1e6, allow_nan=False)), st.text(alphabet="abcXYZ -", max_size=8)),
        max_size=60,
    ),
    max_rows=st.integers(1, 80),
)
def test_an_honest_render_always_matches(rows: list[tuple], max_rows: int) -> None:
    """Whatever the rows and display limits, the environment's own rendering is never called fabricated."""
    res = QueryResult(columns=["a", "b", "c"], rows=rows)
    text = render_result(res.columns, res.rows, DisplayConfig(max_rows=max_rows))
    ok, why = output_matches(_sql_step(text), res)
    assert ok, why
    shuffled = list(reversed(rows))
    ok2, why2 = output_matches(_sql_step(render_result(res.columns, shuffled, DisplayConfig(max_rows=len(rows) or 1))), res)
    assert ok2, why2


_ROWS = st.lists(st.tuples(st.integers(0, 5), st.one_of(st.none(), st.sampled_from([0, 1.5, "x", "2150-01-01"]))), max_size=12)


@settings(max_examples=150, deadline=None)
@given(base=_ROWS, over=_ROWS, recorded=_ROWS, displays=st.lists(st.integers(1, 14), min_size=1, max_size=4),
       threshold=st.sampled_from([None, 5]))
def test_memoised_comparisons_equal_fresh_ones(base: list, over: list, recorded: list, displays: list[int], threshold: int | None) -> None:
    """Batch scoring memoises canonical rows, renders and base/overlay comparisons on the
    (shared, cached) result objects: every answer equals the one computed on fresh copies,
    whatever display limits and thresholds are asked for in turn."""
    from verifier.abstention._witness import compare

    cols = ["a", "b"]
    shared_base, shared_over = QueryResult(columns=cols, rows=base), QueryResult(columns=cols, rows=over)
    step = _sql_step(render_result(cols, recorded), columns=cols, rows=[list(r) for r in recorded])
    for max_rows in displays + displays:
        d = DisplayConfig(max_rows=max_rows)
        fresh_base, fresh_over = QueryResult(columns=cols, rows=list(base)), QueryResult(columns=cols, rows=list(over))
        assert compare(shared_base, shared_over, d, small_cell_threshold=threshold) == compare(
            fresh_base, fresh_over, d, small_cell_threshold=threshold)
        assert output_matches(step, shared_base, d) == output_matches(step, QueryResult(columns=cols, rows=list(base)), d)
