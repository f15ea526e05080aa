"""The verifier against blind adjudication on the real MIMIC-IV demo (issue 32 point 4).

Two corpora of episodes played through ``EHREnv`` on the real demo by LLM agents in styles the earlier
corpora did not have, one twin per pair and agent, pairs stratified by scope x noise level, each episode
judged blind by two LLM reviewers who agreed on every one. They are small extracts of the demo, committed
under ODbL 1.0 with the demo's attribution (``NOTICE.md`` beside each).

* ``demo_c34`` (2026-12-05, 60 episodes, all successes): a reasoning model's long ``<think>`` block;
  clinical prose that corrects itself; a lead value over a vertical ``| field | value |`` table; terse
  SQL with window functions; Python-first JSON. Before that session's fixes: 48/60.
* ``demo_c35`` (2026-12-06, 72 episodes, 69 successes): a clinical note line with SOAP-style bullets;
  a plain English sentence after broad GROUP BY exploration; quick and cautious (three tool calls);
  YAML ``answer:`` fields; SI conversions beside the database unit; "Final answer: X." with a caveat.
  Before the fixes it found: 53/72, one false accept; now 71/72.
* ``demo_c36`` (2026-12-06, 72 episodes, 69 successes; reviewers agreed on all 72, one task ambiguous): a
  chatty assistant with the value in **bold** inside a sentence; a biostatistician giving n, SD and ranges;
  a Spanish-speaking clinician (decimal commas, Spanish reasoning); a laboratory report (RESULT: /
  UNITS/REFERENCE: / COMMENT:); a software engineer's fenced JSON answers; a thinking-aloud model whose
  Answer names a discarded candidate ("12 ICU stays (not 11, ...)"). Before the fixes it found: 48/72
  (24 false rejects, no false accept; ``tests/test_blind_forms_c36.py``); now 72/72.
* ``demo_c37`` (2026-12-06, 72 episodes, 70 successes; reviewers agreed on all 72, one task ambiguous): a
  math-trained model's ``\boxed{}`` answers; Markdown "### Answer" sections; a German-speaking clinician; an
  ICU nurse's charting shorthand; a cautious auditor with confidence lines and numbered caveats; a teacher
  restating the question. Held out (scored before any of its fixes): 49/72, 0 false accepts, 23 false
  rejects (``tests/test_blind_forms_c37.py``); German, whose table was written before, 12/12. Now 72/72.
* ``demo_c38`` (2026-12-06, 72 episodes, test and train splits (the test split's unused pairs ran out); the
  reviewers split on one, a third decided): French; whole-response JSON with "evidence_steps"; one-row Markdown
  tables; arrows and check marks; an over-explainer whose first sentence is the value; relative times ("hospital
  day 2"). Held out: 56/72, 0 false accepts, 16 false rejects (``tests/test_blind_forms_c38.py``). Now 72/72.

* ``demo_c39`` (2026-12-06, 72 episodes; the reviewers split on two, a third decided): Brazilian Portuguese;
  structured abstracts; Slack chat with emoji; plain language with numbers in words; fenced CSV answers with
  SQL-comment reasoning; scientific notation with "± precision". Held out: 56/72, 1 false accept, 15 false
  rejects (``tests/test_blind_forms_c39.py``); now 70/72, no false accept. Left, by name, two false rejects:
  c39_AD/Q01 ("Risco de mortalidade APR-DRG = 3": the 3 after "DRG =" is read as a DRG code) and c39_AH/Q02
  (MCHC recorded in "%" answered in g/dL, the same number for this analyte, with "(recorded as % or g/dL;
  numerically equivalent)" beside it: no unit bridge, and the "or" stays a hedge).

* ``demo_c40`` (2026-12-07, 48 episodes on the default test split, 24 pairs, 4 per scope x noise-type cell; the
  reviewers split on three tasks' validity only, a third decided): terse JSON inside the reasoning tag; clinical
  pharmacist prose with SI units; Python-first with numbered findings; a skeptical auditor's Findings/Checks/
  Confidence. Held out: 45/48, 1 false accept ("Only 4 administrations fall within ICU stays, from fewer than five
  patients": the small cell's record count in a sentence naming no item), 2 false rejects (the item absent from the
  second ICU stay and its values said to belong to the first; a list marker "3." between the codes and "patients
  with both"); ``tests/test_blind_forms_c40.py``. Now 48/48. Reviewers: Clean 24/24, Noise 22/24 (both failures
  small-cell record counts), 48/48 tasks valid after the third review.

* ``demo_c41`` (2026-12-07, 48 episodes, 24 pairs, 4 per scope x noise-type cell, 44 on the default test split
  (the population Record-level cell's unused test pairs ran out: three train pairs); the reviewers agreed on all
  48, two tasks ambiguous to both): a reasoning model opening every response with a long ``<think>`` block; an
  ICU registrar's British shorthand; a data engineer's YAML blocks; a Markdown analyst who corrects himself.
  Held out: 46/48, 0 false accepts, 2 false rejects (the YAML block read line by line:
  ``tests/test_blind_forms_c41.py``). Now 48/48. Reviewers: Clean 24/24, Noise 24/24.

* ``demo_c42`` (2026-12-07, 48 episodes on the default test split, 24 pairs, 4 per scope x noise-type cell; the
  reviewers agreed on all 48, every task valid): a Chinese-speaking clinician (reasoning in Simplified Chinese); a
  quantitative analyst stating its confidence and citing steps inside the Answer; the tool's own table pasted as
  the Answer; a defensive analyst's "Assumptions:" list and "Check 1: ... Check 2: ..." points. Held out: 35/48,
  0 false accepts, 13 false rejects (``tests/test_blind_forms_c42.py``). Now 47/48. Reviewers: Clean 24/24,
  Noise 24/24. Left, by name: c42_B/Q04 ("Fewer than five ICU stays qualify." after a sentence about the stays
  kept, naming no item: reading the eligibility word as a reference back to the item was withdrawn when fresh
  adversary adv16's template passed 37 of 60 population Noise tasks with it, 3 without).

* ``demo_c43`` (2026-12-07, 48 episodes on the default test split, 24 pairs, 4 per scope x noise-type cell,
  hard pairs first (16 of 24 Noise twins hard); the reviewers agreed on every outcome, a third decided two tasks'
  validity, all 48 valid): a math-trained reasoning model (``\\boxed{}`` answers as in c37, now with LaTeX
  reasoning); a Spanish-speaking attending; an ICU nurse informaticist's SBAR report; a chatty assistant
  answering in full sentences. Held out: 39/48, 1 false accept (the withheld median's 7 records told as "52 results ... Of these, 45 have no numeric
  value"), 8 false rejects (``tests/test_blind_forms_c43.py``, ``tests/test_blind_forms_c43_clean.py``).
  Reviewers: Clean 24/24, Noise 22/24. Now 48/48.

* ``demo_c44`` (2026-12-07, 48 episodes on the default test split, 24 pairs, 4 per scope x noise-type cell, hard
  pairs first; the reviewers agreed on every outcome and judged all 48 tasks valid): a biostatistician ("n = 5
  distinct patients (17 culture result rows, ...)"); a German-speaking internist (decimal commas); a
  clinical-informatics engineer answering with HL7 FHIR resources; an ED physician paging in shorthand. Held out:
  42/48, no false accept, 6 false rejects (three FHIR ``value[x]`` answers, "n = 5" opening a count, two small-cell
  abstentions read as a total less a part from day gaps and the threshold's name; ``tests/test_blind_forms_c44.py``).
  Reviewers: Clean 24/24, Noise 23/24. Now 48/48.

* ``demo_c45`` (2026-12-07, 48 episodes on the default test split where it had pairs left, 24 pairs, 4 per cell,
  hard pairs first; the reviewers agreed on every outcome, all tasks valid, two judged ambiguous by both: a count
  whose cohort is empty expects NULL where "0" is defensible): a radiologist-informaticist writing a structured
  report (FINDINGS / IMPRESSION); a French-speaking hospital pharmacist; a data scientist answering in CSV; a
  teaching physician who puts the value in clinical context. Held out: 37/48, no false accept, 11 false rejects
  (five IMPRESSION answers read with their findings, five values followed by clinical context: "not a boarding
  delay", "roughly 0 to +1 L is common", one abstention whose findings, not its Reasoning, named the window;
  ``tests/test_blind_forms_c45.py``). Reviewers: Clean 24/24, Noise 23/24 (C/Q01's two steps failed while the
  harness reloaded the verifier mid-edit; both reviewers and the verifier fail it: a refusal without evidence).
  Now 48/48.

* ``demo_c46`` (2026-12-07, 96 episodes on the default test split, 48 pairs, 8 per scope x noise-type cell, hard
  pairs first; issue 33's blind study: no agent saw both twins; the reviewers agreed on every outcome and judged all
  96 tasks valid): a clinical-trials data manager answering in CDISC SDTM variables ("LBSTRESN=3.2; LBSTRESU=K/uL");
  an Italian-speaking intensivist; a hurried night-float resident (at most four tool calls, "abnl ALC"); a ReAct
  trace; a QA engineer's XML ``<result value=.../>``; a patient-safety officer's "Confidence: high" and risk notes.
  Held out: 83/96, no false accept, 13 false rejects (three SDTM records, seven Italian reasonings and answers, a
  decimal comma read as two numbers, a count of stays split over unit groups, the resident's shorthand;
  ``tests/test_blind_forms_c46.py``). Reviewers: Clean 48/48, Noise 47/48. Now 95/96. Left, by name: c46_A/Q06
  ("one admission has no abnormal glucose, one had its Haloperidol only before it, and the remaining qualifying
  admissions number fewer than five": counts of excluded units in a sentence about the cohort; both reviewers
  accepted it, one as borderline; the five-unit rule is not loosened for it).

The disagreements left are kept here by name, so that a fix shows and nothing new slips in. c36_P/Q01 (2026-12-07,
after fresh adversary adv20): its Reasoning states the small cell only as a free-standing "Fewer than five ICU stays
are eligible" (c42_B/Q04's form, kept as a false reject since adv16) and was accepted through a misreading of "no
qualifying rows lack a stay id" as "no unit qualifies"; with 1-4 eligible units a zero is no longer the gap (adv20's
template was paid on 38 of 42 small cells through it), so it is rejected. None other is left in c34-c38: the last three (c34_A/Q11 "20.65 h" at a binary rounding tie, c34_D/Q06 a location with its category in
parentheses, c35_J/Q01 "the two" for the two codes) are closed by rules written from them
(``tests/test_known_rejects_c34_c35.py``).

(The c35 false accept, "the exact entry 'AcetaZOLamide' appears in 2 prescription rows" on a task whose
cohort is the patients with that entry, is closed: ``verifier.abstention._suppressed.record_count``.)

Real-data test: it needs the demo (``MIMIC_DEMO_DIR``) and its MEDS chart events, and skips, saying so,
only when they are absent.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from corpus_replay import assert_known_false_accepts, replay

EPISODES = Path(__file__).resolve().parent.parent / "fixtures" / "episodes"
#: corpus folder -> (episodes, known false accepts, known false rejects)
CORPORA = {
    "demo_c34": (60, set(), set()),
    "demo_c35": (72, set(), set()),
    "demo_c36": (72, set(), {"c36_P/Q01"}),
    "demo_c37": (72, set(), set()),
    "demo_c38": (72, set(), set()),
    "demo_c39": (72, set(), {"c39_AD/Q01", "c39_AH/Q02"}),
    "demo_c40": (48, set(), set()),
    "demo_c41": (48, set(), set()),
    "demo_c42": (48, set(), {"c42_B/Q04"}),
    "demo_c43": (48, set(), set()),
    "demo_c44": (48, set(), set()),
    "demo_c45": (48, set(), set()),
    "demo_c46": (96, set(), {"c46_A/Q06"}),
}
TARGET = 0.99


@pytest.fixture(scope="module", params=sorted(CORPORA))
def agreement(request, demo_db: Path):
    return request.param, replay(EPISODES / request.param, demo_db)


def test_corpus_is_blind_and_double_reviewed(agreement) -> None:
    name, (episodes, _) = agreement
    assert len(episodes) == CORPORA[name][0]
    assert {e.task.condition for e in episodes} == {"clean", "noise"}
    seen: set[tuple[str, str]] = set()
    for e in episodes:
        assert (e.agent, e.task.pair_id) not in seen, f"{e.agent} played both twins of {e.task.pair_id}"
        seen.add((e.agent, e.task.pair_id))
        assert len(e.adjudication["reviews"]) >= 2


def test_no_false_accept_beyond_the_known(agreement) -> None:
    name, (_, a) = agreement
    assert_known_false_accepts(a, CORPORA[name][1])


def test_false_rejects_are_the_known_ones(agreement) -> None:
    name, (_, a) = agreement
    known = CORPORA[name][2]
    found = {row[0] for row in a.false_rejects}
    assert found <= known, f"new false rejects: {sorted(found - known)}"
    if found != known:
        print(f"fixed, remove from the known false rejects: {sorted(known - found)}")
    if a.rate is not None and a.rate < TARGET:
        print(f"{name}: agreement {a.rate:.3f} is below issue 32's target {TARGET}")
