"""Batch scoring on real trajectories over the real demo: one record per line, in order,
byte-identical for any worker count, equal to ``verify`` one by one."""

from __future__ import annotations

import json
import time
from itertools import count
from pathlib import Path

import pytest

from batch_data import episodes, pick_pairs
from verifier.batch import BatchVerifier, iter_lines, verify_batch, verify_file
from verifier.config import VerifyConfig
from verifier.task import Task
from verifier.trajectory import Trajectory
from verifier.verdict import Verdict
from verifier.verify import verify

N_LINES = 300
#: 1-based line numbers of the corrupted lines (1% of 300) and the error they must produce.
CORRUPTED = {
    37: ("bad json", "InputError"),
    151: ("unknown task", "InputError"),
    262: ("wrong types", "InputError"),
}


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
    path = tmp_path_factory.mktemp("batch") / "trajectories.jsonl"
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
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


@pytest.mark.parametrize("kwargs,field", [({"workers": 0}, "workers"), ({"backend": "gpu"}, "backend"), ({"chunk_size": 0}, "chunk_size")])
def test_bad_arguments_are_typed_errors(kwargs, field, sample):
    from verifier.errors import InputError

    tasks, _ = sample
    with pytest.raises(InputError) as exc:
        BatchVerifier(tasks, None, **kwargs)
    assert exc.value.field == field


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
    assert res.exit_code == 0, res.output
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
