"""TRL and HF datasets, used as their users use them: tasks through ``datasets`` unaltered, the
reward called with TRL's keywords (dataset columns, ``log_extra``, ``log_metric``), one pool
across steps, and ``environment_factory`` episodes played through tools. Synthetic hospital."""

from __future__ import annotations

import asyncio
import inspect
import json
from pathlib import Path

import pytest
from batch_data import episodes, pick_pairs

datasets = pytest.importorskip("datasets", reason="datasets is in the dev extra")

from verifier.adapters.trl_data import from_hf_dataset, to_grpo_dataset, to_hf_dataset  # noqa: E402
from verifier.adapters.trl_env import EHRToolEnv, env_reward_func, environment_factory  # noqa: E402
from verifier.adapters.trl_reward import make_async_reward_func, make_reward_func  # noqa: E402
from verifier.agents import make_agent  # noqa: E402
from verifier.contract import InputError, Task, Trajectory, VerifyConfig  # noqa: E402
from verifier.scoring import completion_messages  # noqa: E402
from verifier.verify import verify  # noqa: E402


@pytest.fixture(scope="module")
def many_tasks(synth_db: Path) -> list[Task]:
    """Every task of the synthetic hospital (hundreds, every answer type)."""
    from verifier.construction import make_tasks

    tasks, _ = make_tasks(synth_db, seed=0)
    assert len(tasks) >= 200
    return tasks


@pytest.fixture(scope="module")
def sample(synth_db: Path, synth_tasks: list[Task]):
    tasks = pick_pairs(synth_tasks, 6)
    trajs = [Trajectory.model_validate_json(line) for line in episodes(synth_db, tasks)]
    by_id = {t.task_id: t for t in tasks}
    config = VerifyConfig(db_path=str(synth_db))
    expected = {t.trajectory_id: verify(t, by_id[t.task_id], config) for t in trajs}
    assert {v.success for v in expected.values()} == {True, False}
    return by_id, trajs, expected


# -- datasets ----------------------------------------------------------------------------------
def test_task_dicts_break_datasets_but_to_grpo_dataset_round_trips(many_tasks, synth_db, tmp_path):
    """The failure users met: a column of Task dicts cannot even be built (mixed answer types)."""
    import pyarrow as pa

    with pytest.raises(pa.ArrowInvalid):
        datasets.Dataset.from_list([{"task": t.model_dump(mode="json")} for t in many_tasks])
    ds = to_grpo_dataset(many_tasks, db=synth_db)
    assert ds.column_names == ["prompt", "task_id", "task"] and len(ds) == len(many_tasks)
    assert from_hf_dataset(ds) == many_tasks  # nothing altered
    first = ds[0]["prompt"]
    assert first[0]["role"] == "user" and many_tasks[0].question in first[0]["content"] and "## Database schema" in first[0]["content"]
    assert many_tasks[0].reference.sql not in first[0]["content"]
    # written and read back with datasets.load_dataset("json"), unchanged
    ds.to_json(tmp_path / "grpo.jsonl")
    back = datasets.load_dataset("json", data_files=str(tmp_path / "grpo.jsonl"), split="train")
    assert from_hf_dataset(back) == many_tasks and back[5]["prompt"] == ds[5]["prompt"]
    assert to_grpo_dataset(many_tasks[:3], prompt="empty")[0]["prompt"] == [{"role": "user", "content": ""}]
    with pytest.raises(InputError, match="db"):
        to_grpo_dataset(many_tasks[:3])


def test_to_hf_dataset_round_trips_trajectories_and_verdicts(sample):
    tasks, trajs, expected = sample
    verdicts = [expected[t.trajectory_id] for t in trajs]
    for records in (list(tasks.values()), trajs, verdicts):
        ds = to_hf_dataset(records)
        assert from_hf_dataset(ds) == records
    vds = to_hf_dataset(verdicts)
    assert vds[0]["reasons"] == [r.value for r in verdicts[0].reasons] and "success" in vds.column_names
    with pytest.raises(InputError, match="one kind"):
        to_hf_dataset([trajs[0], verdicts[0]])


# -- the reward, with TRL's keywords ----------------------------------------------------------
def _columns(ds, rows, repeat):
    """GRPOTrainer repeats each dataset row once per generation and passes columns as lists."""
    return {c: [ds[i][c] for i in rows for _ in range(repeat)] for c in ("task", "task_id")}


