"""Batch scoring on real trajectories over the real demo: one record per line, in order,
byte-identical for any worker count, equal to ``verify`` one by one."""

from __future__ import annotations

import codecs
import json
import time
from itertools import count
from pathlib import Path

import pytest
from batch_data import episodes, pick_pairs

from verifier.contract import Task, Trajectory, Verdict, VerifyConfig
from verifier.scoring import BatchVerifier, iter_lines, verify_batch, verify_file
from verifier.verify import verify

N_LINES = 300
#: 1-based line numbers of the corrupted lines (1% of 300) and the error they must produce.
CORRUPTED = {
    37: ("bad json", "InputError"),
    90: ("JSON nested 100,000 deep (RecursionError in json.loads)", "InputError"),
    120: ("bytes that are not UTF-8", "InputError"),
    151: ("unknown task", "InputError"),
    262: ("wrong types", "InputError"),
}
#: Valid lines with awkward bytes that must score like any other: a UTF-8 byte-order
#: mark before line 1, a bare carriage return (JSON whitespace) inside line 200.
AWKWARD_BUT_VALID = (1, 200)


@pytest.fixture(scope="module")
def sample(demo_db: Path, demo_tasks: list[Task]) -> tuple[list[Task], list[str]]:
    tasks = pick_pairs(demo_tasks, 8)
    return tasks, episodes(demo_db, tasks)


@pytest.fixture(scope="module")
def corrupted_file(tmp_path_factory: pytest.TempPathFactory, sample) -> Path:
    """300 lines: the episodes repeated GRPO-style (new ids), with 3 corrupted lines."""
    _tasks, lines = sample
    out: list[str] = []
    for rep in count():
        for line in lines:
            d = json.loads(line)
            d["trajectory_id"] = f"{d['trajectory_id']}#{rep}"
            out.append(json.dumps(d))
        if len(out) >= N_LINES:
            break
    out = out[:N_LINES]
    good = json.loads(out[0])
    out[37 - 1] = out[37 - 1][: len(out[37 - 1]) // 2]  # truncated JSON
    out[151 - 1] = json.dumps(dict(good, trajectory_id="ghost", task_id="no-such-task"))
    out[262 - 1] = json.dumps(dict(good, trajectory_id="typed", steps=[{"index": "one", "kind": "sql", "code": 5}]))
    out[90 - 1] = "[" * 100_000 + "]" * 100_000
    raw = [line.encode("utf-8") for line in out]
    raw[120 - 1] = raw[120 - 1].replace(b'"trajectory_id"', b'"traj\xff\xfeectory_id"', 1)
    raw[0] = codecs.BOM_UTF8 + raw[0]
    raw[200 - 1] = raw[200 - 1].replace(b", ", b",\r ", 3)
    assert raw[200 - 1].count(b"\r") == 3
    path = tmp_path_factory.mktemp("batch") / "trajectories.jsonl"
    path.write_bytes(b"\n".join(raw) + b"\n")
    return path


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory, corrupted_file: Path, sample, demo_db: Path) -> dict[str, bytes]:
    tasks, _ = sample
    outs = {}
    for name, workers, backend in (("w1", 1, "process"), ("w2", 2, "process"), ("serial", 1, "serial")):
        path = tmp_path_factory.mktemp(name) / "verdicts.jsonl"
        n = verify_file(corrupted_file, tasks, demo_db, path, workers=workers, backend=backend)
        assert n == N_LINES
        outs[name] = path.read_bytes()
    return outs


def test_one_line_per_input_line_and_errors_exactly_on_corrupted_lines(scored):
    records = [json.loads(line) for line in scored["w2"].decode().splitlines()]
    assert len(records) == N_LINES
    errors = {r["line"]: r for r in records if "error" in r}
    assert set(errors) == set(CORRUPTED)
    for line, (_what, etype) in CORRUPTED.items():
        err = errors[line]["error"]
        assert err["type"] == etype and err["line"] == line and err["message"]
    assert errors[151]["task_id"] == "no-such-task" and errors[151]["trajectory_id"] == "ghost"
    assert "task_id" in errors[151]["error"]["field"]
    assert errors[262]["trajectory_id"] == "typed" and "steps" in errors[262]["error"]["field"]
    assert "UTF-8" in errors[120]["error"]["message"]
    assert all("error" not in records[i - 1] and records[i - 1]["trajectory_id"] for i in AWKWARD_BUT_VALID)
    assert errors[37]["trajectory_id"] is None
    for i, r in enumerate(records, start=1):
        if i not in CORRUPTED:
            Verdict.model_validate(r)  # every other line is a verdict


