"""Tasks built on one database, scored on another: a configuration error, never a verdict.

The failure kind: tasks of the synthetic hospital run or scored against another database (the
MIMIC-IV demo, a hospital of another seed) exited 0 and judged honest Noise abstentions as
fabricated or insensitive evidence. Now construction records the database fingerprint on each
task; ``verify`` raises ``InputError`` naming ``VerifyConfig.db_path`` and both fingerprints; batch
scoring turns each such item into an error record; ``score``/``rollout``/``export`` refuse before
starting, with exit code 2. Real data: the synthetic hospital (seed 0) and one of seed 1, plus the
real demo when ``MIMIC_DEMO_DIR`` exists.
"""

from __future__ import annotations

import json
import os
import pickle
import re
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import verifier.database._fingerprint as fpmod
from verifier import verify
from verifier.agents import make_agent
from verifier.agents.rollout import run_episode
from verifier.cli import app
from verifier.contract import InputError, Task, VerifyConfig
from verifier.database import build_database, check_tasks_database, compute_fingerprint, database_fingerprint
from verifier.env import EHREnv, EnvConfig
from verifier.scoring import verify_batch

FP = re.compile(r"^db1:[0-9a-f]{16}$")


@pytest.fixture(scope="module")
def other_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A synthetic hospital of another seed (1): same schema, other patients."""
    from verifier.synthetic import generate_hospital

    d = tmp_path_factory.mktemp("other_hospital")
    hospital = generate_hospital(d / "hospital", seed=1)
    out = d / "other.duckdb"
    build_database(hospital, out)
    return out


@pytest.fixture(scope="module")
def episodes(synth_db: Path, synth_tasks: list) -> list:
    """The oracle's episodes on a few Clean and Noise tasks of every noise level, on their own database."""
    picked, seen = [], set()
    for t in synth_tasks:
        key = (t.condition, t.noise_type, t.scope)
        if key not in seen:
            seen.add(key)
            picked.append(t)
    env = EHREnv(str(synth_db), EnvConfig(max_steps=10))
    try:
        agent = make_agent("oracle", tasks=synth_tasks)
        out = [(t, *run_episode(env, agent, t)) for t in picked]
    finally:
        env.close()
    assert {t.condition for t, _, _ in out} == {"clean", "noise"}
    return out


def _unstamped(task: Task) -> Task:
    return task.model_copy(update={"db_fingerprint": None})


# ---------------------------------------------------------------- the fingerprint
def test_fingerprint_is_short_stable_and_tells_hospitals_apart(synth_db: Path, other_db: Path, tmp_path: Path) -> None:
    a, b = compute_fingerprint(synth_db), compute_fingerprint(other_db)
    assert FP.match(a) and FP.match(b)
    assert a != b  # same schema, same table names: the row counts and key tables differ
    assert compute_fingerprint(synth_db) == a  # stable across reads
    copy = tmp_path / "elsewhere.duckdb"
    shutil.copyfile(synth_db, copy)
    assert compute_fingerprint(copy) == a  # the content's identity, not the file's path or time


def test_a_rebuild_of_the_same_sources_has_the_same_fingerprint(synth_dir: Path, synth_db: Path, tmp_path: Path) -> None:
    again = tmp_path / "rebuilt.duckdb"
    build_database(synth_dir, again)
    assert compute_fingerprint(again) == compute_fingerprint(synth_db)


def test_fingerprint_is_read_once_per_file_version(synth_db: Path, other_db: Path, tmp_path: Path, monkeypatch) -> None:
    db = tmp_path / "db.duckdb"
    shutil.copyfile(synth_db, db)
    calls = []
    real = fpmod.compute_fingerprint
    monkeypatch.setattr(fpmod, "compute_fingerprint", lambda p: calls.append(p) or real(p))
    first = database_fingerprint(db)
    for _ in range(50):
        assert database_fingerprint(db) == first
    assert len(calls) == 1  # after the first call: a stat and a dictionary lookup
    tmp = tmp_path / "new.duckdb"
    shutil.copyfile(other_db, tmp)
    os.replace(tmp, db)  # rebuilt in place, under the same name
    assert database_fingerprint(db) == compute_fingerprint(other_db) != first
    assert len(calls) == 2