def test_reward_reads_grpo_dataset_columns_and_logs_reason_codes(sample, synth_db):
    tasks, trajs, expected = sample
    ds = to_grpo_dataset(list(tasks.values()), prompt="question")
    row_of = {tid: i for i, tid in enumerate(ds["task_id"])}
    extra, metrics = {}, {}
    reward = make_reward_func(None, db=synth_db)  # whole tasks arrive as JSON text in the "task" column
    rewards = reward(
        prompts=[ds[row_of[t.task_id]]["prompt"] for t in trajs],
        completions=[completion_messages(t) for t in trajs],
        task=[ds[row_of[t.task_id]]["task"] for t in trajs],
        trajectory_id=[t.trajectory_id for t in trajs],
        trainer_state=None,
        log_extra=lambda column, values: extra.setdefault(column, []).extend(values),
        log_metric=lambda name, value: metrics.setdefault(name, []).append(value),
    )
    want = [expected[t.trajectory_id] for t in trajs]
    assert rewards == [v.score for v in want]
    assert extra["ehr_reasons"] == [",".join(r.value for r in v.reasons) or "SUCCESS" for v in want]
    assert extra["ehr_condition"] == [v.condition for v in want]
    noise = [v for v in want if v.condition == "noise"]
    assert metrics["ehr/noise_success"] == [sum(v.success for v in noise) / len(noise)]
    assert metrics["ehr/reason/ABSTAINED_ON_CLEAN"] == [sum("ABSTAINED_ON_CLEAN" in [r.value for r in v.reasons] for v in want) / len(want)]


def test_altered_task_dicts_raise_a_clear_error_never_none(sample, synth_db):
    tasks, trajs, _ = sample
    traj = trajs[0]
    task = tasks[traj.task_id]
    reward = make_reward_func(tasks, db=synth_db)
    # what datasets does to a nested dict: keys of other rows come back as None
    altered = task.model_dump(mode="json")
    altered["reference"]["answer_policy"]["unit_hint"] = None
    with pytest.raises(InputError, match="datasets"):
        reward(prompts=[None], completions=[traj.final_response], task=[altered])
    # altered in a way the model accepts (a null witness column): caught against the known task
    changed = task.model_dump(mode="json")
    changed["question"] = task.question + " "
    with pytest.raises(InputError, match="differs from the task with this id"):
        reward(prompts=[None], completions=[traj.final_response], task=[changed])
    with pytest.raises(InputError, match="unknown task_id"):
        reward(prompts=[None], completions=[traj.final_response], task_id=["no-such-task"])


def test_pool_is_created_once_across_ten_reward_calls(sample, synth_db, monkeypatch):
    """With workers=2 and a task column bringing new tasks every step, the pool is never rebuilt."""
    import verifier.scoring._batch as batch

    created = []

    class CountingPool(batch._ProcessPool):
        def __init__(self, *args, **kwargs):
            created.append(1)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(batch, "_ProcessPool", CountingPool)
    tasks, trajs, expected = sample
    ds = to_grpo_dataset(list(tasks.values()), prompt="question")
    row_of = {tid: i for i, tid in enumerate(ds["task_id"])}
    reward = make_reward_func(None, db=synth_db, workers=2)
    pids = set()
    try:
        for step in range(10):  # each step brings a different slice of tasks, as a trainer does
            batch_trajs = [trajs[(step + j) % len(trajs)] for j in range(4)]
            out = reward(prompts=[None] * 4, completions=[completion_messages(t) for t in batch_trajs],
                         task=[ds[row_of[t.task_id]]["task"] for t in batch_trajs])
            assert out == [expected[t.trajectory_id].score for t in batch_trajs]
            pids |= set(reward.pool.cpu_seconds())
        assert len(created) == 1 and len(pids) <= 2
    finally:
        reward.close()


def test_async_reward_gives_the_same_rewards(sample, synth_db):
    tasks, trajs, expected = sample
    reward = make_async_reward_func(tasks, db=synth_db)
    assert inspect.iscoroutinefunction(reward)  # TRL gathers coroutine rewards on its loop
    out = asyncio.run(reward(prompts=[None] * len(trajs), completions=[completion_messages(t) for t in trajs],
                             task_id=[t.task_id for t in trajs]))
    assert out == [expected[t.trajectory_id].score for t in trajs]


