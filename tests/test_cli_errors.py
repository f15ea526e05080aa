"""CLI boundary: bad arguments and files give ``error: <message>`` naming the file or field, exit 2, no traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from test_metrics import _task
from typer.testing import CliRunner

from verifier.cli import app


def _run(*args: str):
    res = CliRunner().invoke(app, [str(a) for a in args])
    text = " ".join(res.output.split())
    return res, text


def _assert_clean_failure(res, text: str, *needles: str) -> None:
    assert res.exit_code == 2, (res.exit_code, res.output, res.exception)
    assert isinstance(res.exception, SystemExit), res.exception  # not an uncaught exception
    assert "Traceback" not in res.output and text.startswith("error: "), res.output
    for needle in needles:
        assert needle in text, (needle, res.output)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("cli_errors")
    tasks = d / "tasks.jsonl"
    tasks.write_text("".join(t.model_dump_json() + "\n" for t in (_task("a-c", "a", "clean"), _task("a-n", "a", "noise", noise_type="record"))))
    trajs = d / "t.jsonl"
    trajs.write_text('{"trajectory_id": "a-c#0", "task_id": "a-c", "final_response": "Answer: 1"}\n')
    db = d / "empty.duckdb"
    duckdb.connect(str(db)).close()
    notdb = d / "notdb.duckdb"
    notdb.write_text("hello, not a database\n" * 10)
    return {"tasks": tasks, "trajs": trajs, "db": db, "notdb": notdb, "dir": d}


def test_score_missing_db_fails_before_scoring(files):
    out = files["dir"] / "s9"
    res, text = _run("score", "--tasks", files["tasks"], "--trajectories", files["trajs"], "--db", "/nonexistent.duckdb", "--out", out)
    _assert_clean_failure(res, text, "/nonexistent.duckdb", "--db", "not found")
    assert not out.exists()  # nothing scored, no folder made


@pytest.mark.parametrize("option", ["--tasks", "--trajectories"])
def test_score_missing_input_file(files, option: str):
    args = {"--tasks": files["tasks"], "--trajectories": files["trajs"]}
    args[option] = files["dir"] / "nope.jsonl"
    res, text = _run("score", "--tasks", args["--tasks"], "--trajectories", args["--trajectories"], "--db", files["db"],
                     "--out", files["dir"] / "o")
    _assert_clean_failure(res, text, str(files["dir"] / "nope.jsonl"), "No such file")


def test_score_unwritable_out(files):
    res, text = _run("score", "--tasks", files["tasks"], "--trajectories", files["trajs"], "--db", files["db"], "--out", "/proc/forbidden/")
    _assert_clean_failure(res, text, "/proc/forbidden")


def test_rollout_missing_tasks(files):
    res, text = _run("rollout", "--agent", "oracle", "--tasks", files["dir"] / "nope.jsonl", "--db", files["db"], "--out", files["dir"] / "r.jsonl")
    _assert_clean_failure(res, text, "nope.jsonl", "No such file")


@pytest.mark.parametrize("command", ["make-tasks", "rollout", "score", "export"])
def test_non_duckdb_file_as_db(files, command: str):
    out = files["dir"] / f"{command}.out"
    extra = {
        "make-tasks": [],
        "rollout": ["--agent", "oracle", "--tasks", files["tasks"]],
        "score": ["--tasks", files["tasks"], "--trajectories", files["trajs"]],
        "export": ["--kind", "sft", "--tasks", files["tasks"], "--trajectories", files["trajs"]],
    }[command]
    res, text = _run(command, "--db", files["notdb"], "--out", out, *extra)
    _assert_clean_failure(res, text, str(files["notdb"]), "not a DuckDB database")
    assert "in-memory" not in text and not out.exists()


def test_rollout_bogus_agent_fails_before_any_progress(files):
    out = files["dir"] / "bogus.jsonl"
    res, text = _run("rollout", "--agent", "bogus", "--tasks", files["tasks"], "--db", files["db"], "--out", out)
    _assert_clean_failure(res, text, "--agent='bogus'", "unknown agent", "oracle")
    assert "rollout bogus" not in res.output and "0/" not in res.output  # no progress bar drawn
    assert not out.exists()


def test_rollout_bad_k_fails_before_any_progress(files):
    res, text = _run("rollout", "--agent", "oracle", "-k", "0", "--tasks", files["tasks"], "--db", files["db"], "--out", files["dir"] / "k.jsonl")
    _assert_clean_failure(res, text, "-k=0", "must be >= 1")
    assert "rollout oracle" not in res.output


def test_build_db_without_source_tables(tmp_path: Path):
    (tmp_path / "mimic" / "hosp").mkdir(parents=True)
    out = tmp_path / "db.duckdb"
    res, text = _run("build-db", "--mimic-dir", tmp_path / "mimic", "--out", out)
    _assert_clean_failure(res, text, str(tmp_path / "mimic"), "no source table file")
    assert not out.exists()


def test_bracketed_field_paths_are_printed_verbatim(files, tmp_path: Path):
    """Rich markup must not eat ``[..]`` in a field path or value."""
    bad = tmp_path / "tasks.jsonl"
    bad.write_text('{"task_id": [1]}\n')
    res, text = _run("score", "--tasks", bad, "--trajectories", files["trajs"], "--db", files["db"], "--out", tmp_path / "o")
    _assert_clean_failure(res, text, f"{bad}:line 1", "[1]")


def test_real_process_prints_no_traceback(files):
    """The installed entry point (not CliRunner): stderr has the one-line error, no traceback."""
    proc = subprocess.run(
        [sys.executable, "-m", "verifier.cli", "score", "--tasks", str(files["dir"] / "nope.jsonl"), "--trajectories",
         str(files["trajs"]), "--db", str(files["db"]), "--out", str(files["dir"] / "p")],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert proc.stderr.strip().startswith("error:") and "nope.jsonl" in proc.stderr


@pytest.mark.parametrize("bad_line", ['{"trajectory_id": "a-c#0", "succ', '[1, 2]'])
def test_export_malformed_verdicts_line_names_file_and_line(files, tmp_path: Path, bad_line: str):
    """A truncated or hand-edited verdicts.jsonl fails with its file and line, and writes nothing."""
    verdicts = tmp_path / "verdicts.jsonl"
    verdicts.write_text('{"trajectory_id": "a-c#0", "task_id": "a-c", "success": true}\n' + bad_line + "\n")
    out = tmp_path / "sft.jsonl"
    res, text = _run("export", "--kind", "sft", "--tasks", files["tasks"], "--trajectories", files["trajs"],
                     "--verdicts", verdicts, "--out", out)
    _assert_clean_failure(res, text, f"{verdicts}:line 2")
    assert not out.exists()


def test_version_option_prints_the_installed_version():
    from typer.testing import CliRunner

    from verifier.cli import app
    from verifier.contract import __version__

    res = CliRunner().invoke(app, ["--version"])
    assert res.exit_code == 0 and res.output.strip() == f"ehr-verifier {__version__}"
