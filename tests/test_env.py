"""EHREnv on the real demo: API shape, hidden fields, recording, truncation, the trajectory log and resume."""

from __future__ import annotations

import json
import random
from collections import defaultdict
from pathlib import Path

import pytest

from verifier.agents.rollout import rollout
from verifier.contract import InputError, ReasonCode, Trajectory, Verdict, read_jsonl
from verifier.env import EHREnv, EnvConfig, check_env, hidden_leaks
from verifier.env.log import JsonlAppender, existing_keys, repair_torn_tail
from verifier.sql import json_cell, open_readonly, render_result


def _one_per_cell(tasks: list, n: int = 1) -> list:
    """``n`` tasks per (program, condition), deterministic."""
    cells: dict[tuple[str, str], list] = defaultdict(list)
    for t in tasks:
        cells[(t.program, t.condition)].append(t)
    rng = random.Random(0)
    out = []
    for key in sorted(cells):
        out += rng.sample(cells[key], min(n, len(cells[key])))
    return out


@pytest.fixture(scope="module")
def env(demo_db: Path):
    e = EHREnv(str(demo_db), EnvConfig(max_steps=5))
    yield e
    e.close()


def test_check_env_on_clean_and_noise_tasks(env: EHREnv, demo_tasks: list) -> None:
    for task in _one_per_cell(demo_tasks):
        check_env(env, task)


def test_reset_shows_question_schema_instructions_and_nothing_hidden(env: EHREnv, demo_tasks: list) -> None:
    assert demo_tasks, "make_tasks built no tasks from the demo"
    for task in _one_per_cell(demo_tasks, 5):
        obs, info = env.reset(task)
        assert task.question in obs
        assert "lab_events" in obs and "admissions" in obs, "the schema description is shown"
        assert "<answer>NULL</answer>" in obs and "[step N]" in obs and "five" in obs.lower()
        assert hidden_leaks(obs, task) == [], task.task_id
        assert hidden_leaks(json.dumps(info), task) == [], task.task_id
    # the same instructions for the Clean task and its Noise twin: only the question differs
    pairs: dict[str, dict[str, str]] = defaultdict(dict)
    for task in demo_tasks[:40]:
        obs, _ = env.reset(task)
        pairs[task.pair_id][task.condition] = obs.replace(task.question, "<Q>")
    for both in pairs.values():
        if len(both) == 2:
            assert both["clean"] == both["noise"]


def test_hidden_leaks_detects_leaks(demo_tasks: list) -> None:
    noise = next(t for t in demo_tasks if t.condition == "noise")
    assert "reference.sql" in hidden_leaks("look: " + noise.reference.sql, noise)
    assert "label:noise" in hidden_leaks("this is a Noise task", noise)
    assert "unmet_requirement.statement" in hidden_leaks(noise.reference.unmet_requirement.statement, noise)
    assert hidden_leaks("nothing to see " + noise.question, noise) == []


def test_sql_step_records_what_the_agent_saw(env: EHREnv, demo_db: Path, demo_tasks: list) -> None:
    env.reset(demo_tasks[0])
    sql = "SELECT patientid, admissionid, admission_time FROM admissions ORDER BY admissionid LIMIT 60"
    obs, reward, term, trunc, info = env.step({"kind": "sql", "code": sql})
    step = env.steps[-1]
    con = open_readonly(demo_db)
    cur = con.execute(sql)
    cols = [d[0] for d in cur.description]
    rows = cur.fetchall()
    con.close()
    assert step.kind == "sql" and step.code == sql and step.error is None
    # cells are recorded in their JSON form (issue 17 kind 11), so the step is the same after a JSON round trip
    assert step.columns == cols and step.rows == [[json_cell(v) for v in r] for r in rows]
    assert Trajectory.model_validate_json(env.trajectory.model_dump_json()).steps[-1].rows == step.rows
    assert step.output == render_result(cols, rows, env.verify_config.display)
    assert obs == f"[step {step.index}]\n{step.output}"
    assert "(60 rows, showing first 50)" in obs
    assert (reward, term, trunc) == (0.0, False, False)


