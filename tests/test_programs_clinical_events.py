"""Issue 33 point 3: harder programs of the medications, laboratory and vitals/ICU intents,
checked on the synthetic hospital.

For each program: it yields pairs; the Clean reference re-executed on the base gives the
task's answer; the Noise reference is NULL on the base and answerable once the witness rows
are overlaid (the property the verifier's abstention check relies on).
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from verifier.construction import load_programs, make_tasks
from verifier.construction.overlay import Overlay
from verifier.construction.typed import to_answer
from witness_answer import witness_answer

NEW_PROGRAMS = (
    "lab_first_value_second_admission",
    "lab_first_after_icu_admission",
    "lab_first_after_icu_admission_missing",
    "med_first_dose_latest_admission",
    "med_patients_given_in_icu",
    "med_patients_given_on_unit",
    "vital_first_in_second_icu_stay",
    "vital_first_icu_after_ed",
    "vital_stays_with_both_items",
)

# Programs the synthetic hospital cannot exercise (its generator is not changed: committed
# corpora are bound to its output); the reason is checked, not assumed.
SYNTH_LACKS = {
    "lab_first_after_icu_admission_missing": (
        "the synthetic hospital has two lab results without a numeric value, neither at or after the start of an ICU stay",
        "SELECT count(*) FROM lab_events l JOIN icu_stays s ON s.admissionid = l.admissionid "
        "WHERE l.value_numeric IS NULL AND l.chart_time >= s.in_time",
    ),
}


@pytest.fixture(scope="module")
def new_tasks(synth_db: Path):
    specs = {p.name: p for p in load_programs()}
    missing = [n for n in NEW_PROGRAMS if n not in specs]
    assert not missing, missing
    tasks, report = make_tasks(synth_db, seed=0, programs=[specs[n] for n in NEW_PROGRAMS])
    return specs, tasks, report


@pytest.mark.parametrize("name", NEW_PROGRAMS)
def test_program_pairs_on_synthetic_hospital(name, new_tasks, synth_db):
    specs, tasks, report = new_tasks
    spec = specs[name]
    mine = [t for t in tasks if t.program == name]
    if name in SYNTH_LACKS:
        reason, check = SYNTH_LACKS[name]
        with duckdb.connect(str(synth_db), read_only=True) as con:
            assert con.execute(check).fetchone()[0] == 0 and not mine, name
        pytest.skip(reason)
    assert mine, (name, report.rejections_by_program.get(name))
    clean = {t.pair_id: t for t in mine if t.condition == "clean"}
    noise = [t for t in mine if t.condition == "noise"]
    assert len(clean) == len(noise)
    ov = Overlay(synth_db)
    try:
        for t in noise[:10]:
            c = clean[t.pair_id]
            assert c.reference.answer is not None
            cols, rows = ov.query(c.reference.sql)
            assert to_answer(spec.answer, cols, rows) == c.reference.answer
            cols, rows = ov.query(t.reference.sql)
            assert to_answer(spec.answer, cols, rows) is None, t.task_id
            assert t.reference.witness and all(w.rows for w in t.reference.witness)
            assert witness_answer(synth_db, t, spec.answer) is not None, t.task_id
    finally:
        ov.close()


def test_oracle_passes_new_programs(new_tasks, synth_db):
    """The privileged oracle (reference SQL, answer or cited abstention) succeeds on every
    task of the new programs: their answers, witnesses, unmet requirements and key terms are
    consumable by the verifier. (On the real demo, an unmet text saying "only one of them"
    read as a small-cell disclosure when one stay qualified; the synthetic hospital has no
    such twin, so that case is checked only by the demo oracle test.)"""
    from verifier.agents import make_agent
    from verifier.agents.rollout import run_episode
    from verifier.env.ehr_env import EHREnv

    _, tasks, _ = new_tasks
    env = EHREnv(str(synth_db))
    agent = make_agent("oracle")
    failed = []
    for t in tasks:
        _, verdict = run_episode(env, agent, t)
        if not verdict.success:
            failed.append((t.task_id, verdict.reasons))
    assert tasks and not failed, failed
