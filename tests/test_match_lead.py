"""A scalar Answer written as a value with details commits to one place (issue 32; blind corpus c32).

From the blind study of 2026-12-04 (135 episodes, three new agent styles; two reviewers accepted every
one of these): a JSON object with the value under an answer key and context beside it
(``{"value": 5.35, "unit": "hours", "admissions": 5}``) and a lead line followed by ``field: value``
detail lines (``8 distinct patients ...`` / ``patients: 8`` / ``admissions: 9``) were rejected as
"ambiguous answer: N different numbers"; ``{"answer": null}`` was not read as an abstention. The rule
(``verifier.match.lead``): exactly one place commits (the answer key or the reference's column key;
for a text value the line labelled with the reference's column; else the lead line), so a second value
in the details is never a candidate and never rescues a wrong committed value.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.contract import AnswerPolicy, CountAnswer, NumberAnswer, QuantityAnswer, RecordsAnswer, TextAnswer
from verifier.match.dispatch import match_answer
from verifier.match.lead import reference_columns
from verifier.parse import parse

POL = AnswerPolicy()
HOURS = QuantityAnswer(value=5.35, unit="h", decimals=2)
COUNT = CountAnswer(value=8)
MORTALITY = NumberAnswer(value=3.0, decimals=0)
LOCATION = TextAnswer(value="Right Metacarpal")


def _match(answer: str, ref, columns: tuple[str, ...] = ()):
    p = parse(f"<answer>{answer}</answer><reasoning>From the records [step 1].</reasoning>")
    assert p.error is None, p.error
    return match_answer(p.answer_text, ref, POL, p.answer_json, columns)


def test_json_answer_key_commits_and_context_keys_are_details() -> None:
    assert _match('{"value": 5.35, "unit": "hours", "admissions": 5}', HOURS).ok
    assert _match('{"value": 5576.31, "unit": "mL", "input_mL": 6691.31, "output_mL": 1115.0}',
                  QuantityAnswer(value=5576.0, unit="mL", decimals=0), ("balance", "unit")).ok


def test_json_wrong_answer_key_is_not_rescued_by_a_detail() -> None:
    assert not _match('{"value": 4.22, "unit": "hours", "median_hours": 5.35}', HOURS).ok


def test_json_key_naming_the_reference_column_commits() -> None:
    answer = '{"drg_mortality": 3, "scale": "APR-DRG risk of mortality 1-4 (3 = major)", "drg_code": "720"}'
    assert _match(answer, MORTALITY, ("mortality",)).ok
    assert not _match(answer.replace('"drg_mortality": 3', '"drg_mortality": 2'), MORTALITY, ("mortality",)).ok
    exact = '{"location": "Right Metacarpal", "location_category": "Peripheral"}'
    assert _match(exact, LOCATION, ("location",)).ok  # the exact key wins over a longer one


def test_lead_line_commits_and_field_lines_are_details() -> None:
    assert _match("8 distinct patients\npatients: 8\nadmissions: 9 (one patient coded in two admissions)", COUNT).ok
    assert _match("APR-DRG risk of mortality: 3 (major)\ndrg_type: APR\ndrg_code: 720\ndrg_severity: 4", MORTALITY).ok


def test_right_value_only_in_a_detail_line_never_rescues_a_wrong_lead() -> None:
    assert not _match("9 distinct patients\npatients: 8\nadmissions: 9", COUNT).ok


def test_a_hedge_label_keeps_the_whole_answer_judged() -> None:
    res = _match("8 patients\nalternatively: 9", COUNT)
    assert not res.ok


def test_text_value_commits_to_the_line_of_its_column() -> None:
    answer = "18-gauge peripheral IV in the right metacarpal (dorsum of the right hand)\nlocation: {}\nlocation_category: Peripheral"
    assert _match(answer.format("Right Metacarpal"), LOCATION, ("location",)).ok
    assert not _match(answer.format("Left Metacarpal"), LOCATION, ("location",)).ok


def test_json_object_of_nulls_is_an_abstention() -> None:
    assert parse('<answer>{"answer": null}</answer><reasoning>No record [step 1].</reasoning>').abstained
    assert not parse('<answer>{"answer": null, "value": 3}</answer><reasoning>r</reasoning>').abstained
    assert not parse('<answer>{"answer": 3}</answer><reasoning>r</reasoning>').abstained


def test_reference_columns_are_the_query_output_names() -> None:
    assert reference_columns("SELECT max(drg_mortality) AS mortality FROM drg_codes") == ("mortality",)
    assert reference_columns("not sql at all ((") == ()


@settings(max_examples=200, deadline=None)
@given(right=st.integers(0, 10_000), wrong=st.integers(0, 10_000), form=st.sampled_from(["json", "lines"]))
def test_no_hedge_gains_from_details(right: int, wrong: int, form: str) -> None:
    """Two values, one committed and one in the details: the Answer passes exactly when the committed
    one is right, whichever is the reference (a hedging policy gains nothing)."""
    ref = CountAnswer(value=right)
    for committed, detail in ((right, wrong), (wrong, right)):
        if form == "json":
            answer = f'{{"value": {committed}, "other": {detail}}}'
        else:
            answer = f"{committed} admissions\nother admissions: {detail}"
        assert _match(answer, ref).ok == (committed == right)


# --- an ICD code with its version and a restatement in another unit are no second candidate (c32) ---

def test_an_icd_code_with_its_version_is_context() -> None:
    ref = CountAnswer(value=6)
    assert _match("6 distinct patients underwent percutaneous abdominal drainage (ICD-9 54.91)", ref).ok
    assert _match("6 patients had ICD-10 code 5491", ref).ok
    assert not _match("6 or 7 patients (ICD-9 54.91)", ref).ok
    assert not _match("5491 (ICD-10)", CountAnswer(value=5)).ok


def test_a_restatement_in_another_unit_is_the_same_value() -> None:
    ref = QuantityAnswer(value=1523.0, unit="mL", decimals=0)
    assert _match("Net positive fluid balance of about +1522.8 mL (≈ +1.5 L) in the first 24 h", ref).ok
    assert not _match("1522.8 mL (1.6 L)", ref).ok  # not the same value: a second candidate
    assert not _match("1400 mL (≈ 1.5 L)", ref).ok  # the committed value is wrong
    assert not _match("1523 mL or 1.5 L", ref).ok  # a hedge word still hedges


@settings(max_examples=200, deadline=None)
@given(right=st.integers(100, 9_000), wrong=st.integers(100, 9_000))
def test_no_hedge_gains_from_a_restatement(right: int, wrong: int) -> None:
    """A second value in litres passes only when it is the first value again; whichever of two differing
    values is the reference, the pair never passes both ways."""
    ref = QuantityAnswer(value=float(right), unit="mL", decimals=0)
    for first, second in ((right, wrong), (wrong, right)):
        ok = _match(f"{first} mL (≈ {second / 1000:.3f} L)", ref).ok
        assert ok == (first == right and abs(first - second) <= 0.5)


def test_hyphenated_time_phrases_and_approximate_reference_ranges_are_context() -> None:
    """c32: "(i.e. a QID / every-6-hours schedule)" and "(reference roughly 11-13.5 sec)" held no candidate."""
    assert _match("Median 4 doses per 24 hours (i.e. a QID / every-6-hours schedule)", NumberAnswer(value=4.0, decimals=1)).ok
    assert _match("13.2 sec (typical adult reference roughly 11-13.5 sec)", QuantityAnswer(value=13.2, unit="sec", decimals=1)).ok
    assert not _match("13.2 sec or 12.9 sec (reference roughly 11-13.5 sec)", QuantityAnswer(value=13.2, unit="sec", decimals=1)).ok


# --- blind corpus c34 (2026-12-05; five new agent styles on the real demo, two blind reviewers each):
# agent C wrote its Answer as a lead value over a vertical two-column Markdown table of fields. Each was
# rejected (ambiguous: N numbers) before the table was read as detail lines; both reviewers accepted all.
C34_C_Q05 = """12 patients