def test_verify_reads_the_fingerprint_once_and_notices_a_rebuild(episodes: list, synth_db: Path, other_db: Path,
                                                                  tmp_path: Path, monkeypatch) -> None:
    db = tmp_path / "scored.duckdb"
    shutil.copyfile(synth_db, db)
    calls = []
    real = fpmod.compute_fingerprint
    monkeypatch.setattr(fpmod, "compute_fingerprint", lambda p: calls.append(p) or real(p))
    cfg = VerifyConfig(db_path=str(db))
    task, traj, _ = next(e for e in episodes if e[0].condition == "clean")
    for _ in range(50):
        assert verify(traj, task, cfg).success
    assert len(calls) == 1
    tmp = tmp_path / "new.duckdb"
    shutil.copyfile(other_db, tmp)
    os.replace(tmp, db)
    monkeypatch.setattr(fpmod, "RECENT_S", 0.0)  # the memo's second has passed
    with pytest.raises(InputError, match="built on another database"):
        verify(traj, task, cfg)
    assert len(calls) == 2


@pytest.fixture(scope="module")
def small_tables() -> dict:
    return {
        "patients": [(1, "F", 50), (2, "M", 61), (3, "F", 77), (4, "M", 45)],
        "admissions": [(10, 1, "2150-01-01 10:00:00"), (11, 2, "2151-03-02 08:30:00"), (12, 2, None)],
        "lab_events": [(100, 10, 50971, 4.1), (101, 11, 50971, 3.9)],
    }


def _write(path: Path, tables: dict, order: dict) -> Path:
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE patients (patientid BIGINT, gender VARCHAR, age INTEGER)")
    con.execute("CREATE TABLE admissions (admissionid BIGINT, patientid BIGINT, admission_time TIMESTAMP)")
    con.execute("CREATE TABLE lab_events (lab_event_id BIGINT, admissionid BIGINT, itemid BIGINT, valuenum DOUBLE)")
    for name, rows in tables.items():
        rows = [rows[i] for i in order.get(name, range(len(rows)))]
        con.executemany(f"INSERT INTO {name} VALUES ({', '.join('?' * len(rows[0]))})", rows)
    con.close()
    return path


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_fingerprint_ignores_row_order_and_sees_a_changed_key_row(small_tables: dict, tmp_path_factory, data) -> None:
    d = tmp_path_factory.mktemp("fp_prop")
    base = compute_fingerprint(_write(d / "a.duckdb", small_tables, {}))
    order = {k: data.draw(st.permutations(range(len(v))), label=k) for k, v in small_tables.items()}
    assert compute_fingerprint(_write(d / "b.duckdb", small_tables, order)) == base
    table = data.draw(st.sampled_from(["patients", "admissions"]), label="changed table")
    i = data.draw(st.integers(0, len(small_tables[table]) - 1), label="row")
    changed = {k: list(v) for k, v in small_tables.items()}
    row = list(changed[table][i])
    row[0] = row[0] + 1000  # another identifier: same counts, same schema
    changed[table][i] = tuple(row)
    assert compute_fingerprint(_write(d / "c.duckdb", changed, {})) != base


# ---------------------------------------------------------------- construction and the contract
def test_make_tasks_records_the_database_fingerprint(synth_tasks: list, synth_db: Path) -> None:
    fp = database_fingerprint(synth_db)
    assert synth_tasks and all(t.db_fingerprint == fp for t in synth_tasks)
    assert json.loads(synth_tasks[0].model_dump_json())["db_fingerprint"] == fp
    assert pickle.loads(pickle.dumps(synth_tasks[0])) == synth_tasks[0]


def test_task_files_without_the_field_stay_valid_and_a_bad_one_is_named(synth_tasks: list) -> None:
    data = json.loads(synth_tasks[0].model_dump_json())
    del data["db_fingerprint"]
    assert Task.model_validate(data).db_fingerprint is None
    from verifier.contract import validate

    with pytest.raises(InputError, match="db_fingerprint"):
        validate(Task, {**data, "db_fingerprint": "not a fingerprint"})
    schema = Task.model_json_schema()
    assert "db_fingerprint" in schema["properties"] and "db_fingerprint" not in schema.get("required", [])


# ---------------------------------------------------------------- verify
def test_verify_refuses_a_task_of_another_database(episodes: list, synth_db: Path, other_db: Path) -> None:
    theirs, ours = database_fingerprint(other_db), database_fingerprint(synth_db)
    for task, traj, _ in episodes:
        with pytest.raises(InputError) as err:
            verify(traj, task, VerifyConfig(db_path=str(other_db)))
        assert err.value.field == "VerifyConfig.db_path" and err.value.value == str(other_db)
        assert ours in err.value.message and theirs in err.value.message
        assert "built on another database" in err.value.message and "make-tasks" in err.value.message


