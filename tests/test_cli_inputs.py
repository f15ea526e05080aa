"""CLI findings of a fresh-user QA pass: empty inputs, output paths checked first, export's unusable
lines, and ``rollout --id-prefix`` for combining agents' files into a DPO export."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from batch_data import pick_pairs
from typer.testing import CliRunner

from verifier.cli import app
from verifier.contract import Task, Trajectory, read_jsonl


def _run(*args):
    res = CliRunner().invoke(app, [str(a) for a in args])
    return res, " ".join(res.output.split())


def _fails(res, text: str, *needles: str) -> None:
    assert res.exit_code == 2, (res.exit_code, res.output, res.exception)
    assert "Traceback" not in res.output and text.startswith("error: "), res.output
    for needle in needles:
        assert needle in text, (needle, res.output)


@pytest.fixture(scope="module")
def small(synth_tasks: list[Task], tmp_path_factory) -> dict:
    d = tmp_path_factory.mktemp("cli_inputs")
    tasks = pick_pairs(synth_tasks, 1)
    tasks_file, empty = d / "tasks.jsonl", d / "empty.jsonl"
    tasks_file.write_text("".join(t.model_dump_json() + "\n" for t in tasks), encoding="utf-8")
    empty.write_text("\n", encoding="utf-8")
    return {"dir": d, "tasks": tasks, "tasks_file": tasks_file, "empty": empty}


def test_empty_tasks_file_is_refused(small, synth_db: Path) -> None:
    d, empty = small["dir"], small["empty"]
    trajs = d / "one.jsonl"
    trajs.write_text('{"trajectory_id": "x#0", "task_id": "x", "final_response": "NULL"}\n', encoding="utf-8")
    for args in (["rollout", "--agent", "oracle", "--out", d / "r.jsonl"],
                 ["score", "--trajectories", trajs, "--out", d / "scored"],
                 ["export", "--kind", "sft", "--trajectories", trajs, "--out", d / "sft.jsonl"]):
        res, text = _run(*args, "--tasks", empty, "--db", synth_db)
        _fails(res, text, f"{empty}: no tasks")
    assert not (d / "scored").exists() and not (d / "sft.jsonl").exists()


def test_score_refuses_empty_trajectories(small, synth_db: Path) -> None:
    out = small["dir"] / "scored_empty"
    res, text = _run("score", "--tasks", small["tasks_file"], "--trajectories", small["empty"], "--db", synth_db, "--out", out)
    _fails(res, text, f"{small['empty']}: no trajectories")
    assert not out.exists()


def test_score_out_that_is_a_file(small, synth_db: Path) -> None:
    trajs = small["dir"] / "t1.jsonl"
    trajs.write_text('{"trajectory_id": "x#0", "task_id": "x", "final_response": "NULL"}\n', encoding="utf-8")
    res, text = _run("score", "--tasks", small["tasks_file"], "--trajectories", trajs, "--db", synth_db, "--out", trajs)
    _fails(res, text, "--out", "existing file")


def test_db_that_is_a_directory(small) -> None:
    res, text = _run("make-tasks", "--db", small["dir"], "--out", small["dir"] / "t.jsonl")
    _fails(res, text, "is a directory, not a DuckDB database file")


@pytest.mark.parametrize("where", ["missing_folder", "directory"])
def test_make_tasks_checks_out_before_building(where: str, small, synth_db: Path, monkeypatch) -> None:
    import verifier.construction as construction

    def never(*a, **k):  # the check must come first: construction is never started
        raise AssertionError("make_tasks ran before --out was checked")

    monkeypatch.setattr(construction, "make_tasks", never)
    out = small["dir"] / "nowhere" / "t.jsonl" if where == "missing_folder" else small["dir"]
    res, text = _run("make-tasks", "--db", synth_db, "--out", out)
    _fails(res, text, "--out", "does not exist" if where == "missing_folder" else "is a directory")


@pytest.fixture(scope="module")
def rolled(small, synth_db: Path) -> dict:
    """The oracle and always-null rolled out on one synthetic pair, with and without id prefixes."""
    d, out = small["dir"], {}
    for agent, prefix in (("oracle", "oracle-"), ("always-null", "null-")):
        for tag, extra in (("plain", []), ("prefixed", ["--id-prefix", prefix])):
            path = d / f"{agent}.{tag}.jsonl"
            res, _ = _run("rollout", "--agent", agent, "--tasks", small["tasks_file"], "--db", synth_db, "--out", path, *extra)
            assert res.exit_code == 0, res.output
            out[agent, tag] = path
    return out


def _concat(paths, dest: Path) -> Path:
    dest.write_text("".join(p.read_text(encoding="utf-8") for p in paths), encoding="utf-8")
    return dest


def test_rollout_id_prefix_names_trajectories(rolled, small) -> None:
    ids = [t.trajectory_id for t in read_jsonl(rolled["oracle", "prefixed"], Trajectory)]
    assert sorted(ids) == sorted(f"oracle-{t.task_id}#0" for t in small["tasks"])


def test_dpo_from_combined_agents(rolled, small, synth_db: Path) -> None:
    d = small["dir"]
    plain = _concat([rolled["oracle", "plain"], rolled["always-null", "plain"]], d / "both.plain.jsonl")
    res, text = _run("export", "--kind", "dpo", "--tasks", small["tasks_file"], "--trajectories", plain, "--db", synth_db,
                     "--out", d / "dpo.plain.jsonl")
    assert res.exit_code == 2 and "trajectory" in text and "--id-prefix" in text and "verdict " not in text.split("duplicated")[0], text
    both = _concat([rolled["oracle", "prefixed"], rolled["always-null", "prefixed"]], d / "both.jsonl")
    res, text = _run("export", "--kind", "dpo", "--tasks", small["tasks_file"], "--trajectories", both, "--db", synth_db,
                     "--out", d / "dpo.jsonl")
    assert res.exit_code == 0, res.output
    # the oracle succeeds on both tasks, always-null only on the Noise one: one pair on the Clean task
    assert len((d / "dpo.jsonl").read_text(encoding="utf-8").splitlines()) >= 1


def test_export_reports_unusable_lines(rolled, small, synth_db: Path) -> None:
    d = small["dir"]
    good = rolled["oracle", "prefixed"].read_text(encoding="utf-8")
    unknown = json.dumps({"trajectory_id": "z#0", "task_id": "no-such-task", "final_response": "NULL"})
    mixed = d / "mixed.jsonl"
    mixed.write_text(good + "{not json\n" + unknown + "\n", encoding="utf-8")
    n_good = len(good.splitlines())
    res, text = _run("export", "--kind", "sft", "--tasks", small["tasks_file"], "--trajectories", mixed, "--db", synth_db,
                     "--out", d / "sft.jsonl")
    assert res.exit_code == 1, res.output
    assert f"line {n_good + 1}" in text and "no-such-task" in text and "2 trajectory line(s) could not be used" in text
    assert len((d / "sft.jsonl").read_text(encoding="utf-8").splitlines()) == n_good  # the oracle's, all successful