| field | value |
|---|---|
| admission_type | EW EMER. |
| medication | Ondansetron (exact eMAR entry) |
| event_text | Administered |
| distinct patients | 12 |
| distinct admissions | 13 |
| administration events | 19 |"""

C34_C_Q09 = """8 admissions

| field | value |
|---|---|
| DIRECT EMER. admissions | 15 |
| with any later admission of the same patient | 11 |
| next admission ≤180 days after discharge | 8 (from 6 patients) |
| gap 0–30 days | 5 |
| gap 31–180 days | 3 |
| no later admission | 4 |"""

C34_C_Q07 = """121.12 mmHg (mean of all charted values)

| field | value |
|---|---|
| cohort | ICU stays with first_care_unit = Trauma SICU (TSICU) |
| item | 220050 Arterial Blood Pressure systolic |
| ICU stays with the item charted | 9 (8 patients) |
| charted numeric values | 1092 |
| mean | 121.12 mmHg |
| range | 62.0 to 207.0 mmHg |"""


def test_lead_over_a_vertical_field_table_commits_to_the_lead() -> None:
    assert _match(C34_C_Q05, CountAnswer(value=12)).ok
    assert _match(C34_C_Q09, COUNT).ok  # '≤180 days' in a label qualifies what the detail counts
    assert _match(C34_C_Q07, QuantityAnswer(value=121.12, unit="mmHg", decimals=2)).ok


def test_vertical_field_table_never_rescues_a_wrong_lead_or_adds_a_candidate() -> None:
    assert not _match(C34_C_Q05.replace("12 patients", "13 patients"), CountAnswer(value=12)).ok
    # the right value only in a row under a wrong lead: the lead commits
    assert not _match(C34_C_Q09.replace("8 admissions", "11 admissions"), COUNT).ok
    # a row labelled as an alternative is a second candidate, not a detail
    alt = C34_C_Q05.replace("| distinct admissions | 13 |", "| or possibly | 13 |")
    assert not _match(alt, CountAnswer(value=12)).ok


def test_a_unit_parenthetical_is_the_same_quantity_not_a_second_value() -> None:
    wbc = QuantityAnswer(value=3.2, unit="K/uL", decimals=2)
    # c34 agent B (rejected before: two numbers, 3.2 and 10^9)
    assert _match("WBC 3.2 K/uL (x10^9/L), drawn 2136-11-05 05:40:00 (flagged abnormal)", wbc).ok
    assert _match("3.2 K/uL (×10^9/L)", wbc).ok
    assert not _match("3.4 K/uL (x10^9/L)", wbc).ok
    assert not _match("3.2 K/uL (3.4 x10^9/L)", wbc).ok  # a second value in the parenthesis stays one


DRG = RecordsAnswer(columns=("drg_code", "description"), rows=(("193", "SIMPLE PNEUMONIA & PLEURISY W MCC"),))
C34_C_Q01 = """HCFA DRG code 193

| field | value |
|---|---|
| patientid | 10020640 |
| admissionid | 27984218 |
| length of stay | 7.56 days |
| drg_type | HCFA |
| drg_code | 193 |
| description | SIMPLE PNEUMONIA & PLEURISY W MCC |"""


def test_one_record_written_vertically_is_that_record() -> None:
    # c34 agent C: the record as '| field | value |' rows (rejected before: no 'drg_code' column)
    assert _match(C34_C_Q01, DRG).ok
    assert not _match(C34_C_Q01.replace("| drg_code | 193 |", "| drg_code | 194 |"), DRG).ok
    assert not _match(C34_C_Q01.replace("| description | SIMPLE", "| description | COMPLEX"), DRG).ok
    two = RecordsAnswer(columns=DRG.columns, rows=DRG.rows + (("194", "SIMPLE PNEUMONIA & PLEURISY W CC"),))
    assert not _match(C34_C_Q01, two).ok  # one vertical record never stands for two