def test_output_is_byte_identical_for_1_and_2_workers_and_serial(scored):
    assert scored["w1"] == scored["w2"] == scored["serial"]


def test_input_order_is_kept(scored, corrupted_file: Path):
    inputs = list(iter_lines(corrupted_file))
    for i, (inp, out) in enumerate(zip(inputs, scored["w2"].decode().splitlines()), start=1):
        if i in CORRUPTED:
            continue
        assert json.loads(out)["trajectory_id"] == json.loads(inp)["trajectory_id"]


def test_batch_verdicts_equal_verify_one_by_one(scored, sample, demo_db: Path):
    tasks, lines = sample
    by_id = {t.task_id: t for t in tasks}
    config = VerifyConfig(db_path=str(demo_db))
    expected = {}
    for line in lines:
        traj = Trajectory.model_validate_json(line)
        expected[traj.trajectory_id] = verify(traj, by_id[traj.task_id], config).model_dump_json()
    checked = 0
    for out in scored["w1"].decode().splitlines():
        rec = json.loads(out)
        if "error" in rec:
            continue
        original = rec["trajectory_id"].rsplit("#", 1)[0]
        assert out == expected[original].replace(f'"trajectory_id":"{original}"', f'"trajectory_id":"{rec["trajectory_id"]}"')
        checked += 1
    assert checked == N_LINES - len(CORRUPTED)


def test_reference_agents_get_their_known_outcomes(scored):
    from verifier.agents import EXPECTED_NOISE_REASON

    records = [json.loads(l) for l in scored["w1"].decode().splitlines()]
    verdicts = [r for r in records if "error" not in r]
    for v in verdicts:
        agent = v["trajectory_id"].split(":")[0]
        if v["condition"] == "noise":
            expected = EXPECTED_NOISE_REASON[agent]
            assert v["success"] is (expected is None), v
            if agent in ("always-null", "answer-anyway"):  # wrong-scope's reason depends on the task's scope
                assert expected in v["reasons"], v
        elif agent == "always-null":
            assert v["reasons"] == ["ABSTAINED_ON_CLEAN"]
        elif agent in ("oracle", "answer-anyway"):
            assert v["success"], v


def test_cache_is_hit_on_repeated_queries(corrupted_file: Path, sample, demo_db: Path):
    tasks, _ = sample
    with BatchVerifier(tasks, demo_db, backend="serial") as bv:
        n = sum(1 for _ in bv.score_lines(iter_lines(corrupted_file)))
        stats = bv.cache_stats()
    assert n == N_LINES
    # each Noise episode is repeated about 4 times: most evidence queries are hits
    assert stats["hits"] > 2 * stats["misses"] > 0


def test_streaming_keeps_a_bounded_number_of_items_in_flight(sample, demo_db: Path):
    tasks, lines = sample
    pulled = {"n": 0}

    def source():
        for i in range(10_000):
            pulled["n"] += 1
            yield lines[i % len(lines)]

    with BatchVerifier(tasks, demo_db, workers=2, chunk_size=4, max_in_flight=3) as bv:
        it = bv.score_lines(source())
        next(it)
        assert pulled["n"] <= 4 * 3 + 4  # at most max_in_flight chunks (and the one being formed)
        for _ in range(50):
            next(it)
        assert pulled["n"] <= 51 + 4 * 3 + 4


# --- per-item time limit, scorer exceptions, bad arguments ------------------------------------

def _slow_scorer(traj: Trajectory, task: Task, config: VerifyConfig) -> Verdict:
    if traj.trajectory_id.endswith("#slow"):
        time.sleep(5)
    if traj.trajectory_id.endswith("#boom"):
        raise RuntimeError("scorer bug")
    return verify(traj, task, config)


def test_time_limit_gives_timeout_verdict_and_exceptions_give_error_records(sample, demo_db: Path):
    tasks, lines = sample
    base = json.loads(lines[0])
    items = [
        json.dumps(dict(base, trajectory_id="a#slow")),
        json.dumps(dict(base, trajectory_id="b#boom")),
        lines[0],
        "",
    ]
    t0 = time.perf_counter()
    out = list(verify_batch(items, tasks, demo_db, backend="serial", scorer=_slow_scorer, item_time_limit_s=0.5))
    assert time.perf_counter() - t0 < 4.5  # the slow item was abandoned at its limit
    assert len(out) == 4
    assert out[0]["reasons"] == ["TIMEOUT"] and out[0]["success"] is False and out[0]["trajectory_id"] == "a#slow"
    assert out[1]["error"] == {"type": "RuntimeError", "message": "scorer bug", "line": 2}
    assert out[1]["trajectory_id"] == "b#boom" and out[1]["task_id"] == base["task_id"]
    assert out[2]["trajectory_id"] == base["trajectory_id"] and "error" not in out[2]
    assert out[3]["error"]["type"] == "InputError" and "blank" in out[3]["error"]["message"]


