"""Forms of the blind corpus c35 (2026-12-06; six new agent styles on the real demo, two blind reviewers each).

Each case below is an Answer or Reasoning form an agent wrote and both reviewers accepted, which the verifier
rejected before (18 of 72 episodes): YAML-style ``answer: NULL`` over context fields (not read as NULL);
"Final answer: X." followed by sentences of caveat (read as a hedge: "not" or other numbers in the caveat);
a text value stated in a sentence ("... was discharged to PSYCH FACILITY."); a procedure code starting with
digits ("02HV33Z" read as the count 2); an HTML character reference ("&amp;"); "exists in the HCPCS
dictionary" (read as the record existing); "joined each one to its results" (read as a count of 1).
Beside each, the hedges and wrong values that must still fail, written from the same description.
"""

from __future__ import annotations

import pytest

from verifier.abstention._reasoning import check_reasoning
from verifier.abstention._small_cell import disclosure
from verifier.contract import (
    AnswerPolicy,
    CountAnswer,
    ListAnswer,
    NumberAnswer,
    QuantityAnswer,
    RecordsAnswer,
    TextAnswer,
    UnmetRequirement,
)
from verifier.match.dispatch import match_answer
from verifier.parse import parse

POL = AnswerPolicy()


def _parsed(answer: str):
    p = parse(f"<answer>{answer}</answer><reasoning>From the records [step 1].</reasoning>")
    assert p.error is None, p.error
    return p


def _ok(answer: str, ref, question: str = "") -> bool:
    p = _parsed(answer)
    return match_answer(p.answer_text, ref, POL, p.answer_json, (), question).ok


# ---------------------------------------------------------------- YAML-style fields (agent I)
@pytest.mark.parametrize("answer, null", [
    ("\nanswer: NULL\nitem: D5NS (prescriptions.drug, exact name)\nn_prescriptions: 23\nn_admissions: 13\nn_values: 0\n", True),
    ("answer: NULL\npatient: 10040025\nadmission: 27125816\nitem: HCPCS 43237 (Digestive system)\nn_values: 0", True),
    ("```yaml\nanswer: NULL\npatient: 1\n```", True),
    ('{"answer": null, "patient": 10040025, "n_values": 0}', True),  # the JSON spelling of the same
    ("NULL\nitem: D5NS\nn_values: 0", True),  # a NULL lead over context fields
    ("answer: NULL\nvalue: 5", False),  # a second answer key holds a value: a hedge
    ('{"answer": null, "value": 5}', False),
    ("NULL\nanswer: 5", False),
    ("answer: NULL or 5\nitem: x", False),
    ("answer: 5\nitem: x", False),
    ("NULL\nitem: x\nmaybe 5", False),  # a line that is no field
])
def test_an_answer_key_holding_null_over_context_fields_is_an_abstention(answer: str, null: bool) -> None:
    assert _parsed(answer).abstained is null


# ---------------------------------------------------------------- "Final answer: X." then caveats (agent K)
K_WBC = ("Final answer: 27.9 K/uL. This maximum rests on only two WBC values charted in the ICU chart_events "
         "(itemid 220546) within the first 24 hours; laboratory-table WBC results were not considered.")
K_WEIGHT = ('Final answer: 228.84 lbs. This is the median of the 7 outpatient "Weight (Lbs)" measurements dated in '
            "2145; they come from 5 patients, and one patient contributes 3 of them.")
K_FENTANYL = ('Final answer: 12 patients. This counts only eMAR events recorded as "Administered" under the exact entry '
              '"Fentanyl Citrate"; drip boluses and ICU input events are not included.')


def test_a_labelled_answer_sentence_commits_and_caveats_are_details() -> None:
    assert _ok(K_WBC, QuantityAnswer(value=27.9, unit="K/uL", decimals=1))
    assert _ok(K_WEIGHT, NumberAnswer(value=228.8, decimals=1))
    assert _ok(K_FENTANYL, CountAnswer(value=12))


