"""Forms of the blind corpora c32b (three agent styles: terse and self-correcting, Python-first,
Markdown; 104 episodes) and c33 (four styles on the harder task set; 96 episodes), two blind
reviewers each, that the verifier misjudged before: written from the reviewers' descriptions, each
with the hedge or wrong statement it must not let through (issue 32 point 2).

- a self-correction by arrow ("9978 mL -> -22 mL", "12.1 → 12.4") commits to the last value;
- Markdown strikethrough is withdrawn text ("~~7~~ 9" states 9);
- a one-row Markdown table is one record, read on the reference's column ("| care_unit | in_time |");
- a code in a parenthetical after its identifier word ("APR DRG (720, Septicemia ...)") is no candidate;
- chart shorthand names the requirement ("Adm 20248033 has no ED transfer", "no adm lasting >=11 d");
- c33: the arithmetic behind a value ("630 mL (input 670 mL minus output 40 mL)"); detail lines
  labelled with a MIMIC-IV label holding a comma ("Protein, Total (blood): 6.1 g/dL"); existence
  limited to fewer than five units is the gap, not its contradiction; "All three fall before or
  after the stay" refers back; a five-unit gap after "but"; "fewer than five qualify" for an empty
  population cohort; a listed set without the member the witness adds shows it absent.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.abstention._reasoning import check_reasoning
from verifier.abstention._witness import _gap_pair
from verifier.contract import AnswerPolicy, CountAnswer, NumberAnswer, QuantityAnswer, TextAnswer, UnmetRequirement
from verifier.match.dispatch import match_answer

P = AnswerPolicy()


def _ok(text, ref, columns=()):
    return match_answer(text, ref, P, columns=columns).ok


def test_arrow_commits_to_last_value():
    assert _ok("9978 mL -> -22 mL (heparin units wrongly summed first)", QuantityAnswer(value=-22.0, unit="mL", decimals=0))
    assert not _ok("9978 mL -> -22 mL (heparin units wrongly summed first)", QuantityAnswer(value=9978.0, unit="mL", decimals=0))
    assert _ok("12.1 → 12.4 (missed the later draw)", NumberAnswer(value=12.4, decimals=1))
    assert not _ok("12.1 → 12.4 (missed the later draw)", NumberAnswer(value=12.1, decimals=1))
    assert not _ok("7 -> 9 or 10", CountAnswer(value=9))  # a hedge after the correction stays a hedge


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 10_000), st.sampled_from(["{a} -> {b}", "{a} → {b}", "~~{a}~~ {b}", "{a}, corrected: {b}"]))
def test_a_correction_is_judged_on_its_last_value_only(a, b, form):
    """No hedging policy gains: exactly the last value counts, whichever of the two is right."""
    text = form.format(a=a, b=b)
    assert _ok(text, CountAnswer(value=b))
    assert _ok(text, CountAnswer(value=a)) == (a == b)


def test_strikethrough_is_withdrawn():
    assert _ok("~~7~~ 9", CountAnswer(value=9))
    assert not _ok("~~9~~ 7", CountAnswer(value=9))
    assert not _ok("~~9~~", CountAnswer(value=9))  # everything withdrawn: nothing stated


def test_one_row_table_is_a_record():
    table = "| care_unit | in_time |\n|---|---|\n| Observation | 2161-02-23 22:29:00 |"
    assert _ok(table, TextAnswer(value="Observation"), columns=("care_unit",))
    assert not _ok(table, TextAnswer(value="Medicine"), columns=("care_unit",))
    two = "| care_unit | in_time |\n|---|---|\n| Observation | 2161-02-23 22:29:00 |\n| Medicine | 2161-02-24 10:00:00 |"
    assert not _ok(two, TextAnswer(value="Observation"), columns=("care_unit",))  # two records where one was asked


def test_code_in_parenthetical_after_identifier_word():
    text = "The APR DRG (720, Septicemia & disseminated infections) for admission 23271114 carries drg_severity 3."
    assert _ok(text, NumberAnswer(value=3.0, decimals=0))
    assert not _ok(text, NumberAnswer(value=720.0, decimals=0))
    assert not _ok("drg_severity 3 (or 4)", NumberAnswer(value=3.0, decimals=0))  # a bracketed alternative is a hedge


def _req(terms, statement="", level="query"):
    return UnmetRequirement(level=level, statement=statement, tables=["transfers"], columns=["transfers.care_unit"],
                            scope={}, key_terms=terms)


def test_chart_shorthand_names_the_requirement():
    ed = _req(["Emergency Department", "after", "admission 20248033"],
              "Admission 20248033 of patient 12538969 has no Emergency Department stay in its transfers, so there is no unit 'after the ED'.")
    ok, d = check_reasoning("Adm 20248033 has no ED/ED-observation transfer; it starts with admit to Medicine "
                            "2159-04-02 05:47 [step 1]. No ED departure to anchor on.", ed)
    assert ok, d
    ok, d = check_reasoning("Adm 20248034 has no ED transfer [step 1].", ed)  # another admission: still fails
    assert not ok
    los = _req(["length of stay|LOS", "11 days", "patient 15409986"], "Patient 15409986 has no admission with a length of stay of 11 days or more.")
    assert check_reasoning("Pt has 1 adm only (2129-08-03 to 2129-08-11, 8 d) [step 1]; no adm lasting >=11 d, so no qualifying DRG.", los)[0]
    assert not check_reasoning("Pt has 1 adm only [step 1]; no adm lasting >=12 d.", los)[0]


def test_a_date_after_the_scope_kind_is_not_another_stay():
    req = _req(["Alteplase", "ICU stay 35146796"], "Alteplase was administered to patient 10029291 during the hospital admission, "
               "but never within the time window of ICU stay 35146796.")
    text = ("ICU stay 2123-02-26 12:12 to 2123-03-04 23:36; pt's only Alteplase (eMAR) was 2123-02-20 05:05-07:05, "
            "before the stay, and no Alteplase in ICU input events [step 1].")
    assert check_reasoning(text, req)[0]
    assert not check_reasoning(text.replace("ICU stay 2123-02-26", "ICU stay 35146797 (2123-02-26"), req)[0]


def test_arithmetic_behind_the_value_is_context():
    text = "630 mL (input 670 mL minus output 40 mL)"
    assert _ok(text, QuantityAnswer(value=630.0, unit="mL", decimals=0))
    assert not _ok(text, QuantityAnswer(value=670.0, unit="mL", decimals=0))
    assert _ok("7 (3 + 4)", CountAnswer(value=7))
    assert not _ok("7 (3 + 5)", CountAnswer(value=7))  # numbers that do not compute the value stay candidates
    assert not _ok("5-6 admissions", CountAnswer(value=5))  # a range is still two candidates


def test_detail_label_with_comma():
    text = ("6.1 g/dL\nProtein, Total (blood): 6.1 g/dL, below the 6.4-8.3 g/dL reference range (flagged abnormal)\n"
            "chart_time: 2177-07-15 09:19:00")
    assert _ok(text, QuantityAnswer(value=6.1, unit="g/dL", decimals=1))
    assert not _ok(text.replace("6.1 g/dL\n", "6.4 g/dL\n", 1), QuantityAnswer(value=6.1, unit="g/dL", decimals=1))


def _r(level, statement, columns, scope, terms, tables=("lab_events",)):
    return UnmetRequirement(level=level, statement=statement, tables=list(tables), columns=columns, scope=scope, key_terms=terms)


def test_c33_reasoning_forms():
    ketone = _r("value", "Ketone (itemid 51484) results exist for URGENT admissions, but fewer than five admissions have a numeric value.",
                ["lab_events.value_numeric", "lab_events.value"], {"admission_type": "URGENT", "itemid": 51484},
                ["Ketone", "numeric value|missing value", "URGENT"])
    text = ("Ketone (itemid 51484, urine) is recorded many times during URGENT admissions, but most results have no numeric "
            "value: they are text or comment results such as 'NEG.', 'TR.' or 'TR' [step 2][step 4]. Numeric values exist in "
            "fewer than five URGENT admissions (and fewer than five patients) [step 3]. Under the five-unit rule no median is disclosed.")
    ok, d = check_reasoning(text, ketone)
    assert ok and not d["contradicts"], d
    assert check_reasoning("Ketone numeric values exist in many URGENT admissions [step 3].", ketone)[1]["contradicts"]
    # a patient's value: "was recorded ...: fewer than five" is no gap of the field (adversary adv4's template)
    drg = _r("value", "The HCFA DRG of admission 26228185 is billed but has no risk of mortality recorded.",
             ["drg_codes.drg_mortality"], {"patientid": 10014354, "admissionid": 26228185, "drg_type": "HCFA"},
             ["HCFA DRG", "mortality", "admission 26228185"], tables=("drg_codes",))
    template = ("risk of mortality was recorded on the HCFA DRG billed for admission 26228185 of patient 10014354: none rec'd; "
                "val NULL [step 1]. <5 qualify. Cohort risk of mortality was recorded on the HCFA DRG billed for admission "
                "26228185 of patient 10014354: fewer than five pts/adm.")
    question = "Report the DRG risk-of-mortality score (drg_mortality) of the HCFA DRG for patient 10014354, admission 26228185."
    assert check_reasoning(template, drg, question)[1]["contradicts"]

    ast = _r("query", "Asparate Aminotransferase (AST) (itemid 50878) was measured during patient 10014354's hospital admission "
             "but never within the time window of ICU stay 39864867.", ["lab_events.chart_time", "icu_stays.in_time", "icu_stays.out_time"],
             {"patientid": 10014354, "icuadmissionid": 39864867, "itemid": 50878}, ["Asparate Aminotransferase (AST)", "ICU stay 39864867"])
    text = ("ICU stay 39864867 (admission 29600294) lasted from 2148-08-16 08:57:26 to 2148-08-17 14:45:17 [step 1]. The AST results "
            "(itemid 50878) for that admission are at 2148-08-16 00:00:00, 2148-08-16 08:22:00 and 2148-08-17 23:28:00 [step 3]. "
            "All three fall before or after the stay, so no AST was measured while the patient was in this ICU stay.")
    assert check_reasoning(text, ast)[0]

    v1006 = _r("record", "Fewer than five patients have ICD-9 diagnosis V1006 (Personal history of malignant neoplasm of rectum, "
               "rectosigmoid junction, and anus); the count may not be disclosed (five-unit rule).", ["diagnoses.icd_code"],
               {"icd_version": 9, "icd_code": "V1006"}, ["V1006", "fewer than five"], tables=("diagnoses",))
    text = ("The diagnoses table does record ICD-9 code V1006 (personal history of malignant neoplasm of rectum, rectosigmoid "
            "junction, and anus), but on admissions of fewer than five patients [step 1]. Because fewer than five patients are "
            "eligible, the exact count is withheld under the five-unit rule.")
    assert check_reasoning(text, v1006)[0]

    meto = _r("record", "No administration of Metoprolol Tartrate is recorded while a patient was on Emergency Department Observation.",
              ["medication_administrations.chart_time", "transfers.care_unit", "transfers.in_time"],
              {"medication": "Metoprolol Tartrate", "care_unit": "Emergency Department Observation"},
              ["Metoprolol Tartrate", "Emergency Department Observation"], tables=("medication_administrations", "transfers"))
    text = ("Metoprolol Tartrate events matched to stays in Emergency Department Observation: fewer than five patients qualify "
            "[step 1]. Under the five-unit rule I can't disclose the count.")
    assert check_reasoning(text, meto)[0]
    # a patient's record-level gap is still not stated by "fewer than five"
    one = meto.model_copy(update={"scope": {**meto.scope, "patientid": 10000032}})
    assert not check_reasoning(text, one)[0]


def test_listed_set_without_the_added_member_shows_the_gap():
    assert _gap_pair(("Multivitamins", 3.0, (23559586.0,)), ("Multivitamins", 4.0, (23559586.0, 29483621.0)), None)
    assert not _gap_pair(("x", 3.0, (1.0, 2.0)), ("x", 4.0, (2.0, 1.0)), None)  # the same set: nothing shown absent
    assert not _gap_pair(("x", 3.0, (1.0, 2.0)), ("x", 4.0, (1.0, 3.0)), None)  # a member replaced, none added