def test_models_and_dicts_are_accepted_like_lines(sample, demo_db: Path):
    tasks, lines = sample
    as_lines = list(verify_batch(lines[:6], tasks, demo_db, backend="serial", as_json=True))
    as_models = list(verify_batch([Trajectory.model_validate_json(l) for l in lines[:6]], tasks, demo_db, backend="serial", as_json=True))
    as_dicts = list(verify_batch([json.loads(l) for l in lines[:6]], {t.task_id: t for t in tasks}, demo_db, backend="serial", as_json=True))
    assert as_lines == as_models == as_dicts


@pytest.mark.parametrize("kwargs,field", [({"workers": 0}, "workers"), ({"backend": "gpu"}, "backend"), ({"chunk_size": 0}, "chunk_size"),
                                          ({"item_time_limit_s": 0}, "item_time_limit_s"), ({"item_time_limit_s": -1}, "item_time_limit_s")])
def test_bad_arguments_are_typed_errors(kwargs, field, sample):
    from verifier.contract import InputError

    tasks, _ = sample
    with pytest.raises(InputError) as exc:
        BatchVerifier(tasks, None, **kwargs)
    assert exc.value.field == field


def test_input_that_fails_midway_first_returns_what_was_read(sample, demo_db: Path):
    """A generator that raises at item 10: the 9 items before it are scored and handed
    over, then the generator's own exception reaches the caller."""
    tasks, lines = sample

    def source():
        for i in range(9):
            yield lines[i % len(lines)]
        raise KeyError("the rollout store went away")

    got = []
    with pytest.raises(KeyError, match="rollout store"):
        for rec in verify_batch(source(), tasks, demo_db, workers=2, chunk_size=2, max_in_flight=8):
            got.append(rec)
    assert len(got) == 9 and all("error" not in r for r in got)


def test_an_item_that_cannot_be_pickled_is_its_own_error_record(sample, demo_db: Path):
    import threading

    tasks, lines = sample
    bad = dict(json.loads(lines[0]), trajectory_id="locked", extra=threading.Lock())
    out = list(verify_batch([lines[0], bad, lines[1]], tasks, demo_db, workers=1, chunk_size=8))
    assert len(out) == 3 and "error" not in out[0] and "error" not in out[2]
    assert out[1]["error"]["type"] == "InputError" and out[1]["line"] == 2 and "worker" in out[1]["error"]["message"]


def test_verify_file_leaves_earlier_output_intact_on_bad_arguments(corrupted_file: Path, sample, demo_db: Path, tmp_path: Path):
    from verifier.contract import InputError

    tasks, _ = sample
    out = tmp_path / "verdicts.jsonl"
    out.write_text("earlier results\n", encoding="utf-8")
    with pytest.raises(InputError):
        verify_file(corrupted_file, tasks, demo_db, out, workers=0)
    assert out.read_text(encoding="utf-8") == "earlier results\n"
    assert [p.name for p in tmp_path.iterdir()] == ["verdicts.jsonl"]  # no partial file left behind


_SLOW_QUERY_RUN = r"""
import json, sys
from verifier.scoring import verify_batch
from verifier.contract import Task
from verifier.contract import Step, Trajectory, VerifyConfig
task = Task.model_validate_json(sys.argv[2])
# an evidence budget above the item's limit: the item's limit, not the budget, stops the query
config = VerifyConfig(evidence_budget_floor_s=30.0)
slow = "SELECT count(*) AS n FROM range(3000000000) a WHERE a % 7 = 3"
traj = Trajectory(trajectory_id="slow", task_id=task.task_id, final_response="Answer: NULL\nReasoning: [step 1]",
                  steps=[Step(index=1, kind="sql", code=slow, output="n\n1\n(1 row)")])
out = list(verify_batch([traj.model_dump_json()], [task], sys.argv[1], backend="serial", config=config, item_time_limit_s=1.0))
print(json.dumps(out[0]["reasons"]))
"""