def test_verify_on_the_tasks_own_database_is_unchanged(episodes: list, synth_db: Path) -> None:
    cfg = VerifyConfig(db_path=str(synth_db))
    for task, traj, env_verdict in episodes:
        v = verify(traj, task, cfg)
        assert v.success, (task.task_id, v.reasons)
        assert v.model_dump() == verify(traj, _unstamped(task), cfg).model_dump()
        assert v.model_dump(exclude={"details"}) == env_verdict.model_dump(exclude={"details"})


def test_tasks_without_a_fingerprint_are_still_scored(episodes: list, other_db: Path) -> None:
    cfg = VerifyConfig(db_path=str(other_db))
    for task, traj, _ in episodes:
        v = verify(traj, _unstamped(task), cfg)  # unchecked: a verdict, whatever it is
        assert v.task_id == task.task_id


def test_a_clean_task_without_a_configured_database_needs_none(episodes: list, monkeypatch) -> None:
    monkeypatch.delenv("EHR_VERIFIER_DB", raising=False)
    clean = [(t, tr) for t, tr, _ in episodes if t.condition == "clean"]
    for task, traj in clean:
        assert verify(traj, task).success
        assert verify(traj, task, VerifyConfig(db_path="/nonexistent/x.duckdb")).success


def test_the_environment_variable_database_is_checked_too(episodes: list, other_db: Path, monkeypatch) -> None:
    monkeypatch.setenv("EHR_VERIFIER_DB", str(other_db))
    task, traj, _ = episodes[0]
    with pytest.raises(InputError, match="VerifyConfig.db_path"):
        verify(traj, task, VerifyConfig())


def test_verify_stays_picklable_and_thread_safe(episodes: list, synth_db: Path, other_db: Path) -> None:
    assert pickle.loads(pickle.dumps(verify)) is verify
    good, bad = VerifyConfig(db_path=str(synth_db)), VerifyConfig(db_path=str(other_db))
    serial = [verify(tr, t, good).model_dump() for t, tr, _ in episodes]

    def run(i: int):
        t, tr, _ = episodes[i % len(episodes)]
        try:
            verify(tr, t, bad)
            return "no error"
        except InputError as exc:
            refused = exc.field
        return verify(tr, t, good).model_dump(), refused

    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(run, range(4 * len(episodes))))
    for i, (dump, refused) in enumerate(got):
        assert refused == "VerifyConfig.db_path"
        assert dump == serial[i % len(episodes)]


# ---------------------------------------------------------------- batch scoring
@pytest.mark.parametrize("workers", [1, 2])
def test_batch_gives_an_error_record_per_item_of_another_database(episodes: list, synth_db: Path, workers: int) -> None:
    """Half the tasks carry a foreign fingerprint: each of their items is an error record, the rest
    are verdicts, one record per input item, in order."""
    foreign = "db1:" + "0" * 16
    tasks, lines, expect_error = {}, [], []
    for i, (task, traj, _) in enumerate(episodes):
        wrong = i % 2 == 0
        tasks[task.task_id] = task.model_copy(update={"db_fingerprint": foreign}) if wrong else task
        lines.append(traj.model_dump_json())
        expect_error.append(wrong)
    records = list(verify_batch(lines, tasks, synth_db, workers=workers))
    assert len(records) == len(lines)
    for rec, wrong, (task, _, _) in zip(records, expect_error, episodes):
        assert rec["task_id"] == task.task_id
        if wrong:
            assert rec["error"]["type"] == "InputError" and rec["error"]["field"] == "VerifyConfig.db_path"
            assert foreign in rec["error"]["message"] and database_fingerprint(synth_db) in rec["error"]["message"]
        else:
            assert "error" not in rec and rec["success"], rec


# ---------------------------------------------------------------- the command line
@pytest.fixture(scope="module")
def files(episodes: list, synth_tasks: list, tmp_path_factory: pytest.TempPathFactory) -> dict:
    d = tmp_path_factory.mktemp("fp_cli")
    tasks = d / "tasks.jsonl"
    tasks.write_text("".join(t.model_dump_json() + "\n" for t in synth_tasks))
    old = d / "old_tasks.jsonl"  # written before the field existed
    old.write_text("".join(json.dumps({k: v for k, v in json.loads(t.model_dump_json()).items() if k != "db_fingerprint"}) + "\n"
                           for t in synth_tasks))
    trajs = d / "trajectories.jsonl"
    trajs.write_text("".join(tr.model_dump_json() + "\n" for _, tr, _ in episodes))
    return {"dir": d, "tasks": tasks, "old": old, "trajs": trajs, "n": len(synth_tasks)}


def _run(*args) -> tuple:
    res = CliRunner().invoke(app, [str(a) for a in args])
    return res, " ".join(res.output.split())


