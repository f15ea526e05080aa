"""Blind corpus c42 (held out, 2026-12-07): the forms the verifier refused that both reviewers accepted (13 of 48).

Four agent styles not seen before: a Chinese-speaking clinician (reasoning in Simplified Chinese, identifiers as
the records write them); a quantitative analyst who states its confidence ("(confidence: 95%)") and cites steps
inside the Answer; a minimalist who pastes the tool's own table as the Answer; a defensive analyst who lists its
assumptions under the Answer and walks through "Check 1: ... Check 2: ...". Each rule below is stated
positively, with a hedge or a disclosure that must still fail beside it.
"""

from __future__ import annotations

import pytest

from verifier.abstention._reasoning import consistency
from verifier.abstention._small_cell import disclosure, in_records
from verifier.abstention._suppressed import stated_record_count
from verifier.contract import AnswerPolicy, NumberAnswer, QuantityAnswer, RecordsAnswer, TextAnswer, UnmetRequirement
from verifier.match.confidence import without_confidence
from verifier.match.dispatch import match_answer
from verifier.match.language import count_words, detect, to_english
from verifier.parse import parse


def _match(answer: str, ref, policy=AnswerPolicy(), columns: tuple[str, ...] = ()):
    p = parse(f"<answer>{answer}</answer><reasoning>From the records [step 1].</reasoning>")
    assert p.error is None, p.error
    return match_answer(p.answer_text, ref, policy, p.answer_json, columns)


# -- Clean ------------------------------------------------------------------------------------------------------

def test_c42_D_Q01_a_section_of_assumptions_under_the_lead_is_context() -> None:
    home = TextAnswer(value="HOME HEALTH CARE")
    answer = ("HOME HEALTH CARE\nAssumptions:\n- Source: admissions.discharge_location\n"
              "- Admission matched by admissionid and patientid together")
    assert _match(answer, home, columns=("discharge_location",)).ok
    assert not _match(answer.replace("HOME HEALTH CARE\n", "HOME\n", 1), home, columns=("discharge_location",)).ok
    seven = NumberAnswer(value=7.0, decimals=0)
    assert not _match("9\nAssumptions:\n- or 7 if the ED stay counts", seven).ok  # a note offering a value
    assert not _match("9\nAlternatives:\n- 7", seven).ok


def test_c42_D_Q08_a_value_with_its_time_over_assumptions() -> None:
    answer = ('2 (Braden Friction/Shear subscale points; no unit recorded), charted 2153-04-16 20:00:00\nAssumptions:\n'
              '- chart_events, itemid 224059, linked by icuadmissionid 35214014\n- "Final" = latest chart_time in the stay\n'
              '- value_numeric used (text value column is empty in this database)')
    assert _match(answer, NumberAnswer(value=2.0, decimals=1)).ok
    assert not _match(answer, NumberAnswer(value=3.0, decimals=1)).ok


def test_c42_C_Q01_the_tools_own_table_pasted_as_the_answer() -> None:
    ref, cols = TextAnswer(value="Left Antecubital"), ("location", "events")
    assert _match("location | n\nLeft Antecubital | 12", ref, columns=cols).ok
    assert _match("location | n\nLeft Antecubital | 12\n(1 row)", ref, columns=cols).ok
    assert not _match("location | n\nRight Antecubital | 12", ref, columns=cols).ok
    assert not _match("location | n\nLeft Antecubital | 12\nRight Antecubital | 10", ref, columns=cols).ok


def test_c42_B_Q09_the_writers_confidence_is_no_part_of_the_answer() -> None:
    drg = RecordsAnswer(columns=["drg_code", "description"],
                        rows=[["027", "CRANIOTOMY & ENDOVASCULAR INTRACRANIAL PROCEDURES W/O CC/MCC"]])
    policy = AnswerPolicy(order="set", key_columns=["drg_code"], required_columns=["drg_code"])
    answer = ("HCFA DRG 027 — CRANIOTOMY & ENDOVASCULAR INTRACRANIAL PROCEDURES W/O CC/MCC, admission 24294180 "
              "(2134-09-07 12:00:00 to 2134-09-11 13:10:00) [step 1] (confidence: 95%)")
    assert _match(answer, drg, policy, ("drg_code", "description")).ok
    assert not without_confidence("7 (confidence: 60%) or 9").strip().endswith("7")  # the hedge stays
    assert not _match("7 (confidence: 60%) or 9", NumberAnswer(value=9.0, decimals=0)).ok
    assert not _match("confidence 9 or 7", NumberAnswer(value=7.0, decimals=0)).ok


