"""Issue 4 acceptance: hand-made Noise tasks (fixtures/noise/) over the synthetic
hospital and the real demo; each trajectory gets exactly the verdict it names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from verifier import verify
from verifier.abstention import fixtures_dir, load_cases
from verifier.contract import Task, Trajectory, VerifyConfig

FIXTURES = fixtures_dir()


def _ids(name: str) -> list[str]:
    data = json.loads((FIXTURES / f"{name}.json").read_text())
    return [t["trajectory"]["trajectory_id"] for c in data["cases"] for t in c["trajectories"]]


@pytest.mark.parametrize("name", ["synthetic", "demo"])
def test_fixture_files_are_valid_contract_objects(name: str) -> None:
    """Raw fixture JSON validates against the Task and Trajectory models (placeholders are strings)."""
    data = json.loads((FIXTURES / f"{name}.json").read_text())
    assert data["cases"]
    for case in data["cases"]:
        task = Task.model_validate(case["task"])
        assert task.condition == "noise" and task.reference.witness
        for entry in case["trajectories"]:
            traj = Trajectory.model_validate(entry["trajectory"])
            assert traj.task_id == task.task_id
            assert entry["expect"]["success"] == (not entry["expect"]["reasons"])


@pytest.fixture(scope="module")
def synth_cases(synth_dir: Path) -> list[tuple[Task, list[dict[str, Any]]]]:
    from verifier.synthetic.gaps import read_gaps

    return load_cases("synthetic", read_gaps(synth_dir))


def _check(task: Task, entry: dict[str, Any], db: Path) -> None:
    traj = Trajectory.model_validate(entry["trajectory"])
    verdict = verify(traj, task, VerifyConfig(db_path=str(db), query_time_limit_s=10))
    got = [r.value for r in verdict.reasons]
    assert got == entry["expect"]["reasons"], (
        f"{traj.trajectory_id} ({entry['note']}): expected {entry['expect']['reasons']}, got {got}; "
        f"details: {json.dumps(verdict.details, default=str)[:2000]}"
    )
    assert verdict.success is entry["expect"]["success"]
    assert verdict.condition == "noise"
    json.dumps(verdict.details)  # details are plain JSON
    assert verdict.model_dump(mode="json")["reasons"] == entry["expect"]["reasons"]
    if verdict.success:
        assert verdict.details["evidence"]["used"], "a success names the evidence steps it used"


def _check_id(cases: list[tuple[Task, list[dict[str, Any]]]], traj_id: str, db: Path) -> None:
    found = [(task, e) for task, entries in cases for e in entries if e["trajectory"]["trajectory_id"] == traj_id]
    assert len(found) == 1, f"trajectory {traj_id}: {len(found)} fixtures"
    _check(found[0][0], found[0][1], db)


@pytest.mark.parametrize("traj_id", _ids("synthetic"))
def test_synthetic_noise_verdicts(synth_cases: list, synth_db: Path, traj_id: str) -> None:
    _check_id(synth_cases, traj_id, synth_db)


@pytest.mark.real_data
@pytest.mark.parametrize("traj_id", _ids("demo"))
def test_demo_noise_verdicts(demo_db: Path, traj_id: str) -> None:
    _check_id(load_cases("demo"), traj_id, demo_db)


@pytest.mark.real_data
def test_demo_fixture_premises_hold(demo_db: Path) -> None:
    """The fixture's claims about the demo are checked, not trusted: the lab is absent
    from the admission, the wrong admission has none either, and 3 patients hold the code."""
    from verifier.sql import run_query, thread_connection

    con = thread_connection(demo_db)
    q = lambda sql: run_query(con, sql, time_limit_s=10, row_cap=10).rows  # noqa: E731
    assert q("SELECT count(*) FROM lab_events WHERE admissionid = 22595853 AND itemid = 50813") == [(0,)]
    assert q("SELECT count(*) FROM lab_events WHERE admissionid = 22841357 AND itemid = 50813") == [(0,)]
    assert q("SELECT count(*) > 0 FROM lab_events WHERE admissionid = 22595853") == [(True,)]
    assert q("SELECT count(DISTINCT patientid) FROM diagnoses WHERE icd_code = '2752' AND icd_version = 9") == [(3,)]


_ATTEMPTS = [
    "INSERT INTO lab_events (lab_event_id) VALUES (1)", "UPDATE patients SET gender = 'X'", "DELETE FROM admissions",
    "CREATE TABLE x AS SELECT 1", "DROP TABLE lab_events", "COPY lab_events TO 'out.csv'", "ATTACH 'other.duckdb' AS o",
    "INSTALL httpfs", "LOAD httpfs", "SET threads = 1", "SELECT * FROM read_csv('/etc/passwd')",
    "SELECT * FROM read_parquet('x.parquet')", "SELECT * FROM glob('*')", "SELECT * FROM '/etc/hosts'", "CHECKPOINT",
]


def _hash(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("which", ["synthetic", "demo"])
def test_write_attempts_leave_the_database_byte_identical(request: pytest.FixtureRequest, which: str) -> None:
    """Acceptance: a batch of write / file-reading evidence steps, verified against the
    real built databases, is rejected before execution and changes no byte of the file."""
    db: Path = request.getfixturevalue("synth_db" if which == "synthetic" else "demo_db")
    task = Task.model_validate(json.loads((FIXTURES / "demo.json").read_text())["cases"][0]["task"])
    before = _hash(db)
    steps = [{"index": i, "kind": "sql", "code": sql, "output": "ok"} for i, sql in enumerate(_ATTEMPTS, 1)]
    traj = Trajectory.model_validate({"trajectory_id": "w", "task_id": task.task_id, "steps": steps,
                                      "final_response": "Answer: NULL\nReasoning: no Lactate in admission 22595853."})
    verdict = verify(traj, task, VerifyConfig(db_path=str(db)))
    assert [r.value for r in verdict.reasons] == ["EVIDENCE_REJECTED"]
    assert {q["status"] for q in verdict.details["evidence"]["queries"]} == {"rejected"}
    assert _hash(db) == before


HONEST_QUERIES = [
    "SELECT * FROM lab_events ORDER BY lab_event_id LIMIT 70",
    "SELECT * FROM lab_events",  # more rows than the display shows
    "SELECT itemid, avg(value_numeric) AS m, stddev(value_numeric) AS s FROM lab_events GROUP BY itemid",
    "SELECT admissionid, admission_time, death_time, marital_status FROM admissions",
    "SELECT * FROM microbiology_events LIMIT 20",
    "SELECT comments, value FROM lab_events WHERE comments IS NOT NULL LIMIT 30",
    "DESCRIBE lab_events",
    "SHOW TABLES",
    "SELECT count(*) AS n FROM chart_events",
]


@pytest.mark.parametrize("which", ["synthetic", "demo"])
def test_honest_environment_recordings_are_never_fabricated(request: pytest.FixtureRequest, which: str) -> None:
    """Episodes recorded by the environment (verifier.env) match their re-execution:
    whatever the types, NULLs, row counts and display truncation."""
    from verifier.abstention import output_matches
    from verifier.env import EHREnv
    from verifier.env.actions import sql, submit
    from verifier.sql import run_query, thread_connection

    db: Path = request.getfixturevalue("synth_db" if which == "synthetic" else "demo_db")
    task = load_cases("demo")[0][0]
    with EHREnv(str(db)) as env:
        env.reset(task)
        for q in HONEST_QUERIES:
            env.step(sql(q))
        traj = env.trajectory
        env.step(submit("Answer: NULL\nReasoning: nothing"))
    cfg = VerifyConfig(db_path=str(db))
    for step in traj.steps:
        assert step.ok, step.error
        res = run_query(thread_connection(db), step.code, time_limit_s=10, row_cap=cfg.row_cap)
        ok, why = output_matches(step, res, cfg.display)
        assert ok, f"{step.code}: {why}"
        # and as a chat-logged episode would keep it: text only, framed as the agent saw it
        text_only = step.model_copy(update={"columns": None, "rows": None, "output": f"[step {step.index}]\n{step.output}"})
        ok, why = output_matches(text_only, res, cfg.display)
        assert ok, f"{step.code} (text only): {why}"


def test_wrong_scope_never_counts_on_the_synthetic_hospital(synth_db: Path, synth_cases: list) -> None:
    """Property on the built hospital: a query on any other admission, or any other lab
    item of the right admission, never justifies the abstention (hypothesis draws them)."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from verifier.sql import render_result, run_query, thread_connection

    task = synth_cases[0][0]
    adm, item = task.reference.unmet_requirement.scope["admissionid"], task.reference.unmet_requirement.scope["itemid"]
    con = thread_connection(synth_db)
    admissions = [r[0] for r in run_query(con, "SELECT admissionid FROM admissions ORDER BY 1", time_limit_s=10, row_cap=10_000).rows]
    items = [r[0] for r in run_query(con, "SELECT DISTINCT itemid FROM lab_events ORDER BY 1", time_limit_s=10, row_cap=10_000).rows]
    final = f"Answer: NULL\nReasoning: No Potassium result is recorded for admission {adm} [step 1]."
    templates = [
        "SELECT count(*) AS n FROM lab_events WHERE admissionid = {a} AND itemid = {i}",
        "SELECT chart_time, value_numeric FROM lab_events WHERE admissionid = {a} AND itemid = {i} ORDER BY chart_time",
        "SELECT max(value_numeric) AS m FROM lab_events WHERE admissionid = {a} AND itemid = {i}",
    ]

    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
    @given(a=st.sampled_from(admissions), i=st.sampled_from(items), wrong=st.sampled_from(["admission", "item"]),
           template=st.sampled_from(templates))
    def check(a: int, i: int, wrong: str, template: str) -> None:
        if wrong == "admission":
            a, i = (a if a != adm else admissions[0] if admissions[0] != adm else admissions[1]), item
        else:
            a, i = adm, (i if i != item else items[0] if items[0] != item else items[1])
        sql = template.format(a=a, i=i)
        seen = run_query(con, sql, time_limit_s=10, row_cap=10_000)  # the output the agent saw
        steps = [{"index": 1, "kind": "sql", "code": sql, "output": render_result(seen.columns, seen.rows)}]
        traj = Trajectory.model_validate({"trajectory_id": "w", "task_id": task.task_id, "steps": steps, "final_response": final})
        v = verify(traj, task, VerifyConfig(db_path=str(synth_db)))
        assert not v.success and v.reasons[0].value in ("EVIDENCE_NOT_SENSITIVE", "EVIDENCE_DOES_NOT_SHOW_GAP"), (steps, v.reasons)

    check()