def _refused(res, text: str, files: dict, db: Path) -> None:
    assert res.exit_code == 2, (res.exit_code, res.output, res.exception)
    assert isinstance(res.exception, SystemExit) and "Traceback" not in res.output
    assert text.startswith("error: --db=") and str(db) in text
    assert f"{files['n']} of {files['n']} tasks were built on another database" in text
    assert database_fingerprint(db) in text and "make-tasks" in text


def test_score_refuses_another_database_before_scoring(files: dict, other_db: Path) -> None:
    out = files["dir"] / "scored_other"
    res, text = _run("score", "--tasks", files["tasks"], "--trajectories", files["trajs"], "--db", other_db, "--out", out)
    _refused(res, text, files, other_db)
    assert not out.exists()  # nothing started


def test_score_on_the_right_database_and_old_tasks_anywhere(files: dict, synth_db: Path, other_db: Path) -> None:
    out = files["dir"] / "scored"
    res, _ = _run("score", "--tasks", files["tasks"], "--trajectories", files["trajs"], "--db", synth_db, "--out", out)
    assert res.exit_code == 0, res.output
    recs = [json.loads(x) for x in (out / "verdicts.jsonl").read_text().splitlines()]
    assert recs and all(r["success"] for r in recs)
    out2 = files["dir"] / "scored_old"  # a task file without fingerprints is not checked (and is scored)
    res, _ = _run("score", "--tasks", files["old"], "--trajectories", files["trajs"], "--db", other_db, "--out", out2)
    assert res.exit_code in (0, 1) and (out2 / "verdicts.jsonl").is_file(), res.output


def test_rollout_refuses_another_database_before_any_episode(files: dict, other_db: Path) -> None:
    out = files["dir"] / "rollout.jsonl"
    res, text = _run("rollout", "--agent", "oracle", "--tasks", files["tasks"], "--db", other_db, "--out", out)
    _refused(res, text, files, other_db)
    assert not out.exists()
    from verifier.agents.rollout import rollout

    with pytest.raises(InputError, match="db_path"):
        rollout("oracle", [Task.model_validate_json(x) for x in files["tasks"].read_text().splitlines()], other_db, out)
    assert not out.exists()


def test_export_refuses_another_database(files: dict, other_db: Path) -> None:
    out = files["dir"] / "sft.jsonl"
    res, text = _run("export", "--kind", "sft", "--tasks", files["tasks"], "--trajectories", files["trajs"],
                     "--db", other_db, "--out", out)
    _refused(res, text, files, other_db)
    assert not out.exists()


def test_serve_tools_refuses_another_database_before_serving(files: dict, other_db: Path) -> None:
    out = files["dir"] / "served.jsonl"
    res, text = _run("serve-tools", "--tasks", files["tasks"], "--db", other_db, "--out", out)
    _refused(res, text, files, other_db)
    assert not out.exists()


def test_env_reset_refuses_a_task_of_another_database(synth_tasks: list, synth_db: Path, other_db: Path) -> None:
    task = next(t for t in synth_tasks if t.condition == "noise")
    env = EHREnv(str(other_db))
    try:
        with pytest.raises(InputError, match="1 of 1 tasks were built on another database") as err:
            env.reset(task)
        assert err.value.field == "db_path" and database_fingerprint(other_db) in str(err.value)
        assert task.db_fingerprint in str(err.value) and env.task is None and env.done  # no episode started
        obs, _ = env.reset(_unstamped(task))  # a task without the field is not checked
        assert task.question in obs
    finally:
        env.close()
    env = EHREnv(str(synth_db))
    try:
        obs, _ = env.reset(task)  # its own database: unchanged
        assert task.question in obs and not env.done
    finally:
        env.close()


def test_check_counts_only_the_tasks_that_differ(synth_tasks: list, synth_db: Path) -> None:
    mixed = [t.model_copy(update={"db_fingerprint": "db1:" + "f" * 16}) if i < 3 else t for i, t in enumerate(synth_tasks)]
    with pytest.raises(InputError, match=rf"3 of {len(mixed)} tasks were built on another database") as err:
        check_tasks_database(mixed, synth_db)
    assert err.value.field == "--db"
    assert check_tasks_database(synth_tasks, synth_db) == len(synth_tasks)
    assert check_tasks_database([_unstamped(t) for t in synth_tasks], "/nonexistent.duckdb") == 0


# ---------------------------------------------------------------- the real demo
def test_synthetic_tasks_are_refused_on_the_real_demo(demo_db: Path, synth_tasks: list, synth_db: Path) -> None:
    assert database_fingerprint(demo_db) != database_fingerprint(synth_db)
    with pytest.raises(InputError, match="built on another database"):
        check_tasks_database(synth_tasks, demo_db)
