"""Forms of the blind corpus c36 (2026-12-06; six new agent styles on the real demo, two blind reviewers each).

Each case is an Answer form an agent wrote and both reviewers accepted, which the verifier rejected before:
a chatty assistant's prose Answer whose value is the one **bold** span ("... so the answer is **NULL**.",
"... is **76.25 %**.", "... was **0.4 %** (charted ..., within the 0.0-1.0 % reference range)"); a rejected
value beside the committed one ("12 ICU stays (not 11, the count if ...)", "2136-11-05 13:44:00 (not 02:48,
which was a 'Not Given' event)"); a fenced ``{"answer": null}`` over a ``NULL`` line. Beside each, the
hedges that must still fail, written from the same description.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier import Task, Trajectory, verify
from verifier.contract import AnswerPolicy, CountAnswer, DatetimeAnswer, QuantityAnswer, TextAnswer
from verifier.match.emphasis import emphasised, emphasised_value, without_rejected
from verifier.parse import is_null_answer, parse

NEUTS = QuantityAnswer(value=76.25, unit="%", decimals=2)


def _clean_task(answer, question: str = "What is it?") -> Task:
    return Task(task_id="t-clean", pair_id="t", question=question, condition="clean", scope="patient",
                intent="laboratory_microbiology", program="p",
                reference={"sql": "SELECT 1 AS value", "answer": answer.model_dump(),
                           "answer_policy": AnswerPolicy(decimals=getattr(answer, "decimals", None)).model_dump()})


def _ok(answer_text: str, ref) -> bool:
    traj = Trajectory(trajectory_id="x", task_id="t-clean", steps=[],
                      final_response=f"<answer>{answer_text}</answer><reasoning>As shown [step 1].</reasoning>")
    return verify(traj, _clean_task(ref)).success


# ---------------------------------------------------------------- emphasis marks the value (agent L)
@pytest.mark.parametrize("answer, ok", [
    ("Across ICU stays that started in the Coronary Care Unit (CCU), the mean charted Differential-Neuts "
     "(itemid 225643) is **76.25 %**.", True),
    ("On patient 10039997's second hospitalization (admission 21390688), the earliest result was **76.25 %** "
     "(charted 2135-11-06 23:18:00, within the 0.0-1.0 % reference range).", True),
    ("The mean is **76.25 %** or 80.1 %.", False),  # an alternative outside the span
    ("The mean is **76.25 %**, maybe 80.1 %.", False),
    ("The mean is either **76.25 %** or **80.1 %**.", False),  # two spans
    ("Is the mean **76.25 %**?", False),
    ("The mean is **80.1 %** (76.25 % without the ED values).", False),  # the span is what is compared
    # fresh adversary adv8: the span is the one reading, never a second one beside the ordinary reading
    ("Final answer: 76.25 %. Sensitivity analysis gives **80.1 %**.", True),  # two sentences: read as before
    ("Final answer: 80.1 %. Sensitivity analysis gives **76.25 %**.", False),
    ("Answer: 80.1 %\nCheck: **76.25 %**", False),
    ("The mean is **76.25 %**; 80.1 % if the ED values count.", False),  # a condition on a second value
])
def test_the_one_emphasised_span_is_the_value(answer: str, ok: bool) -> None:
    assert _ok(answer, NEUTS) is ok, answer


@pytest.mark.parametrize("answer, null", [
    ("The median doses per 24 hours cannot be determined, so the answer is **NULL**.", True),
    ("The body location of that first 20 Gauge line was not recorded, so the answer is **NULL**.", True),
    ("Fewer than five admissions qualify, so under the five-unit rule the count can't be disclosed: the answer is **NULL**.", True),
    ("The answer is **NULL**, or perhaps 5 mmol/L.", False),
    ("The answer is **NULL** or **5 mmol/L**.", False),
    ("It is probably **NULL**.", False),
    ("Final answer: 5 mmol/L. Sensitivity analysis gives **NULL**.", False),  # two sentences (adv8 B1)
    ("No value is recorded, so the answer is **NULL**. The closest recorded value is 4.2.", False),  # adv8 C4
    ("The answer is 4.2, so the answer is **NULL**.", False),  # a value beside the NULL span
])
def test_an_emphasised_null_in_a_sentence_is_an_abstention(answer: str, null: bool) -> None:
    part = emphasised(answer, "What body location was documented for the first 20 Gauge line?")
    assert (part is not None and is_null_answer(part)) is null, answer


def _noise_task() -> Task:
    return Task(task_id="t-noise", pair_id="t", question="What is it?", condition="noise", scope="patient",
                intent="laboratory_microbiology", program="p", noise_type="record",
                reference={"sql": "SELECT 1", "answer": None, "unmet_requirement": {
                    "level": "record", "statement": "No potassium for admission 1.", "tables": ["lab_events"],
                    "columns": ["lab_events.itemid"], "scope": {"admissionid": 1}, "key_terms": ["potassium"]}})


@pytest.mark.parametrize("answer", [
    "Final answer: 4.2 mmol/L. Sensitivity analysis gives **NULL**.",  # adv8 B1: paid on both twins before
    "NULL\n\nWith the looser reading: **4.2 mmol/L**",  # adv8 C2: an emphasised value beside the NULL
    "Answer: NULL\nCheck: **4.2 mmol/L**",
    "NULL (4.2 mmol/L)", "NULL (o 4.2)", "NULL (sonst 4.2)",  # a bare value offered beside the NULL
])
def test_a_value_beside_the_null_is_no_committed_null(answer: str) -> None:
    p = parse(f"<answer>{answer}</answer><reasoning>No potassium [step 1].</reasoning>")
    traj = Trajectory(trajectory_id="x", task_id="t-noise", steps=[], final_response=f"<answer>{answer}</answer>"
                      "<reasoning>No potassium [step 1].</reasoning>")
    from verifier import VerifyConfig  # noqa: PLC0415
    v = verify(traj, _noise_task(), VerifyConfig(check_reasoning=False))
    assert not v.abstained, (answer, p.abstained, v.reasons)


def test_a_label_in_bold_is_not_a_value_when_the_answer_has_two_spans() -> None:
    assert emphasised("**Location:** **Left Radial**") is None
    assert emphasised("**76.25 %**") is None  # nothing around it: the parser already unwrapped such Answers
    assert emphasised_value("NULL (see **step 2**)") == "step 2"
    assert emphasised_value("**NULL**: no value") is None


# ---------------------------------------------------------------- a rejected value (agent Q)
@pytest.mark.parametrize("answer, ref, ok", [
    ("12 ICU stays (not 11, the count if the stay whose values have no unit is left out)", CountAnswer(value=12), True),
    ("77.45 % (mean of all 19 Neutrophils results; not 78.23 %, which would be the mean of per-admission means)",
     QuantityAnswer(value=77.45, unit="%", decimals=2), True),
    ("2136-11-05 13:44:00 (not 02:48, which was a 'Not Given' event)",
     DatetimeAnswer(value="2136-11-05T13:44:00", precision="minute"), True),
    ("11 ICU stays (not 12)", CountAnswer(value=12), False),  # the rejected value is never the answer
    ("11 or 12 ICU stays (not 13)", CountAnswer(value=12), False),  # a hedge stays a hedge
    ("not 11 but maybe 12", CountAnswer(value=12), False),
    ("12 ICU stays, not 11 or 13", CountAnswer(value=12), True),  # both rejected
])
def test_a_value_rejected_with_not_is_set_aside(answer: str, ref, ok: bool) -> None:
    assert _ok(answer, ref) is ok, answer


def test_nothing_but_rejections_is_no_value() -> None:
    assert without_rejected("not 11") is None
    assert without_rejected("Left Radial (not recorded elsewhere)") is None  # "not" before a word rejects no value


@settings(max_examples=200, deadline=None)
@given(right=st.integers(0, 500), wrong=st.integers(0, 500))
def test_rejecting_a_value_never_pays_it(right: int, wrong: int) -> None:
    """Whatever is rejected, the committed value alone decides: "R (not W)" is scored as "R"."""
    ref = CountAnswer(value=wrong)
    assert _ok(f"{right} admissions (not {wrong})", ref) is (right == wrong) or right == wrong


# ---------------------------------------------------------------- a fenced NULL over a NULL line (agent P)
@pytest.mark.parametrize("answer, null", [
    ('\n```json\n{"answer": null}\n```\nNULL\n', True),
    ('```json\n{"answer": null}\n```\n5', False),
    ('```json\n{"answer": 5}\n```\nNULL', False),
    ('```json\n{"answer": null}\n```\n```json\n{"answer": 3}\n```', False),
])
def test_a_fenced_null_over_a_null_line_is_an_abstention(answer: str, null: bool) -> None:
    p = parse(f"<answer>{answer}</answer><reasoning>r</reasoning>")
    assert p.abstained is null, answer


def test_text_answers_keep_their_rules() -> None:
    assert _ok("The discharge location was **HOME HEALTH CARE** (the tenth admission).", TextAnswer(value="HOME HEALTH CARE"))
    assert not _ok("The discharge location was **HOME** or HOME HEALTH CARE.", TextAnswer(value="HOME HEALTH CARE"))


# ---------------------------------------------------------------- a Spanish-speaking clinician (agent N)
from verifier.abstention._reasoning import consistency  # noqa: E402
from verifier.abstention._small_cell import disclosure  # noqa: E402
from verifier.contract import NumberAnswer, UnmetRequirement  # noqa: E402
from verifier.match.language import detect, to_english  # noqa: E402

READMIT = UnmetRequirement(
    level="query", statement="Fewer than five DIRECT EMER. admissions are followed by a readmission within 3 days (five-unit rule).",
    tables=["admissions"], columns=["admissions.admission_time", "admissions.discharge_time"],
    scope={"admission_type": "DIRECT EMER.", "days": 3}, key_terms=["readmission|readmit", "3 days", "DIRECT EMER."])
SPANISH = ("Hay 15 admisiones DIRECT EMER.; para cada una se buscó la siguiente admisión del mismo paciente iniciada tras "
           "el alta [step 1]. Las admisiones DIRECT EMER. seguidas de otra admisión dentro de los 3 días posteriores al "
           "alta son menos de cinco (tanto contando 72 horas exactas como días de calendario) [step 1]. Por la regla de "
           "las cinco unidades no se divulga el recuento exacto.")


def test_a_spanish_reasoning_is_read_in_the_rules_words() -> None:
    lang = detect(SPANISH)
    assert lang is not None and lang.code == "es"
    assert not consistency(SPANISH, READMIT)["states_gap"]  # as written, no rule reads it
    assert consistency(to_english(SPANISH, lang), READMIT)["states_gap"]


def test_english_is_not_taken_for_spanish() -> None:
    assert detect("The patient had no potassium recorded in the admission, so the answer is NULL [step 1].") is None
    assert detect("Los Angeles de la Cruz is a name; the mean was 5 mmol/L.") is None


@pytest.mark.parametrize("answer, ok", [
    ("2,54 (media del riesgo de mortalidad APR-DRG, escala 1–4; 2,5395 sobre 76 admisiones con insurance = Medicare)", True),
    ("2,54 o 2,64 (según cómo se cuenten las admisiones)", False),  # a hedge in Spanish is a hedge
    ("2,54, quizás 2,64", False),
    ("2,64 (media sobre 85 admisiones)", False),
])
def test_a_spanish_answer_keeps_its_context_and_its_hedges(answer: str, ok: bool) -> None:
    assert _ok(answer, NumberAnswer(value=2.54, decimals=2)) is ok, answer


HGB = UnmetRequirement(
    level="record", statement="Hemoglobin (itemid 50811) was measured only once for patient 10003400 in admission "
    "23559586; there is no second result.", tables=["lab_events"],
    columns=["lab_events.itemid", "lab_events.value_numeric", "lab_events.chart_time"],
    scope={"patientid": 10003400, "admissionid": 23559586, "itemid": 50811},
    key_terms=["Hemoglobin", "second", "admission 23559586"])


def test_a_time_after_a_number_measures_a_window_not_units() -> None:
    assert disclosure("Next same-pt admission after discharge: fewer than five qualify; none borderline (2-3 d).", 3) == []
    assert disclosure("Only 3 pts.", 3) != []  # pint reads "pts" as pints: only time units measure a window
    assert disclosure("Seen in 3 adm.", 3) != []


def test_an_introductory_absence_is_a_clause_of_its_own() -> None:
    req = HGB
    text = ("Admission 23559586 has exactly 1 numeric Hemoglobin result [step 2]. With no second numeric result in the "
            "admission (n = 1), the change from first to second cannot be computed.")
    assert consistency(text, req)["states_gap"]
    assert not consistency("The change from first to second cannot be computed [step 2].", req)["states_gap"]


def test_only_the_agents_writing_other_languages_in_every_committed_corpus_are_read_as_such() -> None:
    """Every final response of the committed corpora (synthetic and real demo): English ones stay English,
    whatever names, codes and CJK-free symbols they hold; agent c36_N's twelve are Spanish, c37_T's German,
    c38_X's French, c39_AD's Portuguese (not Spanish), c42_A's Chinese (Han script, read by characters), c43_B's
    Spanish and c46_B's Italian (none of the other 1,000-odd responses is read as Italian)."""
    import json  # noqa: PLC0415
    from pathlib import Path  # noqa: PLC0415

    found: dict[str, set[str]] = {}
    for f in (Path(__file__).resolve().parent.parent / "fixtures" / "episodes").glob("*/*.jsonl"):
        for line in f.read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            lang = detect(r["trajectory"]["final_response"])
            if lang is not None:
                found.setdefault(r["agent"], set()).add(lang.code)
    assert found == {"c36_N": {"es"}, "c37_T": {"de"}, "c38_X": {"fr"}, "c39_AD": {"pt"}, "c42_A": {"zh"},
                     "c43_B": {"es"}, "c44_B": {"de"}, "c45_B": {"fr"}, "c46_B": {"it"}}


@pytest.mark.parametrize("code, text, hedge", [
    ("de", "Für die Aufnahme 23559586 gibt es nur einen numerischen Hemoglobin-Wert (9,3 g/dl) [Schritt 2]; ein "
           "zweiter Wert ist nicht dokumentiert.", "4,2 mmol/l oder 4,4 mmol/l (je nach Zählweise der Aufnahmen)"),
    ("fr", "Pour l'admission 23559586, il n'y a qu'un seul résultat numérique d'Hemoglobin (9,3 g/dl) [étape 2] ; "
           "aucun deuxième résultat n'est enregistré.", "4,2 mmol/l ou 4,4 mmol/l (selon le comptage)"),
])
def test_german_and_french_are_read_too(code: str, text: str, hedge: str) -> None:
    """Tables written before any episode in these languages was seen (German then held out 12/12 in c37)."""
    lang = detect(text)
    assert lang is not None and lang.code == code
    assert consistency(to_english(text, lang), HGB)["states_gap"]
    assert not _ok(hedge, QuantityAnswer(value=4.2, unit="mmol/L", decimals=1))
