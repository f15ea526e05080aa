"""verl's multi-turn rollout with the EHR agent loop and tools, and the parquet verl reads. Synthetic hospital.

verl itself cannot be imported here (it needs torch and ~60 packages), so the agent loop and tools
are built on the minimal stand-in of ``tests/verl_fake.py`` (verl's ``BaseTool``, tool registry,
``register``/``_target_`` instantiation and ``ToolAgentLoop`` control flow, written from verl's
source); when verl is importable the same classes build on the real base classes instead. What is
real: the tools drive real ``EHREnv`` episodes on the synthetic hospital, the configs are the YAML
our functions write, the rows are read back from the parquet file with pyarrow and ``datasets``,
and ``verl_score.compute_score`` scores the loop's output as verl's reward loop passes it
(``extra_info`` updated with the output's ``extra_fields``).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from batch_data import episodes, pick_pairs

import verl_fake
from verifier.contract import Task, Trajectory, VerifyConfig
from verifier.verify import verify


@pytest.fixture(scope="module")
def verl_mods():
    try:
        import verl  # noqa: F401
        yield None  # the real package: nothing to stand in for
    except ImportError:
        mods = verl_fake.install()
        yield mods
        verl_fake.uninstall(mods)


@pytest.fixture(scope="module")
def setup(synth_db: Path, synth_tasks: list[Task], tmp_path_factory, verl_mods):
    from verifier.adapters import verl_agent_loop, verl_tools
    from verifier.adapters.verl_data import to_verl_parquet

    tasks = pick_pairs(synth_tasks, 3)
    oracle = {Trajectory.model_validate_json(line).task_id: Trajectory.model_validate_json(line)
              for line in episodes(synth_db, tasks, agents=("oracle",))}
    out = tmp_path_factory.mktemp("verl_loop")
    tool_yaml = out / "ehr_tools.yaml"
    tool_yaml.write_text(verl_tools.tool_config_yaml(synth_db), encoding="utf-8")
    loop_yaml = out / "ehr_agent_loop.yaml"
    loop_yaml.write_text(verl_agent_loop.agent_loop_yaml(), encoding="utf-8")
    parquet = to_verl_parquet(tasks, out / "train.parquet", db=synth_db)
    return {"tasks": tasks, "oracle": oracle, "tool_yaml": str(tool_yaml), "loop_yaml": loop_yaml,
            "parquet": parquet, "db": str(synth_db)}


def _rows(parquet: Path) -> list[dict]:
    import pyarrow.parquet as pq

    return pq.read_table(parquet).to_pylist()


def _turns(traj: Trajectory) -> list[str]:
    """The oracle's episode as model turns: one tool call per step, then its final response."""
    calls = [verl_fake.tool_call("run_sql", query=s.code) if s.kind == "sql" else verl_fake.tool_call("run_python", code=s.code)
             for s in traj.steps]
    return [*calls, traj.final_response]


def _rollout(setup, row: dict, turns: list[str]):
    """One sample through the agent loop named by the row, as verl's AgentLoopWorker runs it."""
    entry = {e["name"]: e for e in yaml.safe_load(setup["loop_yaml"].read_text())}[row["agent_name"]]
    loop, tok = verl_fake.make_loop(entry, setup["tool_yaml"], turns)
    kwargs = {**row, "raw_prompt": row["prompt"], "tools_kwargs": row["extra_info"]["tools_kwargs"],
              "index": row["extra_info"]["index"]}
    out = asyncio.run(loop.run({"temperature": 1.0}, **kwargs))
    return out, tok.decode(out.response_ids)


def _score(setup, row: dict, output, solution_str: str) -> dict:
    """verl's reward loop: ``extra_info`` updated with the output's ``extra_fields``, then compute_score."""
    from verifier.adapters.verl_score import compute_score

    extra = dict(row["extra_info"])
    extra.update(output.extra_fields.items())
    return compute_score(data_source=row["data_source"], solution_str=solution_str,
                         ground_truth=row["reward_model"]["ground_truth"], extra_info=extra, db=setup["db"])