def test_abandoned_item_leaves_no_duckdb_call_behind(sample, demo_db: Path):
    """A serial-backend item over its limit while DuckDB runs its evidence query: the
    verdict is TIMEOUT and the process then exits normally (a DuckDB call still running
    in the abandoned thread at interpreter exit used to abort it with code 134)."""
    import subprocess
    import sys

    tasks, _ = sample
    noise = next(t for t in tasks if t.condition == "noise")
    for _ in range(3):  # the abort depended on timing: before the fix, 2 runs in 3 aborted
        proc = subprocess.run([sys.executable, "-c", _SLOW_QUERY_RUN, str(demo_db), noise.model_dump_json()],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert json.loads(proc.stdout.strip().splitlines()[-1]) == ["TIMEOUT"]
        assert "terminate" not in proc.stderr


# --- the score command -------------------------------------------------------------------------

def test_score_command_writes_verdicts_summary_report(corrupted_file: Path, sample, demo_db: Path, tmp_path: Path, scored):
    from typer.testing import CliRunner

    from verifier.cli import app

    tasks, _ = sample
    tasks_file = tmp_path / "tasks.jsonl"
    tasks_file.write_text("".join(t.model_dump_json() + "\n" for t in tasks), encoding="utf-8")
    out = tmp_path / "run"
    res = CliRunner().invoke(app, ["score", "--tasks", str(tasks_file), "--trajectories", str(corrupted_file),
                                   "--db", str(demo_db), "--out", str(out), "--workers", "2", "--title", "ref agents"])
    # every line has its record and the report is written, but lines that could not be scored make the run
    # exit 1 with a message naming them (it used to exit 0, so a script chaining `score` took it for clean)
    assert res.exit_code == 1, res.output
    text = " ".join(res.output.split())
    assert f"error: {len(CORRUPTED)} of {N_LINES} input lines could not be scored" in text, res.output
    assert (out / "verdicts.jsonl").read_bytes() == scored["w2"]
    summary = json.loads((out / "summary.json").read_text())
    for key in ("by_noise_type", "by_scope", "by_intent", "by_track", "pass_at_k", "pass_hat_k", "rs"):
        assert summary[key], key
    assert set(summary["clean"]) >= {"success_rate"} and set(summary["noise"]) >= {"success_rate", "null_rate", "abstention_validity"}
    assert summary["n_errors"] == len(CORRUPTED) and summary["n_verdicts"] == N_LINES - len(CORRUPTED)
    # the four reference agents: half the Noise answers are abstentions, of which oracle's are valid
    assert 0 < summary["noise"]["abstention_validity"] < 1
    assert (out / "report.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "reason codes by condition" in res.output
    for code in ("ANSWERED_NOISE", "NO_EVIDENCE", "EVIDENCE_NOT_SENSITIVE", "ABSTAINED_ON_CLEAN"):
        assert code in res.output


# --- what ``trajectories`` may be (fresh-user QA) ---------------------------------------------------

def test_a_path_is_read_as_a_jsonl_file_and_bare_text_is_refused(sample, demo_db: Path, tmp_path: Path):
    """A JSONL path (``Path`` or str) is scored line by line, like its lines; a str that is not a file
    is an InputError (iterating it used to score one character per item: 47 error records for a path)."""
    from verifier.contract import InputError

    tasks, lines = sample
    f = tmp_path / "trajs.jsonl"
    f.write_text("\n".join(lines[:4]) + "\n", encoding="utf-8")
    expected = list(verify_batch(lines[:4], tasks, demo_db, backend="serial"))
    assert list(verify_batch(f, tasks, demo_db, backend="serial")) == expected
    assert list(verify_batch(str(f), tasks, demo_db, backend="serial")) == expected
    with pytest.raises(InputError, match="trajectories"):
        verify_batch(str(tmp_path / "missing.jsonl"), tasks, demo_db, backend="serial")
    with pytest.raises(InputError, match="trajectories"):
        verify_batch(lines[0], tasks, demo_db, backend="serial")


def test_sandbox_unavailable_is_importable_where_the_readme_says():
    import verifier
    import verifier.env

    assert verifier.SandboxUnavailable is verifier.env.SandboxUnavailable
    assert issubclass(verifier.SandboxUnavailable, verifier.VerifierError)


def test_every_worker_is_started_before_the_first_chunk(sample, demo_db: Path):
    """A process pool starts all its workers, each through its initializer, before it scores:
    forkserver workers start one at a time as work arrives, so a second worker would otherwise
    start inside a later batch and charge its start-up (registries, lookups) to it (issue 15)."""
    tasks, lines = sample
    with BatchVerifier(tasks, demo_db, workers=2, backend="process") as bv:
        out = list(bv.score_lines(lines[:1]))  # one chunk: one worker needed
        assert len(out) == 1 and json.loads(out[0])["task_id"] == json.loads(lines[0])["task_id"]
        cpu = bv.cpu_seconds()
        assert len(cpu) == 2, cpu  # both workers reported, before any of them scored a second chunk
        assert all(s > 0 for s in cpu.values())
