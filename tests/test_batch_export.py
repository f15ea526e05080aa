"""Training-data export (SFT chat examples, DPO pairs) from scored real episodes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from batch_data import episodes, pick_pairs

from verifier.contract import Task, Trajectory, from_chat_messages
from verifier.scoring import export_records, verdict_index, verify_batch


@pytest.fixture(scope="module")
def scored(demo_db: Path, demo_tasks: list[Task]):
    tasks = pick_pairs(demo_tasks, 8)
    lines = episodes(demo_db, tasks)
    trajs = [Trajectory.model_validate_json(l) for l in lines]
    verdicts = verdict_index(verify_batch(lines, tasks, demo_db, backend="serial"))
    return {t.task_id: t for t in tasks}, trajs, verdicts


def test_sft_exports_exactly_the_successes_as_chat_without_the_reference(scored):
    tasks, trajs, verdicts = scored
    records = list(export_records("sft", trajs, verdicts, tasks, schema="TABLE patients(...)"))
    wins = [t for t in trajs if verdicts[t.trajectory_id]["success"]]
    assert [r["trajectory_id"] for r in records] == [t.trajectory_id for t in wins] and records
    for rec, traj in zip(records, wins):
        assert set(rec) == {"messages", "tools", "task_id", "trajectory_id", "condition"}
        task = tasks[traj.task_id]
        first = rec["messages"][0]
        assert first["role"] == "user" and task.question in first["content"] and "TABLE patients" in first["content"]
        text = json.dumps(rec, default=str)
        assert '"reference"' not in text and '"witness"' not in text and '"answer_policy"' not in text
        if task.reference.unmet_requirement is not None:
            for w in task.reference.witness:  # witness rows never travel
                assert json.dumps(w.rows[0], default=str) not in first["content"]
        back = from_chat_messages(rec["messages"], trajectory_id="x", task_id=traj.task_id)
        assert [(s.kind, s.code) for s in back.steps] == [(s.kind, s.code) for s in traj.steps]
        assert back.final_response == traj.final_response
        calls = [m for m in rec["messages"] if m.get("tool_calls")]
        assert all(c["tool_calls"][0]["function"]["name"] in ("run_sql", "run_python") for c in calls)


def test_dpo_pairs_a_success_with_a_failure_of_the_same_task(scored):
    tasks, trajs, verdicts = scored
    pairs = list(export_records("dpo", trajs, verdicts, tasks))
    expected = 0
    for task_id in tasks:
        w = sum(1 for t in trajs if t.task_id == task_id and verdicts[t.trajectory_id]["success"])
        l = sum(1 for t in trajs if t.task_id == task_id and not verdicts[t.trajectory_id]["success"])
        expected += min(w, l)
    assert len(pairs) == expected > 0
    for p in pairs:
        assert verdicts[p["chosen_id"]]["success"] and not verdicts[p["rejected_id"]]["success"]
        assert verdicts[p["chosen_id"]]["task_id"] == verdicts[p["rejected_id"]]["task_id"] == p["task_id"]
        assert p["prompt"][0]["role"] == "user" and p["chosen"][-1]["role"] == "assistant"
    capped = list(export_records("dpo", trajs, verdicts, tasks, max_pairs_per_task=1))
    assert len(capped) == len({p["task_id"] for p in pairs})
    with pytest.raises(ValueError):
        list(export_records("kto", trajs, verdicts, tasks))


def test_export_command_from_verdicts_file(scored, demo_db: Path, tmp_path: Path):
    from typer.testing import CliRunner

    from verifier.cli import app

    tasks, trajs, verdicts = scored
    tasks_file, traj_file, verd_file = tmp_path / "t.jsonl", tmp_path / "tr.jsonl", tmp_path / "v.jsonl"
    tasks_file.write_text("".join(t.model_dump_json() + "\n" for t in tasks.values()))
    traj_file.write_text("".join(t.model_dump_json() + "\n" for t in trajs) + "{broken\n")
    verd_file.write_text("".join(json.dumps(v) + "\n" for v in verdicts.values()))
    for kind in ("sft", "dpo"):
        out = tmp_path / f"{kind}.jsonl"
        res = CliRunner().invoke(app, ["export", "--kind", kind, "--tasks", str(tasks_file), "--trajectories", str(traj_file),
                                       "--verdicts", str(verd_file), "--out", str(out)])
        # the broken line is reported and the run exits 1, after writing every usable record
        assert res.exit_code == 1 and f"line {len(trajs) + 1}" in " ".join(res.output.split()), res.output
        lines = out.read_text().splitlines()
        assert lines and len(lines) == len(list(export_records(kind, trajs, verdicts, tasks)))
    res = CliRunner().invoke(app, ["export", "--kind", "sft", "--tasks", str(tasks_file), "--trajectories", str(traj_file), "--out", str(tmp_path / "x")])
    assert res.exit_code == 2 and "--verdicts" in res.output


def test_duplicate_trajectory_ids_fail_naming_id_and_line(scored, tmp_path: Path):
    """Two agents' rollouts concatenated (ids ``<task_id>#0`` collide): a typed error, never a silent 0-record export."""
    from typer.testing import CliRunner

    from verifier.cli import app
    from verifier.contract import InputError
    from verifier.scoring import export_file

    tasks, trajs, verdicts = scored
    first_agent = trajs[0].trajectory_id.split(":")[0]
    renamed = [t.model_copy(update={"trajectory_id": f"{t.task_id}#0"}) for t in trajs]
    dup_at = next(i for i, t in enumerate(trajs) if not t.trajectory_id.startswith(first_agent + ":"))  # second agent's first line
    dup_id = renamed[dup_at].trajectory_id
    tasks_file, traj_file, verd_file = tmp_path / "t.jsonl", tmp_path / "tr.jsonl", tmp_path / "v.jsonl"
    tasks_file.write_text("".join(t.model_dump_json() + "\n" for t in tasks.values()))
    traj_file.write_text("".join(t.model_dump_json() + "\n" for t in renamed))
    renamed_verdicts = [dict(verdicts[t.trajectory_id], trajectory_id=r.trajectory_id) for t, r in zip(trajs, renamed)]
    verd_file.write_text("".join(json.dumps(v) + "\n" for v in renamed_verdicts))

    with pytest.raises(InputError, match="duplicated trajectory_id") as exc:
        verdict_index(renamed_verdicts)
    assert exc.value.value == dup_id and exc.value.field == f"trajectory {dup_at + 1}: trajectory_id"
    assert "--id-prefix" in exc.value.message
    first_only = verdict_index(renamed_verdicts[:dup_at])
    out = tmp_path / "sft.jsonl"
    out.write_text("previous\n")
    with pytest.raises(InputError, match=r"first at line 1\b") as exc:
        export_file("sft", traj_file, tasks, out, verdicts=first_only)
    assert exc.value.value == dup_id and exc.value.field == f"{traj_file}:line {dup_at + 1}: trajectory_id"
    assert out.read_text() == "previous\n" and sorted(p.name for p in tmp_path.iterdir()) == ["sft.jsonl", "t.jsonl", "tr.jsonl", "v.jsonl"]

    for kind in ("sft", "dpo"):
        res = CliRunner().invoke(app, ["export", "--kind", kind, "--tasks", str(tasks_file), "--trajectories", str(traj_file),
                                       "--verdicts", str(verd_file), "--out", str(tmp_path / f"{kind}.out")])
        text = " ".join(res.output.split())
        assert res.exit_code == 2 and isinstance(res.exception, SystemExit), res.output
        assert "Traceback" not in res.output and "duplicated trajectory_id" in text and repr(dup_id) in text
        assert not (tmp_path / f"{kind}.out").exists()