def test_errors_are_observations_and_the_episode_continues(env: EHREnv, demo_tasks: list) -> None:
    env.reset(demo_tasks[0])
    obs, *_ = env.step({"kind": "sql", "code": "SELECT no_such_column FROM admissions"})
    assert obs.startswith("[step 1]\nError:") and env.steps[0].error
    obs, *_ = env.step({"kind": "sql", "code": "DELETE FROM admissions"})
    assert "not a read" in obs and env.steps[1].error
    obs, reward, term, trunc, info = env.step({"kind": "teleport", "code": "x"})
    assert obs.startswith("Error: invalid action") and not term and not trunc and len(env.steps) == 2
    obs, reward, term, trunc, info = env.step({"kind": "sql", "code": "SELECT count(*) AS n FROM admissions"})
    assert "(1 row)" in obs and not term


def test_max_steps_truncates_and_scores(env: EHREnv, demo_tasks: list) -> None:
    task = next(t for t in demo_tasks if t.condition == "clean")
    env.reset(task)
    for i in range(4):
        obs, reward, term, trunc, info = env.step({"kind": "sql", "code": "SELECT 1 AS x"})
        assert not trunc
    obs, reward, term, trunc, info = env.step({"kind": "sql", "code": "SELECT 1 AS x"})
    assert trunc and not term and "limit of 5 tool calls" in obs
    verdict = info["verdict"]
    assert isinstance(verdict, Verdict) and not verdict.success and reward == 0.0
    assert ReasonCode.UNPARSEABLE_RESPONSE in verdict.reasons
    assert len(info["trajectory"].steps) == 5
    with pytest.raises(InputError):
        env.step({"kind": "sql", "code": "SELECT 1"})


def test_reward_is_the_verdict_score(env: EHREnv, demo_tasks: list) -> None:
    from verifier.agents import format_answer, tagged_response

    task = next(t for t in demo_tasks if t.condition == "clean")
    env.reset(task)
    env.step({"kind": "sql", "code": task.reference.sql})
    text = tagged_response(format_answer(task.reference.answer), "From [step 1].")
    obs, reward, term, trunc, info = env.step({"kind": "submit", "text": text})
    assert term and not trunc and reward == 1.0 and info["verdict"].success
    assert info["trajectory"].final_response == text
    env.reset(task)
    obs, reward, term, trunc, info = env.step({"kind": "submit", "text": "<answer>NULL</answer>"})
    assert reward == 0.0 and ReasonCode.ABSTAINED_ON_CLEAN in info["verdict"].reasons


# ------------------------------------------------------------------ log and resume
def test_torn_tail_is_cut(tmp_path: Path) -> None:
    p = tmp_path / "t.jsonl"
    p.write_text('{"a": 1}\n{"b": 2}\n{"c": 3', encoding="utf-8")
    assert repair_torn_tail(p) == len('{"c": 3')
    assert p.read_text(encoding="utf-8") == '{"a": 1}\n{"b": 2}\n'
    assert repair_torn_tail(p) == 0
    q = tmp_path / "only_torn.jsonl"
    q.write_text('{"partial": ', encoding="utf-8")
    repair_torn_tail(q)
    assert q.read_text(encoding="utf-8") == ""
    with JsonlAppender(tmp_path / "new" / "x.jsonl") as log:
        log.append({"z": 1})
    assert (tmp_path / "new" / "x.jsonl").read_text(encoding="utf-8") == '{"z": 1}\n'


