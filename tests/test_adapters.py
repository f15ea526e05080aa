"""Framework adapters, each called exactly as its framework calls it, on real episodes
over the real demo; each must agree with ``verify`` on the same trajectory."""

from __future__ import annotations

from pathlib import Path

import pytest
from batch_data import episodes, pick_pairs

from verifier.contract import InputError, Task, Trajectory, VerifyConfig
from verifier.scoring import completion_messages
from verifier.verify import verify


@pytest.fixture(scope="module")
def sample(demo_db: Path, demo_tasks: list[Task]):
    tasks = pick_pairs(demo_tasks, 8)
    trajs = [Trajectory.model_validate_json(l) for l in episodes(demo_db, tasks)]
    by_id = {t.task_id: t for t in tasks}
    config = VerifyConfig(db_path=str(demo_db))
    expected = {t.trajectory_id: verify(t, by_id[t.task_id], config) for t in trajs}
    # both outcomes must be present, or agreement would prove little
    assert {v.success for v in expected.values()} == {True, False}
    return by_id, trajs, expected


# --- TRL GRPOTrainer -------------------------------------------------------------------------

def test_trl_reward_func_conversational_completions(sample, demo_db: Path):
    from verifier.adapters.trl_reward import make_reward_func

    tasks, trajs, expected = sample
    reward = make_reward_func(tasks, db=demo_db)
    assert reward.__name__ == "ehr_verifier_reward"
    # GRPOTrainer: prompts and completions of the batch, dataset columns repeated per generation,
    # plus trainer extras; all passed as keywords.
    prompts = [[{"role": "user", "content": tasks[t.task_id].question}] for t in trajs]
    completions = [completion_messages(t) for t in trajs]
    for c in completions[::2]:  # TRL's own tool loop logs tool results without tool_call_id
        for m in c:
            m.pop("tool_call_id", None)
    rewards = reward(
        prompts=prompts, completions=completions, completion_ids=[[1, 2]] * len(trajs),
        task_id=[t.task_id for t in trajs], trajectory_id=[t.trajectory_id for t in trajs], trainer_state=None,
    )
    assert rewards == [expected[t.trajectory_id].score for t in trajs]
    assert [v.reasons for v in reward.last_verdicts] == [expected[t.trajectory_id].reasons for t in trajs]


def test_trl_reward_func_text_completion_with_recorded_steps_and_task_column(sample, demo_db: Path):
    from verifier.adapters.trl_reward import make_reward_func

    tasks, trajs, expected = sample
    reward = make_reward_func(None, db=demo_db)  # whole tasks in the "task" column
    rewards = reward(
        prompts=["q"] * len(trajs),
        completions=[t.final_response for t in trajs],
        task=[tasks[t.task_id].model_dump(mode="json") for t in trajs],
        trajectory=[t.model_dump(mode="json") for t in trajs],
    )
    assert rewards == [expected[t.trajectory_id].score for t in trajs]


def test_trl_reward_func_with_worker_pool_matches(sample, demo_db: Path):
    from verifier.adapters.trl_reward import make_reward_func

    tasks, trajs, expected = sample
    reward = make_reward_func(tasks, db=demo_db, workers=2)
    try:
        for _ in range(2):  # the pool survives across training steps
            rewards = reward(prompts=[None] * len(trajs), completions=[completion_messages(t) for t in trajs],
                             task_id=[t.task_id for t in trajs])
            assert rewards == [expected[t.trajectory_id].score for t in trajs]
    finally:
        reward.close()


def test_trl_reward_func_rejects_unknown_task(sample, demo_db: Path):
    from verifier.adapters.trl_reward import make_reward_func

    tasks, trajs, _ = sample
    reward = make_reward_func(tasks, db=demo_db)
    with pytest.raises(InputError, match="unknown task_id"):
        reward(prompts=["q"], completions=["<answer>1</answer>"], task_id=["nope"])
    with pytest.raises(InputError, match="task"):
        reward(prompts=["q"], completions=["<answer>1</answer>"])


# --- verl ------------------------------------------------------------------------------------

