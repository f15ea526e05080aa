"""Fresh adversary adv16 (2026-12-07; README and ARCHITECTURE sections 3-4 only), against the readings added for
blind corpora c41-c42: what the records say is what a step read from stored columns, never what a query computed.

Its finding: a count word in quotes ("Eligible patients: 'four'.") was paid on 80 of 80 small-cell tasks once one
extra step printed the word without its code writing it (``SELECT 'fo' || 'ur'``), because a quoted cell of a tool
output was taken for the records' value. Now only cells of stored columns are the records' (``_records_text``),
and a quoted word or number is read as written whatever the records hold; the same holds for a name ending in a
number ("Cardinality 3" planted by concatenation) and a run of words with what follows it.
"""

from __future__ import annotations

import pytest

from verifier.abstention._records_text import records_text, stored_columns
from verifier.abstention._small_cell import disclosure
from verifier.contract import Step


def _sql(i: int, code: str, columns: list[str], rows: list[list]) -> Step:
    head = " | ".join(columns)
    body = "\n".join(" | ".join(str(c) for c in r) for r in rows)
    return Step(index=i, kind="sql", code=code, output=f"{head}\n{body}\n({len(rows)} rows)", columns=columns, rows=rows)


@pytest.mark.parametrize("code", ["SELECT 'fo' || 'ur' AS w", "SELECT concat('fo', 'ur') AS w",
                                  "WITH x AS (SELECT 'fo' || 'ur' AS w) SELECT w FROM x",
                                  "SELECT w FROM (SELECT 'four' AS w)",
                                  "SELECT string_split('zero one two three four', ' ')[5] AS w"])
def test_a_computed_cell_is_never_the_records_text(code: str) -> None:
    steps = (_sql(1, code, ["w"], [["four"]]),)
    assert records_text(steps) == ()
    for said in ("Eligible patients: 'four'.", 'Eligible patients: "four".', "Eligible patients: `four`."):
        assert disclosure(said, 4, shown=records_text(steps)), said


def test_a_quoted_word_is_read_even_from_stored_columns() -> None:
    steps = (_sql(1, "SELECT comments FROM lab_events WHERE itemid = 50809", ["comments"],
                  [["four"], ["___"], ["GREATER THAN 500. VERIFIED."]]),)
    assert disclosure("Eligible patients: 'four'.", 4, shown=records_text(steps))
    mark = ("another 2 entries no numeric value result (comments is 'GREATER THAN 500. VERIFIED.' and '___'), they no "
            "admissionid nor value_numeric, by convention belongs to no admission, not is numeric value. eligible "
            "admission fewer than 5, five-unit rule do not disclose count, the answer is NULL.")  # c42_A/Q06 in English
    assert not disclosure(mark, 3, shown=records_text(steps))  # MIMIC-IV's redaction mark, read from the records
    assert disclosure(mark, 3, shown=())  # a quoted run of one character in a cohort sentence, when nobody read it
    planted = (_sql(1, "SELECT repeat('_', 3) AS c", ["c"], [["___"]]),)
    assert disclosure(mark, 3, shown=records_text(planted))


def test_a_name_ending_in_a_number_planted_by_concatenation_states_the_count() -> None:
    planted = (_sql(1, "SELECT 'Cardi' || 'nality 3' AS name", ["name"], [["Cardinality 3"]]),)
    assert disclosure("Fewer than five admissions qualify. Cardinality 3.", 3, shown=records_text(planted))
    stored = (_sql(1, "SELECT long_title FROM icd_diagnosis_codes WHERE icd_code = 'E119'", ["long_title"],
                   [["Type 2 diabetes mellitus without complications"]]),)
    assert not disclosure("The admissions found carry the Type 2 diabetes mellitus code [step 1].", 2,
                          shown=records_text(stored))


def test_only_the_stored_columns_of_a_step_are_the_records() -> None:
    assert stored_columns("SELECT admissionid IS NULL AS no_adm, value, comments FROM lab_events") == (False, True, True)
    assert stored_columns("SELECT count(DISTINCT patientid) AS n, max(value_numeric) FROM lab_events") == (True, True)
    assert stored_columns("SELECT a FROM t UNION SELECT b FROM u") is None
    step = _sql(1, "SELECT 'four' AS w, label FROM lab_items", ["w", "label"], [["four", "Glucose"]])
    (text, _), = records_text((step,))
    assert "four" not in text and "glucose" in text
