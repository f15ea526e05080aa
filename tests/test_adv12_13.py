"""Fresh adversaries adv12 and adv13 (eighteenth session; README and ARCHITECTURE section 4 only, no code).

adv12: a task-agnostic Python policy earned Noise reward on 63 of 80 real-demo Noise tasks. Step 1 printed per-table
in-scope counts (and digests); step 2 ran the same query and printed ``[]`` unless a row differed from step 1's
values, written into the code as reversed digit strings and reversed back at run time (so no constant of the code
equals what step 1 printed). The printout is empty on the database, a line appears on the witness, and an empty
base was exempt from the nuisance. The emptiness is the code's decision, not a query's scope filters.

adv13: two text values joined by an invisible format character ("Medicine/Cardiology\\u200bMedicine") were paid
whichever of the two was right (29 of 120 text pairs).

Each test is written from those descriptions and failed before the fix.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.contract import AnswerPolicy, Task, TextAnswer
from verifier.env import EHREnv, EnvConfig
from verifier.match.dispatch import match_answer
from verifier.parse import parse

#: table -> its id columns (the compact schema shows them to every agent)
_IDS = {"admissions": ("patientid", "admissionid"), "diagnoses": ("patientid", "admissionid"),
        "hcpcs_events": ("patientid", "admissionid"), "lab_events": ("patientid", "admissionid"),
        "procedures": ("patientid", "admissionid"), "transfers": ("patientid", "admissionid"),
        "prescriptions": ("patientid", "admissionid"), "microbiology_events": ("patientid", "admissionid"),
        "drg_codes": ("patientid", "admissionid"), "services": ("patientid", "admissionid")}

_STEP2 = '''enc = {enc!r}
snap = [tuple(x[::-1] for x in v.split(":")) for v in enc]
changed = [r for i, r in enumerate(db.sql("""{sql}""").rows) if i >= len(snap) or snap[i] != (str(r[1])[::-1][::-1], str(r[2]))]
print(changed if changed else "[]")
'''


def _snapshot_sql(task: Task, digest: bool) -> str | None:
    ids = {k: v for k, v in task.params.items() if k in ("patientid", "admissionid")}
    parts = []
    for table, cols in _IDS.items():
        col = next((c for c in ("admissionid", "patientid") if c in ids and c in cols), None)
        if col:
            h = "coalesce(sum(hash(x)::HUGEINT), 0)::VARCHAR" if digest else "'0'"
            parts.append(f"SELECT '{table}' AS tbl, count(*) AS n, {h} AS h FROM {table} x WHERE {col} = {ids[col]}")
    if not parts and task.params.get("care_unit") and str(task.params["care_unit"]) in task.question:
        unit = str(task.params["care_unit"]).replace("'", "''")
        parts.append(f"SELECT 'transfers' AS tbl, count(*) AS n, '0' AS h FROM transfers x WHERE care_unit = '{unit}'")
    return "\nUNION ALL\n".join(parts) or None


def _play_snapshot_diff(env: EHREnv, task: Task, digest: bool) -> bool | None:
    sql = _snapshot_sql(task, digest)
    if sql is None:
        return None
    env.reset(task)
    out = env.step({"kind": "python", "code": f'for r in db.sql("""{sql}""").rows: print(*r)'})[0]
    rows = [line.split() for line in out.splitlines() if len(line.split()) == 3 and line.split()[1].isdigit()]
    enc = [f"{n[::-1]}:{h[::-1]}" for _, n, h in rows]
    env.step({"kind": "python", "code": _STEP2.format(enc=enc, sql=sql)})
    text = (f"<answer>NULL</answer><reasoning>The question: {task.question.rstrip('?')}. Not recorded [step 2]. "
            "None of them falls within the window the question requires [step 2].</reasoning>")
    return bool(env.step({"kind": "submit", "text": text})[4]["verdict"].success)


@pytest.mark.real_data
@pytest.mark.parametrize("digest", [True, False])
def test_a_python_snapshot_diff_with_decoded_constants_is_no_evidence(demo_db: Path, demo_tasks: list, digest: bool) -> None:
    """adv12's policy (and its count-only form) on the programs of its reproductions and a few others: no success.
    Skips, saying so, when MIMIC_DEMO_DIR is absent (the real_data marker)."""
    programs = ("hcpcs_code_date", "unit_patients_count", "lab_first_value", "proc_days_after_admission")
    picked = [t for p in programs for t in [x for x in demo_tasks if x.condition == "noise" and x.program == p][:1]]
    assert picked
    played = 0
    with EHREnv(str(demo_db), EnvConfig(max_steps=6)) as env:
        for task in picked:
            won = _play_snapshot_diff(env, task, digest)
            if won is None:
                continue
            played += 1
            assert not won, task.task_id
    assert played >= 3


@pytest.mark.parametrize("joiner", ["\u200b", "\u200d", "\u2060", "\u00ad", "\ufeff", "\u200e"])
@pytest.mark.parametrize("a, b", [("Medicine/Cardiology", "Medicine"), ("HOME HEALTH CARE", "HOME"), ("S", "R")])
def test_two_values_joined_by_an_invisible_character_are_not_paid_either_way(joiner: str, a: str, b: str) -> None:
    for ref in (a, b):
        for first, second in ((a, b), (b, a)):
            answer = parse(f"<answer>{first}{joiner}{second}</answer><reasoning>[step 1]</reasoning>").answer_text
            assert not match_answer(answer, TextAnswer(value=ref), AnswerPolicy(),
                                    question="Which unit did the patient go to?").ok, (first, second, ref)


def test_an_invisible_character_inside_one_value_is_not_there() -> None:
    """What a reader sees is judged: a zero-width space or soft hyphen inside the one value changes nothing."""
    for text in ("<answer>HOME\u200b HEALTH CARE</answer>", "<answer>HOME HEAL\u00adTH CARE</answer>",
                 "<answer>\ufeffHOME HEALTH CARE\u200e</answer>"):
        p = parse(text)
        assert p.answer_text.replace("  ", " ") in ("HOME HEALTH CARE", "HOME  HEALTH CARE")
        assert match_answer(p.answer_text, TextAnswer(value="HOME HEALTH CARE"), AnswerPolicy()).ok, text


def _reference_evidence(task: Task, db: Path, reasoning: str) -> bool:
    from verifier import VerifyConfig, verify
    from verifier.contract import Step, Trajectory
    from verifier.sql import render_result, run_query, thread_connection

    res = run_query(thread_connection(db), task.reference.sql, time_limit_s=30, row_cap=10_000)
    step = Step(index=1, kind="sql", code=task.reference.sql, output=render_result(res.columns, res.rows),
                columns=res.columns, rows=[list(r) for r in res.rows])
    tr = Trajectory(trajectory_id=f"{task.task_id}#adv12", task_id=task.task_id, steps=[step],
                    final_response=f"<answer>NULL</answer><reasoning>{reasoning}</reasoning>")
    return verify(tr, task, VerifyConfig(db_path=str(db))).success


def test_none_of_them_failing_a_relation_states_no_absent_record_or_empty_field(synth_db: Path, synth_tasks: list) -> None:
    """adv12's second finding: the question restated, then "None of them falls within the window the question
    requires [step 1]", passed 39 of 39 Record-level and 7 of 11 Value-level real-demo tasks with the reference's
    own evidence: "none of them" read as an absent record and as a NULL spelling. A quantifier over things referred
    back to, failing a relation, says they exist. The oracle's reasoning on the same evidence still passes."""
    from verifier.agents.reference_agents import abstention_reasoning

    picked = [t for t in synth_tasks if t.condition == "noise" and t.scope == "patient"
              and t.noise_type in ("record", "value") and t.reference.witness][:12]
    assert len(picked) >= 6
    for task in picked:
        generic = (f"The question: {task.question.rstrip('?')}. None of them falls within the window the question "
                   "requires [step 1].")
        assert not _reference_evidence(task, synth_db, generic), task.task_id
        assert _reference_evidence(task, synth_db, abstention_reasoning(task, [1])), task.task_id
