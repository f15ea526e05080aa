"""Export refuses inputs that would silently produce wrong training data (QA M4, M6, L6b).

Real rollouts of the reference agents on real demo tasks, scored for real,
with the ids every reference rollout gets (``<task_id>#0``): one agent's
trajectories with its own verdicts export; with another agent's verdicts the
export is refused wherever those verdicts differ from the trajectory's own.
"""

from __future__ import annotations

import codecs
import json
from pathlib import Path

import pytest
from batch_data import AGENTS, episodes, pick_pairs

from verifier.contract import InputError, Task, Trajectory
from verifier.scoring import export_file, read_verdicts, verdict_index, verify_batch

ALL_AGENTS = AGENTS + ("fabricator",)


@pytest.fixture(scope="module")
def rollouts(demo_db: Path, demo_tasks: list[Task], tmp_path_factory: pytest.TempPathFactory):
    """Per agent: trajectories file and verdicts file, ids ``<task_id>#0`` as ``ehr-verifier rollout`` writes them."""
    tasks = pick_pairs(demo_tasks, 8)
    lines = episodes(demo_db, tasks) + episodes(demo_db, tasks, ("fabricator",))
    records = list(verify_batch(lines, tasks, demo_db, backend="serial"))
    folder = tmp_path_factory.mktemp("export_robust")
    files: dict[str, tuple[Path, Path, list[dict]]] = {}
    for agent in ALL_AGENTS:
        trajs, verdicts = [], []
        for line, rec in zip(lines, records):
            traj = Trajectory.model_validate_json(line)
            if traj.trajectory_id.split(":")[0] != agent:
                continue
            tid = f"{traj.task_id}#0"
            trajs.append(traj.model_copy(update={"trajectory_id": tid}).model_dump_json())
            verdicts.append(dict(rec, trajectory_id=tid))
        tf, vf = folder / f"{agent}.traj.jsonl", folder / f"{agent}.verdicts.jsonl"
        tf.write_text("".join(t + "\n" for t in trajs))
        vf.write_text("".join(json.dumps(v) + "\n" for v in verdicts))
        files[agent] = (tf, vf, verdicts)
    return {t.task_id: t for t in tasks}, files


def _same_verdict(a: dict, b: dict) -> bool:
    drop = ("trajectory_id",)
    return {k: v for k, v in a.items() if k not in drop} == {k: v for k, v in b.items() if k not in drop}


def test_every_agent_exports_with_its_own_verdicts(rollouts, tmp_path: Path):
    tasks, files = rollouts
    for agent, (tf, vf, verdicts) in files.items():
        index = verdict_index(read_verdicts(vf))
        n_sft = export_file("sft", tf, tasks, tmp_path / f"{agent}.sft", verdicts=index)
        assert n_sft == sum(1 for v in verdicts if v.get("success")), agent
        export_file("dpo", tf, tasks, tmp_path / f"{agent}.dpo", verdicts=index)
    assert export_file("sft", files["oracle"][0], tasks, tmp_path / "o.sft", verdicts=verdict_index(read_verdicts(files["oracle"][1]))) > 0


def test_another_agents_verdicts_are_refused_where_they_differ(rollouts, tmp_path: Path):
    """M4: always-null trajectories with answer-anyway verdicts gave Clean 'successes' answering NULL."""
    tasks, files = rollouts
    refused = 0
    for a in ALL_AGENTS:
        tf, _, own = files[a]
        traj_ids = [json.loads(line)["trajectory_id"] for line in tf.read_text().splitlines()]
        for b in ALL_AGENTS:
            if a == b:
                continue
            other = files[b][2]
            differ = [i for i, (x, y) in enumerate(zip(own, other)) if not _same_verdict(x, y)]
            out = tmp_path / f"{a}-{b}.sft"
            if not differ:  # the other agent's verdicts are this agent's verdicts: nothing wrong to refuse
                export_file("sft", tf, tasks, out, verdicts=verdict_index(other))
                continue
            for kind in ("sft", "dpo"):
                with pytest.raises(InputError, match="does not belong to this trajectory") as exc:
                    export_file(kind, tf, tasks, out, verdicts=verdict_index(other))
                line = int(exc.value.field.split(":line ")[1].split(":")[0])
                assert exc.value.field == f"{tf}:line {line}: trajectory_id", (a, b)
                assert exc.value.value == traj_ids[line - 1]
                assert line - 1 in differ, (a, b, line)  # refused only where the verdict is not this trajectory's
                assert not out.exists()
            refused += 1
    assert refused >= len(ALL_AGENTS) * (len(ALL_AGENTS) - 1) - 2  # nearly every ordered pair of agents differs


