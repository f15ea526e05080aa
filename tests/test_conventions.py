"""Reading conventions stated once in the shared instructions (issue 33 point 1).

Questions used to spell out their reading ("Count only eMAR events with status 'Administered'",
"results without an admission id are not included", "a result written only as text is not a
numeric value"): 496 of the real demo's 2,270 tasks carried such a sentence. The conventions of
``rules/conventions.toml`` now say it once, with the reason, in the instructions every agent reads;
the construction audit treats a reading a convention settles as a trap (the pair is kept, the
other reading's answer recorded as its near miss), and only a reading no convention settles as an
ambiguity.
"""

from __future__ import annotations

import pytest

from verifier.construction import load_programs
from verifier.contract import RulesError
from verifier.database.conventions import conventions, settling
from verifier.env import EHREnv
from verifier.env.instructions import SHARED_INSTRUCTIONS


def test_every_convention_is_stated_with_its_reason_in_the_first_observation(synth_db, synth_tasks):
    env = EHREnv(str(synth_db))
    try:
        text, _ = env.reset(synth_tasks[0])
    finally:
        env.close()
    assert len(conventions()) >= 5
    for c in conventions():
        assert c.text in SHARED_INSTRUCTIONS and c.reason in SHARED_INSTRUCTIONS
        assert c.text in text


@pytest.mark.parametrize(("kind", "group", "name_table", "tables", "want"), [
    ("name", None, "prescriptions", ["prescriptions"], "exact_name"),
    ("status", "given", None, ["medication_administrations"], "administered"),
    ("source", None, None, ["medication_administrations", "admissions"], "administered"),
    ("source", None, None, ["input_events", "icu_items"], None),   # the ICU input events program reads another source
    ("source", None, None, ["admissions", "transfers"], None),     # ED times: two records, no convention
    ("unlinked", None, None, ["lab_events"], "linked_by_id"),
    ("comment", None, None, ["lab_events"], "numeric_value"),
    ("comment", None, None, ["medication_administration_details"], None),  # a dose without its unit
    ("absent", None, None, ["output_events"], "missing_not_zero"),
    ("window", None, None, ["admissions"], None),                  # calendar days vs hours: stated per question
])
def test_which_readings_a_convention_settles(kind, group, name_table, tables, want):
    got = settling(kind, group, name_table, tables)
    assert (got.id if got else None) == want


def test_a_bad_selector_is_a_typed_error(monkeypatch):
    import verifier.database.conventions as mod

    monkeypatch.setattr(mod, "load_toml", lambda _n: {"convention": [{"id": "x", "text": "t", "reason": "r", "covers": [{"knd": "name"}]}]})
    mod.conventions.cache_clear()
    try:
        with pytest.raises(RulesError, match="knd"):
            mod.conventions()
        monkeypatch.setattr(mod, "load_toml", lambda _n: {"convention": [{"id": "x", "text": "", "reason": "r"}]})
        mod.conventions.cache_clear()
        with pytest.raises(RulesError, match="text"):
            mod.conventions()
    finally:
        monkeypatch.undo()
        mod.conventions.cache_clear()


def _settled_sentences() -> set[str]:
    """The ``explicit`` sentences of relaxations a convention settles, as templates' fixed heads."""
    out = set()
    for p in load_programs():
        for r in p.relax:
            if r.explicit and settling(r.kind, r.group, r.table if r.kind == "name" else None, p.tables):
                out.add(r.explicit.split("{")[0].strip())
    return {s for s in out if len(s) >= 12}


def test_real_demo_questions_no_longer_spell_a_settled_reading(demo_tasks):
    heads = _settled_sentences()
    assert heads  # the programs still declare the sentences: without the convention they come back
    spelled = [t.task_id for t in demo_tasks if any(h in t.question for h in heads)]
    assert not spelled, spelled[:5]


def test_real_demo_traps_are_recorded_as_near_misses(demo_tasks):
    """On the real demo, Noise twins kept under a convention hold the other reading's answer: a near
    miss an agent that ignores the convention would submit (at least one per convention that applies)."""
    traps = {}
    for t in demo_tasks:
        for a in t.reference.audit:
            if a.outcome == "convention":
                cid, _, answer = a.detail.partition(": ")
                assert answer and answer != "None", (t.task_id, a)
                traps.setdefault((t.condition, cid), 0)
                traps[(t.condition, cid)] += 1
    noise_conventions = {cid for cond, cid in traps if cond == "noise"}
    assert {"exact_name", "linked_by_id", "numeric_value", "missing_not_zero"} <= noise_conventions, traps
