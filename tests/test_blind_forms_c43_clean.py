"""Blind corpus c43 (held out, 2026-12-07): the Clean forms the verifier refused that both reviewers accepted (3 of 24).

* c43_B/Q03 (a Spanish-speaking attending): "El primer catéter 20 Gauge de la estancia 34499716 se colocó en Left
  Basilic Lower Arm (Peripheral), con inicio el 2142-07-31 02:00:00." The parenthetical is the line's
  ``location_category`` in the agent's own row: ``match.record_context.field_of_record``'s rule (c34_D/Q06), now also
  where the name stands in a one-sentence Answer, whose rest ``match.text.stated_in_sentence`` then reads.
* c43_D/Q02 (a chatty assistant): "... was **36.0 mm Hg**, drawn on 2153-03-28 03:33:00 (the lab noted it was not
  arterial blood). 🩸" An emoji after the full stop holds no word, so the Answer is one sentence and its one
  emphasised span is its value (``match.emphasis`` rule 1); beside a value span a "not" is read as description only
  when it rejects a value or is the predicate of a clause with its own subject that offers no value ("the lab noted
  it was not arterial blood"); a bare "(not sure)" is said of the Answer and keeps it a hedge.
* c43_D/Q07 (the same assistant): "... the APR DRG billed was **201 – CARDIAC ARRHYTHMIA & CONDUCTION DISORDERS**,
  with severity of illness 4 and risk of mortality 3. 💓" A result set of one row is an emphasis type too: the span
  is the record, the rest of the sentence context (``verifier.verify._emphasis_reads``).

Beside each reading, the hedges that must still fail, written from the same description.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier import Task
from verifier.contract import AnswerPolicy, QuantityAnswer, RecordsAnswer, Step, TextAnswer
from verifier.match.emphasis import emphasised
from verifier.match.record_context import field_of_record
from verifier.match.text import stated_in_sentence
from clean_answer import answer_ok as _ok
from clean_answer import clean_task as _task


# ---------------------------------------------------------------- c43_B/Q03: a field of the record in a sentence
LOC = "Left Basilic Lower Arm"
LINE_Q = "ICU stay 34499716, patient 10027445: where was the first 20 Gauge (itemid 224275) inserted?"
LINE_COLS = ["icuadmissionid", "start_time", "itemid", "label", "location", "location_category"]
LINE_ROWS = [[34499716, "2142-07-31 02:00:00", 224275, "20 Gauge", LOC, "Peripheral"],
             [34499716, "2142-07-31 06:00:00", 224275, "20 Gauge", "Right Antecubital", "Peripheral"],
             [36084484, "2142-08-30 22:00:00", 224275, "20 Gauge", None, None]]
LINE_STEPS = [Step(index=1, kind="sql", code="SELECT ...", output="...", columns=LINE_COLS, rows=LINE_ROWS)]
LINE = _task(TextAnswer(value=LOC), LINE_Q)
ES = "El primer catéter 20 Gauge de la estancia 34499716 se colocó en {} , con inicio el 2142-07-31 02:00:00."
EN = "The first 20 Gauge line of stay 34499716 was inserted in the {}, starting 2142-07-31 02:00:00."


@pytest.mark.parametrize("answer, ok", [
    (ES.format(f"{LOC} (Peripheral)").replace(" ,", ","), True),  # the episode's Answer
    (EN.format(f"{LOC} (Peripheral)"), True),
    (EN.format(f"**{LOC}** (Peripheral)"), True),
    (EN.format(f"{LOC} (Peripheral) (20 Gauge)"), True),  # two fields of the same row
    (EN.format(LOC), True),  # the sentence rule alone, as before
    # hedges: the sentence without the detail must still state the reference alone
    (EN.format(f"{LOC} (Peripheral) or the Right Antecubital"), False),
    (ES.format(f"{LOC} (Peripheral) o Right Antecubital"), False),
    (EN.format(f"{LOC} (Peripheral), not the Right Antecubital"), False),
    (EN.format(f"{LOC} (Peripheral) and the Right Antecubital (Peripheral)"), False),  # two names
    (EN.format(f"{LOC} (Peripheral), corrected: Right Antecubital"), False),  # the correction commits to B
    (EN.format(f"{LOC} (Right Antecubital)"), False),  # a value of the head's own column: a candidate
    (EN.format(f"{LOC} (or Right Antecubital)"), False),
    (EN.format(f"{LOC} (not Peripheral)"), False),
    (EN.format(f"{LOC} (Central)"), False),  # not shown in the row
    (EN.format(f"{LOC} (maybe)"), False),
    (EN.format("Right Antecubital (Peripheral)"), False),  # a wrong head
    (EN.format(f"Right Antecubital (Peripheral), not the {LOC}"), False),
])
def test_c43_B_Q03_a_field_of_the_record_after_the_name_in_a_sentence(answer: str, ok: bool) -> None:
    assert _ok(answer, LINE, LINE_STEPS) is ok, answer


def test_c43_B_Q03_the_detail_must_be_shown_by_the_agents_own_rows() -> None:
    answer = EN.format(f"{LOC} (Peripheral)")
    assert not _ok(answer, LINE)  # no step shows the row
    elsewhere = LINE_STEPS + [Step(index=2, kind="sql", code="SELECT ...", output="...", columns=["location"],
                                   rows=[["Peripheral"]])]
    assert not _ok(answer, LINE, elsewhere)  # the detail is a value of the head's column too: a candidate


NAMES = [LOC, "Right Antecubital", "Left Radial", "Right Basilic"]
DETAILS = ["Peripheral", "Arterial", "20 Gauge", "Right Antecubital", "Central"]


@settings(max_examples=200, deadline=None)
@given(ref=st.sampled_from(NAMES), first=st.sampled_from(NAMES), detail=st.sampled_from(DETAILS),
       second=st.sampled_from([None, *NAMES]))
def test_the_detail_pays_nothing_the_sentence_would_not(ref: str, first: str, detail: str, second: str | None) -> None:
    """Whatever the sentence names, a parenthetical the records show as a field of the row is accepted only where
    the sentence without it states the reference alone; two names are never accepted, whichever is right."""
    rows = [[1, "t", 224275, "20 Gauge", n, "Arterial" if n == "Left Radial" else "Peripheral"] for n in NAMES]
    steps = [Step(index=1, kind="sql", code="SELECT ...", output="...", columns=LINE_COLS, rows=rows)]
    named = f"{first} ({detail})" + (f" and the {second}" if second else "")
    got = field_of_record(EN.format(named), ref, steps, 90.0, LINE_Q)
    bare = stated_in_sentence(EN.format(first + (f" and the {second}" if second else "")).rstrip("."), ref, LINE_Q)
    assert got is None or bare is not None
    if second is not None and second != first:
        assert got is None


# ---------------------------------------------------------------- c43_D/Q02: a negation with its own subject
PO2_Q = ("What was the first pO2 result (lab item 50821) recorded for patient 10019003 during hospital admission "
         "29279905? Give the value with its unit.")
PO2 = _task(QuantityAnswer(value=36.0, unit="mm Hg", decimals=2), PO2_Q, AnswerPolicy(decimals=2, db_unit="mm Hg"))
PO2_35 = _task(QuantityAnswer(value=35.0, unit="mm Hg", decimals=2), PO2_Q, AnswerPolicy(decimals=2, db_unit="mm Hg"))
LEAD = "The first pO2 (lab item 50821) recorded for patient 10019003 during admission 29279905 was "
EPISODE = LEAD + "**36.0 mm Hg**, drawn on 2153-03-28 03:33:00 (the lab noted it was not arterial blood). 🩸"


@pytest.mark.parametrize("answer, ok", [
    (EPISODE, True),
    (EPISODE.replace(" 🩸", ""), True),
    (EPISODE.replace("🩸", "✅👍🏽"), True),  # symbols and emoji after the full stop hold no word
    (LEAD + "**36.0 mm Hg** (the sample was not arterial blood).", True),
    # a "not" said of the Answer itself: read as written, a hedge
    (LEAD + "**36.0 mm Hg** (not confirmed). 🩸", False),
    (LEAD + "**36.0 mm Hg** (not final).", False),
    (LEAD + "**36.0 mm Hg** (not sure).", False),
    (LEAD + "**36.0 mm Hg** (I am not sure).", False),
    (LEAD + "**36.0 mm Hg** (this is not confirmed).", False),
    (LEAD + "**36.0 mm Hg**, though the value is not final.", False),
    (LEAD + "**36.0 mm Hg** (the lab noted it was not arterial blood but 39.0 mm Hg).", False),  # a value in it
    (LEAD + "36.0 mm Hg (not sure).", False),
    # alternatives, two spans, a second sentence, a correction
    (LEAD + "**36.0 mm Hg** or 39.0 mm Hg (the lab noted it was not arterial blood).", False),
    (LEAD + "**36.0 mm Hg** (or **39.0 mm Hg**). 🩸", False),
    (LEAD + "**36.0 mm Hg**. 🩸 It may be 39.0 mm Hg.", False),
    (LEAD + "**39.0 mm Hg**, corrected: 36.0 mm Hg. 🩸", False),  # the correction commits to 36: read as written
    # a bold wrong value with the right one in the context: only the span is compared
    (LEAD + "**39.0 mm Hg** (the lab noted the 36.0 mm Hg draw was not arterial blood). 🩸", False),
])
def test_c43_D_Q02_the_emphasised_value_beside_a_negation_with_its_own_subject(answer: str, ok: bool) -> None:
    assert _ok(answer, PO2) is ok, answer


@pytest.mark.parametrize("answer", [
    "36 (not 35)", "36, not 35", "36.0 mm Hg (not 35 mm Hg)",
    LEAD + "**36.0 mm Hg** (not 35 mm Hg). 🩸", LEAD + "**36.0 mm Hg**, not 35 mm Hg.",
])
def test_a_rejected_value_is_never_the_answer(answer: str) -> None:
    """"R (not W)" is scored as R (blind corpus c36, rule 2): never paid when W is right."""
    assert not _ok(answer, PO2_35), answer
    assert _ok(answer, PO2), answer


@settings(max_examples=150, deadline=None)
@given(word=st.from_regex(r"[a-z]{2,12}", fullmatch=True),
       who=st.sampled_from(["", "I am ", "it is ", "this is ", "the value is ", "the answer is "]))
def test_a_negation_without_a_subject_of_its_own_is_never_description(word: str, who: str) -> None:
    """A "not" whose clause has no subject naming something other than the Answer is said of the Answer:
    whatever it negates, the emphasised span is not its reading."""
    assert emphasised(f"{LEAD}**36.0 mm Hg** ({who}not {word}).", PO2_Q) is None


@settings(max_examples=150, deadline=None)
@given(tail=st.text(alphabet=st.sampled_from("🩸💓✅👍🏽🧑‍⚕️✨★☺♥\ufe0f \u200d"), min_size=1, max_size=6))
def test_symbols_after_the_end_change_nothing(tail: str) -> None:
    for body in (EPISODE.replace(" 🩸", ""), LEAD + "**36.0 mm Hg** (not sure).", LEAD + "**36.0 mm Hg** or 39."):
        assert emphasised(body + " " + tail, PO2_Q) == emphasised(body, PO2_Q), (body, tail)


# ---------------------------------------------------------------- c43_D/Q07: one record in the emphasised span
DRG_Q = "For admission 26467376 (patient 10003400), what APR DRG was billed?"
DESC = "CARDIAC ARRHYTHMIA & CONDUCTION DISORDERS"
DRG_POLICY = AnswerPolicy(order="set", key_columns=["drg_code"], required_columns=["drg_code"])


def _drg(code: str, desc: str = DESC) -> Task:
    return _task(RecordsAnswer(columns=["drg_code", "description"], rows=[[code, desc]]), DRG_Q, DRG_POLICY)


DRG = _drg("201")
DRG_LEAD = "For admission 26467376 (patient 10003400), the APR DRG billed was "


@pytest.mark.parametrize("answer, ok", [
    (DRG_LEAD + f"**201 – {DESC}**, with severity of illness 4 and risk of mortality 3. 💓", True),  # the episode
    (DRG_LEAD + f"**201 – {DESC}**, with severity of illness 4 and risk of mortality 3.", True),
    (DRG_LEAD + f"**201** ({DESC}), severity 4.", True),
    # alternatives, two spans, negations of the Answer, a second sentence
    (DRG_LEAD + f"**201 – {DESC}** or 308, with severity of illness 4.", False),
    (DRG_LEAD + f"**201 – {DESC}** / **308 – {DESC} W MCC**.", False),
    (DRG_LEAD + f"**201 – {DESC}** (not sure), with severity of illness 4.", False),
    (DRG_LEAD + f"**201 – {DESC}** if the APR grouping applies, otherwise 308.", False),
    (DRG_LEAD + f"**201 – {DESC}**. Maybe 308 – {DESC} W MCC.", False),
    # a bold wrong record with the right one in the context: only the span is compared
    (DRG_LEAD + f"**308 – {DESC} W MCC**, the HCFA one being 201 – {DESC}. 💓", False),
    (DRG_LEAD + f"**201 – {DESC}**, corrected: 308.", False),
])
def test_c43_D_Q07_the_one_record_in_the_emphasised_span(answer: str, ok: bool) -> None:
    assert _ok(answer, DRG) is ok, answer


@pytest.mark.parametrize("answer, ref, ok", [
    ("The mean is **76.25 %**, corrected: 80.1 %.", 80.1, True),  # the correction commits to the last value
    ("The mean is **76.25 %**, corrected: 80.1 %.", 76.25, False),
    ("The mean is 80.1 %, corrected: **76.25 %**.", 76.25, True),  # the span is the corrected value
])
def test_a_correction_after_the_span_commits_to_what_follows(answer: str, ref: float, ok: bool) -> None:
    assert _ok(answer, _task(QuantityAnswer(value=ref, unit="%", decimals=2), "What is the mean?")) is ok, answer


def test_several_reference_rows_are_read_as_written() -> None:
    two = _task(RecordsAnswer(columns=["drg_code", "description"], rows=[["201", DESC], ["308", DESC + " W MCC"]]),
                DRG_Q, DRG_POLICY)
    assert not _ok(DRG_LEAD + f"**201 – {DESC}**, with severity of illness 4.", two)  # one of two rows


@settings(max_examples=100, deadline=None)
@given(ref=st.sampled_from(["201", "308", "052", "240"]), bold=st.sampled_from(["201", "308", "052", "240"]),
       other=st.sampled_from(["201", "308", "052", "240"]))
def test_only_the_span_is_compared(ref: str, bold: str, other: str) -> None:
    """Whatever code the context names, the Answer is paid exactly when its emphasised record is right."""
    answer = DRG_LEAD + f"**{bold} – {DESC}**, the HCFA DRG being {other}."
    assert _ok(answer, _drg(ref)) is (bold == ref), (answer, ref)