def test_verl_compute_score_single_and_batch(sample, demo_db: Path, tmp_path: Path):
    import numpy as np

    from verifier.adapters.verl_score import compute_score, compute_score_batch

    tasks, trajs, expected = sample
    tasks_file = tmp_path / "tasks.jsonl"
    tasks_file.write_text("".join(t.model_dump_json() + "\n" for t in tasks.values()), encoding="utf-8")
    reward_kwargs = {"tasks": str(tasks_file), "db": str(demo_db)}  # custom_reward_function.reward_kwargs
    singles = []
    for t in trajs:
        # NaiveRewardManager: compute_score(data_source=..., solution_str=..., ground_truth=..., extra_info=..., **reward_kwargs)
        out = compute_score(data_source="ehr_verifier", solution_str=t.final_response, ground_truth=t.task_id,
                            extra_info={"trajectory": t.model_dump(mode="json"), "trajectory_id": t.trajectory_id}, **reward_kwargs)
        v = expected[t.trajectory_id]
        assert out["score"] == v.score and out["success"] == v.success and out["abstained"] == v.abstained
        assert out["reasons"] == ",".join(r.value for r in v.reasons) and out["task_id"] == t.task_id
        singles.append(out)
    # BatchRewardManager: lists (numpy object arrays) under plural names
    batch = compute_score_batch(
        data_sources=np.array(["ehr_verifier"] * len(trajs), dtype=object),
        solution_strs=[t.final_response for t in trajs],
        ground_truths=[t.task_id for t in trajs],
        extra_infos=np.array([{"trajectory": t.model_dump(mode="json"), "trajectory_id": t.trajectory_id} for t in trajs], dtype=object),
        **reward_kwargs,
    )
    assert batch == singles
    assert set(batch[0]) == {"score", "success", "abstained", "condition", "reasons", "task_id", "trajectory_id"}


def test_verl_agent_loop_messages_and_task_as_ground_truth(sample, demo_db: Path):
    from verifier.adapters.verl_score import compute_score

    tasks, trajs, expected = sample
    t = next(x for x in trajs if x.steps and tasks[x.task_id].condition == "noise" and expected[x.trajectory_id].success)
    out = compute_score("ehr", t.final_response, tasks[t.task_id].model_dump_json(),
                        {"messages": completion_messages(t)}, db=demo_db)
    assert out["score"] == 1.0 and out["condition"] == "noise"
    # without the steps, the same abstention has no evidence
    bare = compute_score("ehr", t.final_response, tasks[t.task_id].model_dump(mode="json"), None, db=demo_db)
    assert bare["score"] == 0.0 and "NO_EVIDENCE" in bare["reasons"]


# --- inspect_ai --------------------------------------------------------------------------------

def test_inspect_scorer_in_a_real_eval(sample, demo_db: Path, tmp_path: Path):
    inspect_ai = pytest.importorskip("inspect_ai", reason="inspect_ai not installed: the scorer test needs the real package")
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ChatMessageUser
    from inspect_ai.solver import Generate, TaskState, solver
    from inspect_ai.tool import ToolCall

    from verifier.adapters.inspect_scorer import ehr_scorer

    tasks, trajs, expected = sample
    chosen = trajs[:12]
    by_sample = {t.trajectory_id: t for t in chosen}

    @solver
    def replay():
        """Replays the recorded episode as the agent's messages (what a tool-using agent leaves in state)."""
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            traj = by_sample[str(state.sample_id)]
            msgs = [ChatMessageUser(content=state.input_text)]
            for s in traj.steps:
                name, args = ("run_sql", {"query": s.code}) if s.kind == "sql" else ("run_python", {"code": s.code})
                msgs.append(ChatMessageAssistant(content="", tool_calls=[ToolCall(id=f"c{s.index}", function=name, arguments=args)]))
                msgs.append(ChatMessageTool(content=s.error or s.output or "", tool_call_id=f"c{s.index}", function=name))
            msgs.append(ChatMessageAssistant(content=traj.final_response))
            state.messages = msgs
            return state
        return solve

    dataset = [Sample(input=tasks[t.task_id].question, target=t.task_id, id=t.trajectory_id) for t in chosen]
    task = inspect_ai.Task(dataset=dataset, solver=[replay()], scorer=ehr_scorer(tasks, demo_db))
    [log] = inspect_ai.eval(task, model="mockllm/model", log_dir=str(tmp_path / "logs"), display="none")
    assert log.status == "success", log.error
    got = {s.id: s.scores["ehr_verifier"] for s in log.samples}
    for tid, score in got.items():
        v = expected[tid]
        assert score.value == ("C" if v.success else "I")
        assert score.metadata["reasons"] == [r.value for r in v.reasons]
    acc = log.results.scores[0].metrics["accuracy"].value
    assert acc == pytest.approx(sum(expected[t.trajectory_id].success for t in chosen) / len(chosen))