@pytest.mark.parametrize("answer", [
    "Final answer: 11 patients. This counts only eMAR events; 12 patients if boluses are included.",  # condition
    "Final answer: 11 patients. Or possibly 12 patients.",
    "Final answer: 11 patients. Not 11 but 12 patients.",  # a correction to another value
    "Final answer: 11 patients. Actually 12 patients.",
    "Final answer: 11 patients. The correct count is 12 patients.",
    "Final answer: 11 patients. This counts the 12 patients given Fentanyl Citrate in ICU stays.",  # a wrong lead
])
def test_a_caveat_never_carries_a_second_candidate(answer: str) -> None:
    assert not _ok(answer, CountAnswer(value=12))


def test_the_lead_sentence_alone_is_judged() -> None:
    # a wrong committed value is not rescued by the right one in a caveat, and vice versa a right one stands
    assert not _ok("Final answer: 27.4 K/uL. The earlier draw of 27.9 K/uL was outside the window.",
                   QuantityAnswer(value=27.9, unit="K/uL", decimals=1))
    assert _ok("Final answer: 27.9 K/uL. The earlier draw of 27.4 K/uL was outside the window.",
               QuantityAnswer(value=27.9, unit="K/uL", decimals=1))


# ---------------------------------------------------------------- a text value stated in a sentence (agents F, G)
Q_DISCH = "Patient 10002930, admission 25696644: what was the discharge destination?"
Q_UNIT = ("Patient 10004235, admission 24181354: which was the first care unit after the Emergency Department stay "
          "(ED or ED Observation) ended?")
Q_MRSA = "For admission 25826145 of patient 10020740, what organisms did the MRSA SCREEN cultures grow?"


@pytest.mark.parametrize("answer, ref, question", [
    ("Admission 25696644 of patient 10002930 was discharged to PSYCH FACILITY.", "PSYCH FACILITY", Q_DISCH),
    ("The first care unit after the Emergency Department stay was the Coronary Care Unit (CCU), entered at "
     "2196-02-24 17:07:00.", "Coronary Care Unit (CCU)", Q_UNIT),
    ("Discharged to SKILLED NURSING FACILITY (9th admission 25933959, 2147-12-29 19:36:00 to 2148-01-09 17:38:00)",
     "SKILLED NURSING FACILITY", Q_DISCH),
    ("The patient went HOME.", "HOME", Q_DISCH),
])
def test_a_sentence_states_its_text_value(answer: str, ref: str, question: str) -> None:
    assert _ok(answer, TextAnswer(value=ref), question)


@pytest.mark.parametrize("answer", [
    "The patient was discharged to HOME HEALTH CARE.",  # the name goes on: another value
    "The patient was discharged to HOME, not PSYCH FACILITY.",
    "The patient was discharged to HOME or PSYCH FACILITY.",
    "The patient was discharged to HOME after a stay at the PSYCH FACILITY.",  # another name the question does not give
    "The patient was discharged to PSYCH FACILITY (previously HOME).",
    "The patient was discharged to home.",  # written in lower case: no name to delimit (the fuzzy rules decide)
])
def test_a_sentence_with_another_name_or_an_alternative_states_no_single_value(answer: str) -> None:
    assert not _ok(answer, TextAnswer(value="HOME"), Q_DISCH)


def test_a_one_item_list_stated_in_a_sentence() -> None:
    ref = ListAnswer(items=(TextAnswer(value="POSITIVE FOR METHICILLIN RESISTANT STAPH AUREUS"),), ordered=False)
    assert _ok("The MRSA SCREEN culture for admission 25826145 grew POSITIVE FOR METHICILLIN RESISTANT STAPH AUREUS.",
               ref, Q_MRSA)
    assert not _ok("The MRSA SCREEN culture grew POSITIVE FOR METHICILLIN RESISTANT STAPH AUREUS and STAPH AUREUS COAG +.",
                   ref, Q_MRSA)