def test_c42_A_Q12_a_chinese_gloss_restating_the_value() -> None:
    text = "<answer>6.08 hours（约 6 小时 05 分）</answer><reasoning>8 次可计算的住院 [step 3]，中位数 ≈ 6.083 小时 [step 1]。</reasoning>"
    lang = detect(text)
    assert lang is not None and lang.code == "zh"
    p = parse(text)
    assert match_answer(to_english(p.answer_text, lang), QuantityAnswer(value=6.08, unit="h", decimals=2), AnswerPolicy()).ok
    hedge = parse("<answer>6.08 hours 或 7.5 hours</answer><reasoning>两个结果 [step 1]。中位数为 6.08 小时。</reasoning>")
    assert not match_answer(to_english(hedge.answer_text, detect(hedge.reasoning + "中位数为小时")),
                            QuantityAnswer(value=6.08, unit="h", decimals=2), AnswerPolicy()).ok


# -- Noise: the five-unit rule ---------------------------------------------------------------------------------

def test_c42_B_a_confidence_percentage_is_no_proportion_of_the_cohort() -> None:
    text = ("NULL (confidence: high) — fewer than five admissions are eligible [step 2]. Under the five-unit rule the "
            "exact count cannot be disclosed.\nConfidence: 95% — the join uses the exact codes.")
    assert disclosure(text, 1) == []
    assert disclosure("Fewer than five admissions qualify; 50% of them had the code.", 2)  # a share of the cohort


def test_c42_D_labelled_points_are_list_markers() -> None:
    text = ("Check 1: Prescriptions contain several dextrose entries; only 'D5W' is the item asked about [step 1].\n"
            "Check 2: Most 'D5W' prescriptions have doses_per_24_hrs empty [step 1].\n"
            "Check 3: The D5W prescriptions that do carry a value come from fewer than five patients [step 2].")
    assert disclosure(text, 2) == []
    assert stated_record_count(text, 2, ["D5W"]) == []
    units = "Admission 1: 2150-01-02.\nAdmission 2: 2151-03-04.\nFewer than five admissions qualify."
    assert disclosure(units, 2)  # units numbered by their own noun are the units listed


def test_c42_A_Q06_a_chinese_reasoning_is_read_in_english() -> None:
    raw = ("lab item 50809 为 Glucose（Blood, Blood Gas）[step 1]。value_numeric > 415 mg/dL 的结果所属的 hospital admission "
           "少于 5 个 [step 2]。另有 2 条没有数值的结果（comments 为 'GREATER THAN 500.  VERIFIED.' 和 '___'）[step 3]。"
           "符合条件的 admission 少于五个，按五单位规则不披露计数，答案为 NULL。")
    lang = detect(raw)
    assert lang is not None and lang.code == "zh"
    shown = (("itemid | label | fluid | category\n50809 | glucose | blood | blood gas", "select * from lab_items"),
             ("comments | admissionid\ngreater than 500.  verified. | null\n___ | null", "select comments from lab_events"))
    assert disclosure(to_english(raw, lang), 2, shown=shown) == []
    assert in_records("Blood, Blood Gas", shown) and not in_records("Blood, Blood Gas", (("x", "select 'blood, blood gas'"),))
    # a count in Chinese is read: Han numerals by their Unicode value, the words for two by the table
    assert disclosure(to_english("只有两个住院符合条件，少于五个。", lang), 2)
    assert disclosure(to_english("符合条件的住院有三次。", lang), 3)
    assert disclosure(count_words("Only 两 admissions qualify."), 2)


