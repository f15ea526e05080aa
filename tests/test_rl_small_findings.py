"""Issue 34, point 7: a binary ``--tasks`` file, ``rollout`` on a subset, and the database a
trajectory was played on (recorded, and checked by ``verify`` / ``score``). Synthetic hospital."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from batch_data import pick_pairs
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from verifier.agents.rollout import rollout
from verifier.cli import app
from verifier.contract import InputError, Task, Trajectory, VerifyConfig, read_jsonl
from verifier.database import database_fingerprint
from verifier.env import EHREnv
from verifier.verify import verify


def _run(*args):
    res = CliRunner().invoke(app, [str(a) for a in args])
    return res, " ".join(res.output.split())


@pytest.fixture(scope="module")
def small(synth_tasks: list[Task], tmp_path_factory) -> dict:
    d = tmp_path_factory.mktemp("rl_small")
    tasks = pick_pairs(synth_tasks, 2)  # two Clean-Noise pairs, file order clean, noise, clean, noise
    tasks_file = d / "tasks.jsonl"
    tasks_file.write_text("".join(t.model_dump_json() + "\n" for t in tasks), encoding="utf-8")
    return {"dir": d, "tasks": tasks, "tasks_file": tasks_file}


@pytest.mark.parametrize("command", ["score", "rollout", "make-tasks-free"])
def test_binary_tasks_file_is_a_typed_error_naming_it(small, synth_db: Path, command: str) -> None:
    binary = small["dir"] / "tasks.bin.jsonl"
    binary.write_bytes(b"\x85\xc7\x98PK\x03\x04\x00\x00\xff\xfe binary\n\x00\x01")
    if command == "score":
        args = ["score", "--tasks", binary, "--trajectories", small["tasks_file"], "--db", synth_db, "--out", small["dir"] / "o"]
    elif command == "rollout":
        args = ["rollout", "--agent", "oracle", "--tasks", binary, "--db", synth_db, "--out", small["dir"] / "t.jsonl"]
    else:
        args = ["serve-tools", "--tasks", binary, "--db", synth_db, "--out", small["dir"] / "m.jsonl"]
    res, text = _run(*args)
    assert res.exit_code == 2, (res.output, res.exception)
    assert "Traceback" not in res.output and text.startswith("error: ") and str(binary) in text and "line 1" in text
    assert "UTF-8" in text


@settings(max_examples=30, deadline=None)
@given(st.binary(min_size=1, max_size=64).filter(lambda b: not _utf8(b)))
def test_read_jsonl_of_non_utf8_bytes_raises_input_error(tmp_path_factory, data: bytes) -> None:
    from verifier.contract import load_tasks

    path = tmp_path_factory.mktemp("bin") / "tasks.jsonl"
    path.write_bytes(data)
    with pytest.raises(InputError) as err:
        load_tasks(path)
    assert str(path) in err.value.field  # a typed error naming the file (not a UnicodeDecodeError)
    first = data.split(b"\n")[0]
    if not _utf8(first):
        assert "UTF-8" in str(err.value) and "line 1" in err.value.field


def _utf8(b: bytes) -> bool:
    try:
        b.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def test_rollout_runs_a_subset(small, synth_db: Path) -> None:
    d, tasks = small["dir"], small["tasks"]
    out = d / "subset.jsonl"
    res, text = _run("rollout", "--agent", "oracle", "--tasks", small["tasks_file"], "--db", synth_db, "--out", out,
                     "--condition", "noise", "--limit", 1)
    assert res.exit_code == 0, (res.output, res.exception)
    noise = [t for t in tasks if t.condition == "noise"]
    assert [t.task_id for t in read_jsonl(out, Trajectory)] == [noise[0].task_id]
    res, _ = _run("rollout", "--agent", "oracle", "--tasks", small["tasks_file"], "--db", synth_db, "--out", out,
                  "--ids", f"{tasks[0].task_id},{noise[0].task_id}")
    assert res.exit_code == 0, (res.output, res.exception)
    assert [t.task_id for t in read_jsonl(out, Trajectory)] == [noise[0].task_id, tasks[0].task_id]  # resumed: one new
    split = tasks[0].split
    res, _ = _run("rollout", "--agent", "oracle", "--tasks", small["tasks_file"], "--db", synth_db, "--out", d / "split.jsonl",
                  "--split", split)
    assert res.exit_code == 0, (res.output, res.exception)
    assert {t.task_id for t in read_jsonl(d / "split.jsonl", Trajectory)} == {t.task_id for t in tasks if t.split == split}


@pytest.mark.parametrize(("option", "value", "needle"), [
    ("--ids", "no-such-task", "no-such-task"), ("--split", "dev", "--split"), ("--condition", "both", "--condition"),
    ("--limit", "0", "--limit"),
])
def test_rollout_subset_options_refuse_bad_values(small, synth_db: Path, option: str, value: str, needle: str) -> None:
    res, text = _run("rollout", "--agent", "oracle", "--tasks", small["tasks_file"], "--db", synth_db,
                     "--out", small["dir"] / "bad.jsonl", option, value)
    assert res.exit_code == 2 and text.startswith("error: ") and needle in text, res.output
    assert not (small["dir"] / "bad.jsonl").exists() or not (small["dir"] / "bad.jsonl").read_text().strip()


def test_trajectory_records_the_database_it_was_played_on(small, synth_db: Path) -> None:
    task = small["tasks"][0]
    env = EHREnv(str(synth_db))
    try:
        env.reset(task)
        _obs, _r, _te, _tr, info = env.step({"kind": "submit", "text": "<answer>NULL</answer>"})
    finally:
        env.close()
    traj = info["trajectory"]
    assert traj.metadata["db_fingerprint"] == database_fingerprint(str(synth_db))
    assert task.db_fingerprint is None or traj.metadata["db_fingerprint"] == task.db_fingerprint


def _played_elsewhere(small, synth_db: Path) -> tuple[Task, Trajectory]:
    """An oracle trajectory of a task as if played on another database (a task id both files share)."""
    task = small["tasks"][0]
    out = small["dir"] / "elsewhere.jsonl"
    if not out.exists():
        rollout("oracle", [task], synth_db, out)
    (traj,) = read_jsonl(out, Trajectory)
    assert verify(traj, task, VerifyConfig(db_path=str(synth_db))).success  # played on its own database: scored
    other = "db1:" + "0" * 16
    if task.db_fingerprint is None:  # tasks from make-tasks carry it; make the task say where it was built
        task = task.model_copy(update={"db_fingerprint": database_fingerprint(str(synth_db))})
    return task, traj.model_copy(update={"metadata": {**traj.metadata, "db_fingerprint": other}})


def test_verify_refuses_a_trajectory_played_on_another_database(small, synth_db: Path) -> None:
    task, traj = _played_elsewhere(small, synth_db)
    with pytest.raises(InputError) as err:
        verify(traj, task, VerifyConfig(db_path=str(synth_db)))
    assert err.value.field == "trajectory.metadata.db_fingerprint" and task.db_fingerprint in str(err.value)


def test_score_flags_a_trajectory_played_on_another_database(small, synth_db: Path) -> None:
    task, traj = _played_elsewhere(small, synth_db)
    d = small["dir"]
    (d / "t1.jsonl").write_text(task.model_dump_json() + "\n", encoding="utf-8")
    (d / "elsewhere2.jsonl").write_text(traj.model_dump_json() + "\n", encoding="utf-8")
    res, _ = _run("score", "--tasks", d / "t1.jsonl", "--trajectories", d / "elsewhere2.jsonl", "--db", synth_db, "--out", d / "scored")
    assert res.exit_code == 1, (res.output, res.exception)  # scored with an error record, not a verdict
    (record,) = [json.loads(line) for line in (d / "scored" / "verdicts.jsonl").read_text().splitlines() if line.strip()]
    assert "db_fingerprint" in json.dumps(record.get("error", {})) and "success" not in record, record