def test_module_imports_without_verl_and_names_the_extra():
    code = ("import sys; sys.modules['verl'] = None\n"
            "from verifier.adapters import verl_agent_loop, verl_tools, verl_data\n"
            "for mod, name in ((verl_agent_loop, 'EHRAgentLoop'), (verl_tools, 'EHRSqlTool')):\n"
            "    try:\n        getattr(mod, name)\n    except ImportError as e:\n        print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == 2 and all("pip install 'ehr-verifier[verl]'" in line for line in lines)


def test_parquet_has_the_columns_rlhfdataset_reads_and_round_trips(setup):
    """pyarrow and ``datasets`` (what RLHFDataset loads parquet with) give the rows back whole."""
    import datasets

    rows = _rows(setup["parquet"])
    ds = datasets.load_dataset("parquet", data_files=str(setup["parquet"]), split="train")
    assert ds.to_list() == rows
    for i, (row, task) in enumerate(zip(rows, setup["tasks"])):
        assert set(row) >= {"data_source", "prompt", "ability", "reward_model", "extra_info", "agent_name"}
        assert row["agent_name"] == "ehr_agent" and row["extra_info"]["index"] == i
        assert [m["role"] for m in row["prompt"]] == ["user"] and task.question in row["prompt"][0]["content"]
        assert row["reward_model"]["style"] == "rule"
        assert Task.model_validate_json(row["reward_model"]["ground_truth"]) == task
        for name in ("run_sql", "run_python"):
            create = row["extra_info"]["tools_kwargs"][name]["create_kwargs"]
            assert create["task_id"] == task.task_id and Task.model_validate_json(create["task"]) == task
        # nothing of the reference reaches the model
        assert task.reference.sql not in row["prompt"][0]["content"]


def test_noise_rollout_keeps_the_tool_evidence_for_the_scorer(setup):
    """An evidence-backed abstention played through the loop scores as the oracle's episode does;
    verl's stock loop output (no episode kept) leaves the scorer without evidence."""
    rows = _rows(setup["parquet"])
    noise = [(r, t) for r, t in zip(rows, setup["tasks"]) if t.condition == "noise"]
    assert noise
    config = VerifyConfig(db_path=setup["db"])
    for row, task in noise:
        oracle = setup["oracle"][task.task_id]
        assert oracle.steps, "the oracle gathers evidence on a Noise task"
        output, text = _rollout(setup, row, _turns(oracle))
        episode = Trajectory.model_validate(output.extra_fields["ehr_episode"])
        assert [s.code for s in episode.steps] == [s.code for s in oracle.steps]
        assert [s.output for s in episode.steps] == [s.output for s in oracle.steps]
        assert episode.final_response == oracle.final_response
        scored = _score(setup, row, output, text)
        expected = verify(oracle, task, config)
        assert expected.success
        assert (scored["score"], scored["success"]) == (expected.score, True)
        assert "NO_EVIDENCE" not in scored["reasons"]
        # the same rollout without the episode (what verl's stock ToolAgentLoop returns)
        output.extra_fields.pop("ehr_episode")
        stock = _score(setup, row, output, text)
        assert not stock["success"]


def test_clean_rollout_with_python_and_the_episode_is_closed(setup):
    """The Python tool runs in the episode's confined worker; the loop closes the episode."""
    rows = _rows(setup["parquet"])
    row, task = next((r, t) for r, t in zip(rows, setup["tasks"]) if t.condition == "clean")
    oracle = setup["oracle"][task.task_id]
    sql = next(s.code for s in oracle.steps if s.kind == "sql")
    turns = [verl_fake.tool_call("run_python", code=f"print(db.sql({sql!r}).fetchall())"),
             verl_fake.tool_call("run_sql", query=sql), oracle.final_response]
    output, text = _rollout(setup, row, turns)
    episode = Trajectory.model_validate(output.extra_fields["ehr_episode"])
    assert [s.kind for s in episode.steps] == ["python", "sql"]
    assert episode.steps[0].error is None and episode.steps[0].output
    assert episode.steps[0].sql == [sql] or sql in json.dumps(episode.steps[0].sql)
    scored = _score(setup, row, output, text)
    assert scored["success"] == verify(oracle, task, VerifyConfig(db_path=setup["db"])).success


def test_rollout_without_tool_calls_and_bad_arguments(setup):
    """No tool call: the episode is the final text alone; a call without its argument is an error text."""
    rows = _rows(setup["parquet"])
    row, task = next((r, t) for r, t in zip(rows, setup["tasks"]) if t.condition == "noise")
    output, text = _rollout(setup, row, ["Answer: NULL\nReasoning: nothing recorded."])
    episode = Trajectory.model_validate(output.extra_fields["ehr_episode"])
    assert episode.steps == [] and episode.task_id == task.task_id
    assert _score(setup, row, output, text)["reasons"].split(",")[0] == "NO_EVIDENCE"

    output, text = _rollout(setup, row, [verl_fake.tool_call("run_sql", sql="SELECT 1"), "Answer: NULL"])
    assert "Error: run_sql needs a non-empty string argument 'query'" in text
    assert Trajectory.model_validate(output.extra_fields["ehr_episode"]).steps == []


def test_failed_rollout_closes_the_episode(setup, monkeypatch):
    """The model fails mid-rollout (its server raises): the episode opened by a tool call is closed."""
    from verifier.env import EHREnv

    closed = []
    original = EHREnv.close
    monkeypatch.setattr(EHREnv, "close", lambda self: (closed.append(self), original(self)))
    rows = _rows(setup["parquet"])
    row = rows[0]
    with pytest.raises(RuntimeError, match="no turn left"):
        _rollout(setup, row, [verl_fake.tool_call("run_sql", query="SELECT 1")])
    assert len(closed) == 1 and closed[0].done


def test_tool_config_yaml_loads_through_verls_registry(setup):
    """The YAML verl reads: class paths resolved by verl's ``get_tool_class``, schemas by its model."""
    from verl.tools.utils.tool_registry import initialize_tools_from_config

    tools = initialize_tools_from_config(setup["tool_yaml"])
    assert [t.name for t in tools] == ["run_sql", "run_python"]
    assert all(t.config["db"] == setup["db"] and t.config["type"] == "native" for t in tools)
    from verifier.adapters import verl_agent_loop

    assert verl_agent_loop.EHRAgentLoop.__module__ == "verifier.adapters.verl_agent_loop"
    from verl.experimental.agent_loop.agent_loop import _agent_loop_registry

    assert _agent_loop_registry["ehr_agent"] == {"_target_": "verifier.adapters.verl_agent_loop.EHRAgentLoop"}