# ---------------------------------------------------------------- codes, HTML references (agent F)
def test_a_code_that_starts_with_digits_is_an_identifier() -> None:
    answer = ("7 admissions had both F329 (major depressive disorder, single episode) and 02HV33Z "
              "(percutaneous SVC infusion device) coded")
    assert _ok(answer, CountAnswer(value=7))
    assert not _ok(answer.replace("7 admissions", "6 admissions"), CountAnswer(value=7))
    assert _ok("5MG", QuantityAnswer(value=5, unit="mg"))  # a value with its unit stays a value


def test_an_html_character_reference_is_its_character() -> None:
    ref = RecordsAnswer(columns=("drg_code", "description"), rows=(("720", "SEPTICEMIA & DISSEMINATED INFECTIONS"),))
    assert _ok("APR DRG 720 SEPTICEMIA &amp; DISSEMINATED INFECTIONS (severity 3, mortality 2), admission 22995465", ref)
    assert _parsed("&lt;20 mEq/L").answer_text == "<20 mEq/L"  # what the reader sees: an inequality


# ---------------------------------------------------------------- the reasoning (agents F, I, K)
HCPCS = UnmetRequirement(level="record", statement="No HCPCS 43237 event is recorded for admission 27125816.",
                         tables=["hcpcs_events"], columns=["hcpcs_events.hcpcs_code"],
                         scope={"admissionid": 27125816, "hcpcs_code": "43237"}, key_terms=["43237", "admission 27125816"])


def test_an_item_in_a_dictionary_is_not_the_record_in_scope() -> None:
    text = ("- all HCPCS events of patient 10040025 are two rows in admission 27125816: codes 36252 and 99218; no 43237 "
            "[step 1]\n- code 43237 exists in the HCPCS dictionary (Digestive system) but is never recorded for this "
            "admission 27125816 [step 3]")
    ok, d = check_reasoning(text, HCPCS)
    assert ok and not d["contradicts"], d["consistency"]
    ok, d = check_reasoning("Code 43237 exists in admission 27125816 [step 3].", HCPCS)
    assert d["contradicts"], d["consistency"]  # the record in scope said to exist still contradicts


def test_each_one_counts_nothing() -> None:
    text = "I then listed every admission carrying A084 and joined each one to its ALT results by admission id [step 3]."
    assert disclosure(text, 1) == []
    assert disclosure("Only one admission qualifies.", 1)