def test_m4_cli_refuses_always_null_with_answer_anyway_verdicts(rollouts, tmp_path: Path):
    from typer.testing import CliRunner

    from verifier.cli import app

    tasks, files = rollouts
    tasks_file = tmp_path / "tasks.jsonl"
    tasks_file.write_text("".join(t.model_dump_json() + "\n" for t in tasks.values()))
    out = tmp_path / "sft.jsonl"
    res = CliRunner().invoke(app, ["export", "--kind", "sft", "--tasks", str(tasks_file), "--trajectories", str(files["always-null"][0]),
                                   "--verdicts", str(files["answer-anyway"][1]), "--out", str(out)])
    text = " ".join(res.output.split())
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output
    assert f"{files['always-null'][0]}:line" in text and "does not belong to this trajectory" in text
    assert not out.exists()


def test_verdict_of_another_task_or_condition_is_refused(rollouts, tmp_path: Path):
    tasks, files = rollouts
    tf, _, own = files["oracle"]
    moved = [dict(own[0], task_id=own[1]["task_id"])] + own[1:]
    with pytest.raises(InputError, match="does not belong to this trajectory") as exc:
        export_file("sft", tf, tasks, tmp_path / "x", verdicts=verdict_index(moved))
    assert exc.value.field == f"{tf}:line 1: trajectory_id" and "task_id" in exc.value.message
    flipped = [dict(own[0], condition="noise" if own[0]["condition"] == "clean" else "clean")] + own[1:]
    with pytest.raises(InputError, match="condition"):
        export_file("sft", tf, tasks, tmp_path / "x", verdicts=verdict_index(flipped))
    # a hand-written verdict that records nothing to compare is accepted
    bare = [{"trajectory_id": v["trajectory_id"], "task_id": v["task_id"], "success": v["success"]} for v in own]
    assert export_file("sft", tf, tasks, tmp_path / "x", verdicts=verdict_index(bare)) == sum(v["success"] for v in own)


# ------------------------------------------------------------------ M6: encodings
def _bad_utf8_line(tf: Path, tid: str) -> bytes:
    """A real trajectory line whose final response holds a byte that is not UTF-8."""
    first = json.loads(tf.read_text().splitlines()[0])
    first["trajectory_id"] = tid
    return json.dumps(first).encode().replace(b"<answer>", b"<answer>\xff", 1)


def test_non_utf8_trajectory_line_is_skipped_and_bom_ignored(rollouts, tmp_path: Path):
    tasks, files = rollouts
    tf, vf, own = files["oracle"]
    index = verdict_index(read_verdicts(vf))
    expected = export_file("sft", tf, tasks, tmp_path / "plain.sft", verdicts=index)
    lines = tf.read_bytes().splitlines(keepends=True)
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_bytes(codecs.BOM_UTF8 + lines[0] + _bad_utf8_line(tf, "bad#0") + b"\n" + b"".join(lines[1:]))
    assert own[0]["success"]  # the BOM line is a success: it must be exported
    n = export_file("sft", mixed, tasks, tmp_path / "mixed.sft", verdicts=index)
    assert n == expected
    assert (tmp_path / "mixed.sft").read_bytes() == (tmp_path / "plain.sft").read_bytes()