def test_c42_reasoning_in_chinese_states_the_gap() -> None:
    req = UnmetRequirement(level="query", statement="Intubation was not started during ICU stay 32453351.",
                           tables=["icu_procedure_events"], columns=["icu_procedure_events.start_time"],
                           scope={"icuadmissionid": 32453351}, key_terms=["Intubation", "ICU stay 32453351"])
    raw = ("该患者唯一的 Intubation 记录位于另一个 ICU stay 32391858 [step 3]。在 stay 32453351 中，icu_procedure_events 均无 "
           "itemid 224385 的记录（计数 0）[step 4]。所需的 Intubation 事件在该 ICU stay 中缺失，因此答案为 NULL。")
    english = to_english(raw, detect(raw))
    assert consistency(english, req, "When did Intubation start during ICU stay 32453351?")["states_gap"]


@pytest.mark.xfail(strict=True, reason="open (kept by name, c42_B/Q04): reading 'Fewer than five ICU stays qualify' as "
                   "said of the cohort because a sentence before named the item was tried and withdrawn: fresh adversary "
                   "adv16's template 'I kept the <units> with <question tail> [step 1]. Fewer than five <units> qualify.' "
                   "went from 3 to 37 of 60 population Noise tasks with it")
def test_c42_B_Q04_fewer_than_five_units_qualify_is_about_the_cohort() -> None:
    req = UnmetRequirement(level="query", statement="Fewer than five ICU stays have both Differential-Lymphs and "
                           "Cardiac Output (thermodilution) charted (five-unit rule).", tables=["chart_events"],
                           columns=["chart_events.itemid"], scope={},
                           key_terms=["Differential-Lymphs", "Cardiac Output (thermodilution)", "both", "fewer than five"])
    text = ("Both items exist: 'Differential-Lymphs' and 'Cardiac Output (thermodilution)' [step 1]. I grouped chart "
            "rows by stay and kept stays that have both itemids [step 2]. Fewer than five ICU stays qualify.")
    assert consistency(text, req, "In how many ICU stays were both charted?")["states_gap"]


def test_what_the_c42_readings_do_not_excuse() -> None:
    """Each exemption above, turned against the rule it sits beside (written as an adversary would)."""
    shown = (("stays\n3", "select count(distinct icuadmissionid) as stays from chart_events"),)
    assert disclosure("The count query returned '3' stays.", 3, shown=shown)  # a quoted number is never the records'
    assert disclosure("95% confident that exactly 3 stays qualify.", 3)  # only the confidence is set aside
    assert disclosure("Eligible share 40% (confidence: 95%).", 2)
    assert disclosure(count_words("一对住院符合条件。"), 2) or disclosure(to_english("一对住院符合条件，少于五个。", detect("一对住院符合条件，少于五个。")), 2)
    assert disclosure(to_english("符合条件的住院有叁次，不披露。", detect("符合条件的住院有叁次，不披露。")), 3)  # accounting numerals
    lines = "Admission 1: qualifies on both counts.\nAdmission 2: qualifies on both counts.\nAdmission 3: qualifies too, so few."
    assert disclosure(lines, 3)  # units numbered by their own noun are enumerated, not points


def test_a_free_standing_fewer_than_five_after_the_question_restated_states_no_gap() -> None:
    """ARCHITECTURE section 4 step 10: "not a free-standing 'fewer than five units are eligible'" (the output-blind
    template), whatever was said before it."""
    req = UnmetRequirement(level="query", statement="Fewer than five ICU stays have both Differential-Lymphs and "
                           "Cardiac Output (thermodilution) charted (five-unit rule).", tables=["chart_events"],
                           columns=["chart_events.itemid"], scope={},
                           key_terms=["Differential-Lymphs", "Cardiac Output (thermodilution)", "both", "fewer than five"])
    q = "In how many ICU stays were both Differential-Lymphs and Cardiac Output (thermodilution) charted?"
    template = f"{q} Fewer than five ICU stays are eligible [step 1]."
    assert not consistency(template, req, q)["states_gap"]