# -- environment_factory ----------------------------------------------------------------------
def _trl_tools(instance):
    """What GRPOTrainer exposes: public functions of the class other than reset/get_reward."""
    return {name: getattr(instance, name) for name, _ in inspect.getmembers(type(instance), predicate=inspect.isfunction)
            if name not in ("reset", "get_reward") and not name.startswith("_")}


def test_environment_factory_protocol_and_tool_schemas(synth_db, synth_tasks):
    from transformers.utils import get_json_schema

    make = environment_factory(None, synth_db)
    env = make()
    assert callable(env.reset) and not hasattr(env, "get_reward")
    tools = _trl_tools(env)
    assert sorted(tools) == ["run_python", "run_sql"]
    schemas = {n: get_json_schema(f)["function"] for n, f in tools.items()}  # transformers' own parser
    assert schemas["run_sql"]["parameters"]["required"] == ["query"]
    assert schemas["run_python"]["parameters"]["required"] == ["code"]


def _play(env: EHRToolEnv, task: Task, row: dict) -> list[dict]:
    """TRL's tool loop: the model's calls run as tool methods; results logged by ``name``; the final
    response is the last assistant message without a tool call."""
    oracle = make_agent("oracle", tasks=[task])
    obs = env.reset(**row)
    oracle.reset(task, obs or row["prompt"][-1]["content"], {})
    messages: list[dict] = []
    for _ in range(20):
        act = oracle.act(obs or "")
        if act.kind == "submit":
            messages.append({"role": "assistant", "content": act.content})
            return messages
        name, arg = ("run_sql", "query") if act.kind == "sql" else ("run_python", "code")
        call = {"type": "function", "function": {"name": name, "arguments": {arg: act.content}}}
        messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
        obs = str(_trl_tools(env)[name](**call["function"]["arguments"]))
        messages.append({"role": "tool", "name": name, "content": obs})
    raise AssertionError("oracle did not finish")


def test_environment_episodes_are_rewarded_from_the_environments(synth_db, synth_tasks):
    tasks = pick_pairs(synth_tasks, 3)
    ds = to_grpo_dataset(tasks, prompt="empty")
    make = environment_factory(None, synth_db)
    envs = [make() for _ in tasks]
    completions = [_play(env, t, ds[i]) for i, (env, t) in enumerate(zip(envs, tasks))]
    metrics = {}
    rewards = env_reward_func(completions=completions, environments=envs,
                              log_metric=lambda n, v: metrics.setdefault(n, []).append(v))
    assert rewards == [1.0] * len(tasks), [v.reasons for v in env_reward_func.last_verdicts]
    assert {v.condition for v in env_reward_func.last_verdicts} == {"clean", "noise"}
    assert metrics["ehr/clean_success"] == [1.0] and metrics["ehr/noise_success"] == [1.0]
    # evidence comes from the environment's own record, never from the model's text
    noise_env = next(e for e in envs if e.task.condition == "noise")
    obs = noise_env.reset(task=noise_env.task.model_dump_json(), prompt=[{"role": "user", "content": ""}])
    assert noise_env.task.question in obs
    [score] = env_reward_func(completions=[[{"role": "assistant", "content": "Answer: NULL\nReasoning: no record"}]],
                              environments=[noise_env])
    assert score == 0.0 and "NO_EVIDENCE" in [r.value for r in env_reward_func.last_verdicts[0].reasons]
    assert noise_env.run_sql(query="SELECT 1") .startswith("Error: the episode is over")
    with pytest.raises(InputError, match="environments"):
        env_reward_func(completions=[[]], environments=None)


def test_reset_skips_the_observation_when_the_prompt_holds_it(synth_db, synth_tasks):
    ds = to_grpo_dataset(synth_tasks[:2], db=synth_db)  # prompt = the full observation
    env = environment_factory({t.task_id: t for t in synth_tasks}, synth_db)()
    assert env.reset(**ds[0]) is None
    assert env.reset(task_id=synth_tasks[1].task_id, prompt=[{"role": "user", "content": ""}]).endswith(synth_tasks[1].question.strip() + "\n")
    with pytest.raises(InputError, match="task"):
        env.reset(prompt=[{"role": "user", "content": "x"}])
    json.loads(ds[0]["task"])  # the row is plain JSON text