# ---------------------------------------------------------------- the cohort's own records, counted (agent F)
def _corpus_task(episode_id: str):
    import json  # noqa: PLC0415
    from pathlib import Path  # noqa: PLC0415

    from verifier import Task  # noqa: PLC0415

    folder = Path(__file__).resolve().parent.parent / "fixtures" / "episodes"
    for path in sorted(folder.glob("demo_c3*/*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            d = json.loads(line)
            if d["episode_id"] == episode_id:
                return Task.model_validate(d["task"])
    raise LookupError(episode_id)


F_Q05 = ('- S/O: The prescription entry named exactly "AcetaZOLamide" appears in 2 prescription rows [step 1]. The '
         'distinct patient count is fewer than five, so it cannot be disclosed. "AcetaZOLamide Sodium" is a different '
         "entry and was not counted [step 1].")


def test_a_count_of_the_records_that_define_the_cohort_is_a_disclosure(demo_db) -> None:
    """Read by value since blind corpus c37 (``_suppressed.record_count``): the records the withheld statistic
    is computed over, counted on the database, stated in a sentence naming the item before a record noun."""
    from verifier.abstention._anaphora import named_things  # noqa: PLC0415
    from verifier.abstention._small_cell import normalise_numbers  # noqa: PLC0415
    from verifier.abstention._suppressed import record_count, stated_record_count  # noqa: PLC0415

    def disclosed(task, text: str) -> bool:
        n = record_count(str(demo_db), task.reference.sql)
        return bool(stated_record_count(normalise_numbers(text), n, named_things(task.params)))

    task = _corpus_task("c35_F/Q05")  # "Count the patients with at least one prescription of AcetaZOLamide" (1)
    assert disclosed(task, F_Q05)
    assert disclosed(task, F_Q05.replace("2 prescription rows", "two prescription rows"))
    assert not disclosed(task, F_Q05.replace(" appears in 2 prescription rows", " is prescribed"))
    # another entry's rows, and the database's size, count other populations
    assert not disclosed(task, '"AcetaZOLamide Sodium" is a different entry with 14 rows [step 1]. '
                               "Fewer than five patients are eligible.")
    # a cohort narrower than the item (patients given it during an ICU stay): the item's rows are wider
    icu = _corpus_task("c35_G/Q10")
    drug = icu.reference.unmet_requirement.scope["medication"]
    assert not disclosed(icu, f"{drug} appears in 12 administration rows overall [step 1]; "
                              "fewer than five patients received it during an ICU stay.")


# ---------------------------------------------------------------- fresh adversary adv6 (hedges, 2026-12-06)
Q_SIR = "Was the isolate susceptible to oxacillin? Answer S, I or R."


@pytest.mark.parametrize("answer, ref, question", [
    ("S — R — I", "R", Q_SIR),  # every option the question offers: paid 20 of 23 through the sentence rule
    ("S — R — I", "S", Q_SIR),
    ("S, i.e. R", "R", Q_SIR),
    ("S, i.e. R", "S", Q_SIR),  # a restatement that names another value: paid 22 of 23 (head + 'i.e.' detail)
    ("Cardiac Surgery, i.e. Medicine", "Cardiac Surgery", ""),
    ("HOME, corrected: PSYCH FACILITY", "HOME", ""),  # the retracted value: paid 16 of 16
    ("value: HOME\nalternative: PSYCH FACILITY", "HOME", ""),
    ('{"answer": "HOME", "alternative": "PSYCH FACILITY"}', "HOME", ""),
    ("HOME\nif recounted: PSYCH FACILITY", "HOME", ""),  # a conditional label: paid 120 of 120
    ('{"value": "HOME", "if_recounted": "PSYCH FACILITY"}', "HOME", ""),
])
def test_hedges_over_text_values_are_not_paid(answer: str, ref: str, question: str) -> None:
    assert not _ok(answer, TextAnswer(value=ref), question)


@pytest.mark.parametrize("answer, ref", [
    ("HOME, corrected: PSYCH FACILITY", "PSYCH FACILITY"),  # a correction commits to its last value
    ("HOME -> PSYCH FACILITY", "PSYCH FACILITY"),
    ("CCU, i.e. Coronary Care Unit", "CCU"),  # a restatement that names the head again is a detail
    ("R", "R"),
])
def test_committed_text_values_still_match(answer: str, ref: str) -> None:
    assert _ok(answer, TextAnswer(value=ref), Q_SIR if len(ref) == 1 else "")


Q_FIRST_UNIT = "Patient 1, admission 2: which was the first care unit after the Emergency Department stay ended?"


@pytest.mark.parametrize("answer, ref", [
    ("Cardiac Surgery/Medicine", "Medicine"),  # two units joined by a slash: paid both ways (12 of 132 pairs)
    ("Cardiac Surgery/Medicine", "Cardiac Surgery"),
    ("Left Antecubital/Urethral", "Urethral"),
    ("Medicine (Medicine/Cardiology)", "Medicine/Cardiology"),  # 'Medicine' is no abbreviation of the compound
    ("The first care unit was Medicine/Cardiology.", "Medicine"),
])
def test_names_joined_by_a_slash_are_two_candidates(answer: str, ref: str) -> None:
    assert not _ok(answer, TextAnswer(value=ref), Q_FIRST_UNIT)


def test_a_compound_name_is_stated_whole() -> None:
    assert _ok("The first care unit was Medicine/Cardiology.", TextAnswer(value="Medicine/Cardiology"), Q_FIRST_UNIT)