def test_non_utf8_trajectory_line_with_a_verdict_is_refused(rollouts, tmp_path: Path):
    tasks, files = rollouts
    tf, _, own = files["oracle"]
    tid = own[0]["trajectory_id"]
    lines = tf.read_bytes().splitlines(keepends=True)
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"".join(lines[1:3]) + _bad_utf8_line(tf, tid) + b"\n")
    out = tmp_path / "o.sft"
    with pytest.raises(InputError, match=r"not valid UTF-8 .* pairs with this line") as exc:
        export_file("sft", bad, tasks, out, verdicts=verdict_index(own))
    assert exc.value.field == f"{bad}:line 3" and not out.exists()


def test_read_verdicts_bom_and_non_utf8(rollouts, tmp_path: Path):
    _, files = rollouts
    _, vf, own = files["oracle"]
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(codecs.BOM_UTF8 + vf.read_bytes())
    assert list(read_verdicts(bom)) == own
    lines = vf.read_bytes().splitlines(keepends=True)
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(lines[0] + lines[1].replace(b'"task_id":', b'"task_id\xff":', 1) + b"".join(lines[2:]))
    with pytest.raises(InputError, match="UTF-8") as exc:
        list(read_verdicts(bad))
    assert exc.value.field == f"{bad}:line 2"


def test_export_cli_non_utf8_verdicts_fails_cleanly(rollouts, tmp_path: Path):
    from typer.testing import CliRunner

    from verifier.cli import app

    tasks, files = rollouts
    tf, vf, _ = files["oracle"]
    tasks_file = tmp_path / "tasks.jsonl"
    tasks_file.write_text("".join(t.model_dump_json() + "\n" for t in tasks.values()))
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"\xfe" + vf.read_bytes())
    res = CliRunner().invoke(app, ["export", "--kind", "sft", "--tasks", str(tasks_file), "--trajectories", str(tf),
                                   "--verdicts", str(bad), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "Traceback" not in res.output and "UTF-8" in res.output, res.output
    assert f"{bad}:line 1" in " ".join(res.output.split())


# ------------------------------------------------------------------ L6b
@pytest.mark.parametrize("value", [0, -1])
def test_max_pairs_per_task_below_one_is_refused(rollouts, tmp_path: Path, value: int):
    from typer.testing import CliRunner

    from verifier.cli import app

    tasks, files = rollouts
    tf, vf, _ = files["oracle"]
    out = tmp_path / "dpo.jsonl"
    with pytest.raises(InputError, match="must be >= 1") as exc:
        export_file("dpo", tf, tasks, out, verdicts=verdict_index(read_verdicts(vf)), max_pairs_per_task=value)
    assert exc.value.field == "max_pairs_per_task" and exc.value.value == value and not out.exists()
    tasks_file = tmp_path / "tasks.jsonl"
    tasks_file.write_text("".join(t.model_dump_json() + "\n" for t in tasks.values()))
    res = CliRunner().invoke(app, ["export", "--kind", "dpo", "--tasks", str(tasks_file), "--trajectories", str(tf),
                                   "--verdicts", str(vf), "--out", str(out), "--max-pairs-per-task", str(value)])
    assert res.exit_code == 2 and f"max_pairs_per_task={value}" in res.output and not out.exists(), res.output


def test_verdict_from_another_parser_version_still_pairs(rollouts, tmp_path: Path):
    """A correct pairing whose verdict an older parser wrote (Answer kept with its Markdown) is not refused."""
    from verifier.scoring import pairing_mismatch

    tasks, files = rollouts
    tf, _, own = files["answer-anyway"]
    trajs = [Trajectory.model_validate_json(line) for line in tf.read_text().splitlines()]
    answered = [(t, v) for t, v in zip(trajs, own) if not v["abstained"] and v["details"]["parse"]["answer"]]
    assert answered
    for traj, v in answered:
        older = dict(v, details=dict(v["details"], parse=dict(v["details"]["parse"], answer=f"**{v['details']['parse']['answer']}**.")))
        assert pairing_mismatch(traj, older, tasks[traj.task_id]) is None
        assert pairing_mismatch(traj, dict(older, abstained=True), tasks[traj.task_id]) is not None
