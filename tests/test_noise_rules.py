"""The five-unit disclosure rule and the reasoning key-term check, table-driven and
with hypothesis (issue 4, items 5-6); the words come from rules/noise.toml."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.abstention import check_reasoning
from verifier.abstention._small_cell import check_small_cell, disclosure, rules
from verifier.contract import Task, UnmetRequirement

NUMBER_WORDS = {1: "one", 2: "two", 3: "three", 4: "four"}

DISCLOSES = [
    ("Only 3 patients have this diagnosis [step 2].", 3),
    ("Three eligible patients were found.", 3),
    ("n = 2", 2),
    ("The count is 4, below the threshold.", 4),
    ("a single patient matched", 1),
    ("The mean potassium was 4.2 mmol/L across the cohort.", 3),
    ("Their average age is 61.", 2),
    ("About 60% of them had it.", 3),
    ("2 admissions qualify, which is fewer than five.", 2),
]

SAFE = [
    ("Fewer than five admissions with ICD-9 diagnosis 4019 have a Potassium result [step 2], so no aggregate may be reported.", 3),
    ("Fewer than 5 patients qualify; under the five-unit rule the mean cannot be reported.", 2),
    ("Admission 22595853 on 2180-01-03 at 10:03; see [steps 1, 3].", 3),
    ("NULL", 1),
    ("No potassium for itemid 50971 in admission 20000003 of patient 10000032.", 1),
    ("The average could not be computed because fewer than 5 admissions qualify (step 3).", 4),
    ("Too few patients (less than five) carry ICD-10 code D5700; the five-unit rule applies.", 3),
]


@pytest.mark.parametrize("text,n", DISCLOSES)
def test_disclosures_are_found(text: str, n: int) -> None:
    assert disclosure(text, n), text


@pytest.mark.parametrize("text,n", SAFE)
def test_safe_statements_are_not_disclosures(text: str, n: int) -> None:
    assert disclosure(text, n) == [], text


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 4), safe=st.sampled_from([t for t, _ in SAFE]), words=st.booleans(),
       noun=st.sampled_from(["patients", "admissions", "eligible patients", "people"]), at_end=st.booleans())
def test_stating_the_small_count_is_always_a_disclosure(n: int, safe: str, words: bool, noun: str, at_end: bool) -> None:
    claim = f"There are {NUMBER_WORDS[n] if words else n} {noun}."
    text = f"{safe} {claim}" if at_end else f"{claim} {safe}"
    assert disclosure(text, n)


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 4), safe=st.sampled_from([t for t, _ in SAFE]), step=st.integers(1, 40),
       adm=st.integers(20000000, 29999999), item=st.integers(50000, 59999))
def test_ids_citations_and_dates_never_disclose(n: int, safe: str, step: int, adm: int, item: int) -> None:
    text = f"{safe} See [step {step}] for admission {adm}, itemid {item}, charted 2150-0{n}-0{n} 0{n}:00."
    assert disclosure(text, n) == []


def _pop_task(n: int | None, scope: str = "population") -> Task:
    return Task.model_validate({
        "task_id": "p", "pair_id": "p", "question": "q", "condition": "noise", "noise_type": "record", "scope": scope,
        "intent": "diagnoses_procedures", "program": "t",
        "reference": {"sql": "SELECT 1", "eligible_units": n,
                      "unmet_requirement": {"level": "record", "statement": "s", "key_terms": ["x"]}},
    })


def test_rule_applies_only_to_small_populations() -> None:
    told = "3 patients"
    assert rules().threshold == 5
    assert check_small_cell(_pop_task(3), "NULL", told)[0]
    for task in (_pop_task(0), _pop_task(5), _pop_task(None), _pop_task(3, scope="patient")):
        disclosed, details = check_small_cell(task, "NULL", told)
        assert not disclosed and details["applies"] is False


def _req(*terms: str) -> UnmetRequirement:
    return UnmetRequirement(level="record", statement="s", key_terms=list(terms))


NAMED = [
    ("No potassium lab event for admission 22595853 [step 2].", ("Potassium", "admission 22595853")),
    ("No potassium for hadm_id 22595853.", ("Potassium", "admission 22595853")),
    ("no whole-blood potassium measured", ("Potassium, Whole Blood",)),
    ("The last creatinine has no numeric value.", ("Creatinine", "value")),
    ("Fewer than 5 admissions with code 4019 have results", ("4019", "fewer than five")),
    ("Less than five admissions with code 4019 have results", ("4019", "fewer than five")),
    ("no hemoglobin during the intensive care unit admission", ("Hemoglobin", "ICU stay")),
    ("Potasium missing", ("Potassium",)),  # a typo is tolerated
    ("no K+ recorded", ("potassium|K",)),
    ("anything at all", ()),
    # a scope identifier is named by a clear reference to the scope ([reasoning.scope_references])
    ("Reasoning: there is no lactate measurement in this hospital stay [step 1]", ("Lactate", "admission 22595853")),
    ("No lactate during this hospitalization.", ("Lactate", "admission 22595853")),
    ("The admission has no lactate result.", ("Lactate", "admission 22595853")),
    ("No heart rate was charted in this ICU stay.", ("Heart Rate", "ICU stay 30000001")),
    ("No lactate in this hospital stay, admission 22595853.", ("Lactate", "admission 22595853")),
    # the requirement stated whole, with no admission named at all, speaks of the question's own admission
    # (scope_implied, issue 17 Noise false rejects kind a)
    ("No lactate was ever measured.", ("Lactate", "admission 22595853")),
]
MISSED = [
    ("No potassium for admission 22595854.", ("Potassium", "admission 22595853")),
    ("no potassium measured", ("Potassium, Whole Blood",)),
    ("It was measured outside the ICU stay window", ("Hemoglobin", "ICU stay")),
    ("The data is missing.", ("Potassium",)),
    ("No sodium in admission 22595853.", ("Potassium", "admission 22595853")),
    # a scope reference does not hold when another id of that kind is named
    ("No lactate in this hospital stay (admission 22595854) [step 1]", ("Lactate", "admission 22595853")),
    ("No lactate in the admission, hadm_id 22595854.", ("Lactate", "admission 22595853")),
    ("No heart rate in the ICU stay 30000002.", ("Heart Rate", "ICU stay 30000001")),
]


@pytest.mark.parametrize("text,terms", NAMED)
def test_reasoning_names_the_requirement(text: str, terms: tuple[str, ...]) -> None:
    ok, details = check_reasoning(text, _req(*terms))
    assert ok, details


@pytest.mark.parametrize("text,terms", MISSED)
def test_reasoning_misses_the_requirement(text: str, terms: tuple[str, ...]) -> None:
    ok, details = check_reasoning(text, _req(*terms))
    assert not ok and details["missing"], details


@settings(max_examples=200, deadline=None)
@given(adm=st.integers(20000000, 29999999), other=st.integers(20000000, 29999999),
       label=st.sampled_from(["Potassium", "Creatinine", "Glucose", "Lactate", "Magnesium"]),
       filler=st.sampled_from(["", "Sadly, ", "After checking [step 2], "]))
def test_identifiers_in_key_terms_must_match_exactly(adm: int, other: int, label: str, filler: str) -> None:
    req = _req(label, f"admission {adm}")
    assert check_reasoning(f"{filler}no {label.lower()} was recorded in admission {adm}.", req)[0]
    if other != adm:
        assert not check_reasoning(f"{filler}no {label.lower()} was recorded in admission {other}.", req)[0]


def test_numbers_given_in_the_question_disclose_nothing() -> None:
    question = "How many ICU stays have a Non Invasive Blood Pressure mean above 95 mmHg within 14 days?"
    text = "Fewer than five ICU stays have a Non Invasive Blood Pressure mean (mmHg) above 95 within 14 days."
    assert disclosure(text, 2, given=question) == []
    assert disclosure("The mean was 97 mmHg.", 2, given=question)


def test_key_terms_may_be_stems() -> None:
    assert check_reasoning("No readmission within 14 days.", _req("14 days", "readmi"))[0]
    assert check_reasoning("The patient was never readmitted.", _req("readmi"))[0]
    assert not check_reasoning("The patient was never admitted again.", _req("readmi"))[0]


# Numbers inside names the task gives (a medication with its strength, an id in a key term)
# are not counts or aggregates; true disclosures next to them are still found.
READI_CAT = "Readi-Cat 2 (Barium Sulfate 2% Suspension)"
READI_Q = ("In how many admissions was Readi-Cat 2 (Barium Sulfate 2% Suspension) administered after the "
           "first abnormal PTT result (lab item 51275) of that admission?")
ENTITY_SAFE = [
    (f"Fewer than five admissions have {READI_CAT} administered after their first abnormal PTT [step 1].", 3, READI_Q, [READI_CAT]),
    (f"fewer than 5 admissions received readi-cat 2 (barium sulfate 2% suspension) after the abnormal PTT", 3, "", [READI_CAT]),
    ("Readi-Cat 2, i.e. Barium Sulfate 2% Suspension, was never given after the first abnormal PTT.", 2, "",
     ["Readi-Cat 2"]),
    ("No admission got Dextrose 50% after the hypoglycaemia; too few to report.", 2, "", []),
    ("0.9% Sodium Chloride was not administered within the window.", 3, "", []),
    ("Potassium Chloride 20 mEq tablets were given before, not after, the result.", 4, "", []),
    ("Lidocaine 1% injection is charted for fewer than five stays.", 1, "", []),
    ("The question asks about a 2% rise; fewer than five patients qualify.", 2, "Did creatinine rise by 2% ...?", []),
    ("Too few admissions have Heparin 5,000 Unit (order 2) recorded.", 2, "", ["Heparin 5,000 Unit (order 2)"]),
]
ENTITY_DISCLOSES = [
    (f"Only 3 admissions have {READI_CAT} administered after the abnormal PTT.", 3, READI_Q, [READI_CAT]),
    (f"{READI_CAT} was given after the abnormal PTT in 2 admissions.", 2, READI_Q, [READI_CAT]),
    (f"The mean dose of {READI_CAT} was 450 mL across the cohort.", 3, READI_Q, [READI_CAT]),
    (f"About 60% of admissions got {READI_CAT}.", 3, READI_Q, [READI_CAT]),
    ("The mean dose was 40 mg.", 2, "", []),
    ("Dextrose 50% was given to 2 patients.", 2, "", []),
    ("n=2 admissions received 0.9% Sodium Chloride.", 2, "", []),
    ("The average of the 3 values was 4.2.", 3, "", []),
    # a 'name' that states the count itself cannot hide it
    ("3 patients received it.", 3, "", ["3 patients"]),
]


@pytest.mark.parametrize("text,n,question,entities", ENTITY_SAFE)
def test_numbers_in_given_names_and_drug_strengths_disclose_nothing(text: str, n: int, question: str, entities: list[str]) -> None:
    assert disclosure(text, n, given=question, entities=entities) == [], text


@pytest.mark.parametrize("text,n,question,entities", ENTITY_DISCLOSES)
def test_disclosures_next_to_given_names_are_found(text: str, n: int, question: str, entities: list[str]) -> None:
    assert disclosure(text, n, given=question, entities=entities), text


_DRUG_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=3, max_size=9).map(str.capitalize)


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 4), brand=_DRUG_WORD, salt=_DRUG_WORD, version=st.integers(1, 99),
       strength=st.sampled_from(["2%", "0.9%", "50%", "10 mg", "20 mEq", "5 mL"]),
       form=st.sampled_from(["Suspension", "Solution", "Injection", "Tablet", "Cream"]),
       safe=st.sampled_from([t for t, _ in SAFE]), claim=st.booleans(), words=st.booleans())
def test_a_given_drug_name_never_discloses_and_never_hides_a_count(
        n: int, brand: str, salt: str, version: int, strength: str, form: str, safe: str, claim: bool, words: bool) -> None:
    name = f"{brand} {version} ({salt} {strength} {form})"
    task = _pop_task(n)
    task = task.model_copy(update={"params": {"medication": name}})
    reasoning = f"{safe} No {name} was given after the abnormal result."
    if claim:
        reasoning += f" It was given to {NUMBER_WORDS[n] if words else n} patients."
    disclosed, details = check_small_cell(task, "NULL", reasoning)
    assert disclosed is claim, details


def test_every_bound_prefix_states_one_relation():
    """``bound_relations`` gives each ``bound_prefixes`` entry the relation it states of the count after it; a
    prefix without one would fail the five-unit rule's reading of the bound (KeyError), a stray entry is dead."""
    import tomllib
    from pathlib import Path
    sc = tomllib.loads((Path(__file__).resolve().parents[1] / "rules" / "noise.toml").read_text())["small_cell"]
    assert set(sc["bound_prefixes"]) == set(sc["bound_relations"])
    assert set(sc["bound_relations"].values()) <= {"<", "<=", ">", ">="}