def test_rollout_k_samples_and_resume_after_a_crash(demo_db: Path, demo_tasks: list, tmp_path: Path) -> None:
    tasks = _one_per_cell(demo_tasks)[:4]
    out = tmp_path / "traj.jsonl"
    report = rollout("oracle", tasks, demo_db, out, k=2)
    assert report.episodes == 8 and report.skipped == 0
    trajs = list(read_jsonl(out, Trajectory))
    assert sorted(t.trajectory_id for t in trajs) == sorted(f"{t.task_id}#{s}" for t in tasks for s in (0, 1))
    assert all(t.metadata["agent"] == "oracle" for t in trajs)
    assert existing_keys(out) == {(t.task_id, s) for t in tasks for s in (0, 1)}
    # rerun: nothing to do
    again = rollout("oracle", tasks, demo_db, out, k=2)
    assert again.episodes == 0 and again.skipped == 8
    # crash: the last episode was half written
    lines = out.read_text(encoding="utf-8").splitlines(keepends=True)
    out.write_text("".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2], encoding="utf-8")
    resumed = rollout("oracle", tasks, demo_db, out, k=2)
    assert resumed.episodes == 1 and resumed.skipped == 7
    final = list(read_jsonl(out, Trajectory))
    assert len(final) == 8 and len({t.trajectory_id for t in final}) == 8


def test_workers_give_the_same_trajectories(demo_db: Path, demo_tasks: list, tmp_path: Path) -> None:
    tasks = _one_per_cell(demo_tasks)[:6]
    one, two = tmp_path / "w1.jsonl", tmp_path / "w2.jsonl"
    rollout("oracle", tasks, demo_db, one, workers=1)
    rollout("oracle", tasks, demo_db, two, workers=2)
    a = sorted(read_jsonl(one, Trajectory), key=lambda t: t.trajectory_id)
    b = sorted(read_jsonl(two, Trajectory), key=lambda t: t.trajectory_id)
    assert [t.model_dump() for t in a] == [t.model_dump() for t in b]


def test_rollout_rejects_bad_arguments(demo_db: Path, demo_tasks: list, tmp_path: Path) -> None:
    with pytest.raises(InputError):
        rollout("no-such-agent", demo_tasks[:1], demo_db, tmp_path / "x.jsonl")
    with pytest.raises(InputError):
        rollout("oracle", demo_tasks[:1], demo_db, tmp_path / "x.jsonl", k=0)
    with pytest.raises(InputError):
        rollout("oracle", demo_tasks[:1] * 2, demo_db, tmp_path / "x.jsonl")


def test_sql_run_from_python_counts_as_evidence(env: EHREnv, demo_tasks: list) -> None:
    """The SQL a Python step ran is recorded, so an abstention can cite that step."""
    from verifier.agents import tagged_response
    from verifier.agents.reference_agents import abstention_reasoning

    by_type = {}
    for t in demo_tasks:
        if t.condition == "noise":
            by_type.setdefault(t.noise_type, t)
    assert set(by_type) == {"record", "value", "query"}
    for task in by_type.values():
        env.reset(task)
        env.step({"kind": "python", "code": f"r = db.sql({task.reference.sql!r})\nprint(r)"})
        assert env.steps[0].sql == [task.reference.sql]
        obs, reward, term, trunc, info = env.step(
            {"kind": "submit", "text": tagged_response("NULL", abstention_reasoning(task, [1]))})
        assert reward == 1.0, (task.task_id, info["verdict"].reasons, info["verdict"].details.get("evidence"))


def test_rollout_command(demo_db: Path, demo_tasks: list, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from verifier.cli import app
    from verifier.contract import write_jsonl

    tasks = _one_per_cell(demo_tasks)[:2]
    tasks_file, out = tmp_path / "tasks.jsonl", tmp_path / "traj.jsonl"
    write_jsonl(tasks_file, tasks)
    args = ["rollout", "--agent", "oracle", "--tasks", str(tasks_file), "--db", str(demo_db), "--out", str(out), "-k", "2"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert "4 episodes run, 0 already" in res.output
    assert len(list(read_jsonl(out, Trajectory))) == 4
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0 and "0 episodes run, 4 already" in res.output
    bad = CliRunner().invoke(app, [*args[:2], "nobody", *args[3:]])
    assert bad.exit_code == 2 and "unknown agent" in bad.output
