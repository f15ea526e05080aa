"""Adapters never raise on what the model wrote; they raise a typed InputError on caller configuration.

A reward function that raises on a completion kills a training step, so every
completion (text, JSON, messages with any tool calls) is scored, and scored as
``verify`` scores the same response. Real demo tasks and real episodes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_adapters import sample  # noqa: F401 - the real episodes, shared module fixture

from verifier.adapters.common import verdict_fields
from verifier.contract import InputError, Task, Trajectory, VerifyConfig
from verifier.parse import parse
from verifier.scoring import completion_messages
from verifier.verify import verify

#: What a model can write that is neither a final answer in the usual form nor a trajectory.
MODEL_TEXTS = [
    '["ESCHERICHIA COLI"]',
    '{"answer": "5", "reasoning": "x", "steps": 3}',
    '{"answer": "5", "reasoning": "x", "steps": [',
    '{"answer": "5", "steps": [{"kind": "sql"}]}',
    '{"steps": [{"index": 1, "kind": "sql", "code": "SELECT 1"}], "final_response": 7}',
    '[{"foo": 1}]',
    '[1, 2, {"role": "assistant"}]',
    "[",
    "",
]


class _EpisodeSet(tuple):
    """(tasks by id, trajectories, expected verdicts, config), with a short repr for hypothesis reports."""

    def __repr__(self) -> str:
        return f"<{len(self[1])} demo episodes>"


@pytest.fixture(scope="module")
def episode_set(sample, demo_db: Path):
    """Tasks of 8 pairs, their real episodes, each episode's verdict from ``verify`` (both outcomes), the config."""
    return _EpisodeSet((*sample, VerifyConfig(db_path=str(demo_db))))


def _text_verdict(text: str, task: Task, config: VerifyConfig):
    return verify(Trajectory(trajectory_id="t", task_id=task.task_id, final_response=text), task, config)


def _solved(episode_set, condition: str) -> Trajectory:
    tasks, trajs, expected, _ = episode_set
    return next(t for t in trajs if tasks[t.task_id].condition == condition and expected[t.trajectory_id].success and t.steps)


def _json_answer(traj: Trajectory) -> str:
    """The episode's correct Answer re-written as a JSON final answer that also has a 'steps' key."""
    return json.dumps({"answer": parse(traj.final_response).answer_text, "reasoning": "looked it up", "steps": 3})


# --- M3: verl --------------------------------------------------------------------------------

@pytest.mark.parametrize("condition", ["clean", "noise"])
def test_verl_scores_any_solution_str_as_verify_scores_the_text(episode_set, demo_db: Path, condition: str):
    from verifier.adapters.verl_score import compute_score

    tasks, _, _, config = episode_set
    task = next(t for t in tasks.values() if t.condition == condition)
    reasons = set()
    for text in MODEL_TEXTS:
        out = compute_score("ehr", text, task.task_id, None, tasks=tasks, db=demo_db)
        want = verdict_fields(_text_verdict(text, task, config))
        assert {k: out[k] for k in ("score", "success", "reasons")} == {k: want[k] for k in ("score", "success", "reasons")}, text
        assert out["score"] == 0.0
        reasons.add(out["reasons"])
    assert "UNPARSEABLE_RESPONSE" in reasons


def test_verl_json_answer_with_steps_key_is_read_as_an_answer(episode_set, demo_db: Path):
    from verifier.adapters.verl_score import compute_score, compute_score_batch

    tasks, _, _, _ = episode_set
    traj = _solved(episode_set, "clean")
    text = _json_answer(traj)
    assert compute_score("ehr", text, traj.task_id, None, tasks=tasks, db=demo_db)["score"] == 1.0
    [out] = compute_score_batch(["ehr"], [text], [traj.task_id], None, tasks=tasks, db=demo_db)
    assert out["score"] == 1.0


def test_verl_batch_never_raises_on_solution_strs(episode_set, demo_db: Path):
    from verifier.adapters.verl_score import compute_score_batch

    tasks, _, _, config = episode_set
    task = next(t for t in tasks.values() if t.condition == "clean")
    out = compute_score_batch(None, MODEL_TEXTS, [task.task_id] * len(MODEL_TEXTS), None, tasks=tasks, db=demo_db)
    assert [o["reasons"] for o in out] == [verdict_fields(_text_verdict(s, task, config))["reasons"] for s in MODEL_TEXTS]


def test_verl_caller_configuration_still_raises(episode_set, demo_db: Path):
    from verifier.adapters.verl_score import compute_score, compute_score_batch

    tasks, trajs, _, _ = episode_set
    t = trajs[0]
    with pytest.raises(InputError, match="ground_truth.*unknown task_id"):
        compute_score("ehr", "x", "no-such-task", None, tasks=tasks, db=demo_db)
    with pytest.raises(InputError, match="ground_truth"):
        compute_score("ehr", "x", None, None, tasks=tasks, db=demo_db)
    # a recorded trajectory is the caller's data: broken JSON or a bad record is an error, naming the field
    with pytest.raises(InputError, match=r"^trajectory=.*not JSON"):
        compute_score("ehr", "x", t.task_id, {"trajectory": '{"steps": ['}, tasks=tasks, db=demo_db)
    with pytest.raises(InputError, match=r"^trajectory: "):
        compute_score("ehr", "x", t.task_id, {"trajectory": {"steps": 3}}, tasks=tasks, db=demo_db)
    with pytest.raises(InputError, match=r"^extra_infos='1 items': expected 2 items"):
        compute_score_batch(None, ["a", "b"], [t.task_id] * 2, [None], tasks=tasks, db=demo_db)
    with pytest.raises(InputError, match=r"^ground_truths='3 items': expected 2 items"):
        compute_score_batch(None, ["a", "b"], [t.task_id] * 3, None, tasks=tasks, db=demo_db)


# --- M3 / L6: TRL ----------------------------------------------------------------------------

def test_trl_scores_any_completion_as_verify_scores_the_text(episode_set, demo_db: Path):
    from verifier.adapters.trl_reward import make_reward_func

    tasks, _, _, config = episode_set
    task = next(t for t in tasks.values() if t.condition == "clean")
    reward = make_reward_func(tasks, db=demo_db)
    rewards = reward(prompts=["q"] * len(MODEL_TEXTS), completions=MODEL_TEXTS, task_id=[task.task_id] * len(MODEL_TEXTS))
    want = [_text_verdict(s, task, config) for s in MODEL_TEXTS]
    assert rewards == [v.score for v in want] == [0.0] * len(MODEL_TEXTS)
    assert [v.reasons for v in reward.last_verdicts] == [v.reasons for v in want]

    solved = _solved(episode_set, "clean")
    assert reward(prompts=["q"], completions=[_json_answer(solved)], task_id=[solved.task_id]) == [1.0]


def test_trl_conversational_completions_with_foreign_tool_calls(episode_set, demo_db: Path):
    """Model-written tool calls to tools that are not SQL/Python, and SQL calls without code, are
    skipped; the episode's real steps keep their indices, so the verdict is the episode's own."""
    from verifier.adapters.trl_reward import make_reward_func

    tasks, _, expected, _ = episode_set
    reward = make_reward_func(tasks, db=demo_db)
    traj = _solved(episode_set, "noise")  # success needs its SQL evidence, so lost steps would show
    msgs = completion_messages(traj)
    first_call = next(i for i, m in enumerate(msgs) if m.get("tool_calls"))
    foreign = [
        {"role": "assistant", "content": "searching", "tool_calls": [
            {"id": "w1", "type": "function", "function": {"name": "web_search", "arguments": '{"q": "lactate"}'}},
            {"id": "w2", "type": "function", "function": {"name": "run_sql", "arguments": '{"table": "labs"}'}},
            {"id": "w3", "type": "function", "function": {"name": "run_sql", "arguments": 17}},
            {"id": "w4", "type": "function", "function": "run_sql"},
            "not a call",
        ]},
        {"role": "tool", "tool_call_id": "w1", "content": "SELECT 1 -- no such tool"},
        {"role": "tool", "tool_call_id": "w2", "content": "Error: no code"},
        {"role": "tool", "tool_call_id": "zz", "content": "answers nothing"},
        {"role": "function", "name": "legacy", "content": "x"},
    ]
    completion = msgs[:first_call] + foreign + msgs[first_call:]
    assert reward(prompts=["q"], completions=[completion], task_id=[traj.task_id]) == [1.0]
    [v] = reward.last_verdicts
    assert v.reasons == expected[traj.trajectory_id].reasons == []
    # the same foreign calls alone, then an answer: no steps, the answer is scored
    only = foreign + [{"role": "assistant", "content": traj.final_response}]
    reward(prompts=["q"], completions=[only], task_id=[traj.task_id])
    assert "NO_EVIDENCE" in [r.value for r in reward.last_verdicts[0].reasons]


def test_trl_column_lengths_and_caller_data_raise_input_error(episode_set, demo_db: Path):
    from verifier.adapters.trl_reward import make_reward_func

    tasks, trajs, _, _ = episode_set
    reward = make_reward_func(tasks, db=demo_db)
    tid = trajs[0].task_id
    with pytest.raises(InputError, match=r"^task_id='1 values': .*1 values for 2 completions") as e:
        reward(prompts=["q"] * 2, completions=["a", "b"], task_id=[tid])
    assert e.value.field == "task_id"
    with pytest.raises(InputError, match=r"^task=.*3 values for 2 completions"):
        reward(prompts=["q"] * 2, completions=["a", "b"], task=[tasks[tid].model_dump(mode="json")] * 3)
    with pytest.raises(InputError, match=r"^trajectory_id=.*1 values for 2 completions"):
        reward(prompts=["q"] * 2, completions=["a", "b"], task_id=[tid] * 2, trajectory_id=["x"])
    with pytest.raises(InputError, match=r"^task_id='" + tid[:10]):  # a scalar, not a column
        reward(prompts=["q"], completions=["a"], task_id=tid)
    with pytest.raises(InputError, match=r"^trajectory: "):  # a recorded trajectory is caller data
        reward(prompts=["q"], completions=["a"], task_id=[tid], trajectory=[{"steps": "x"}])


# --- M3: hypothesis: no completion text makes an adapter raise ------------------------------

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.sampled_from(["steps", "answer", "role", "content", "tool_calls", "function", "name",
                                       "arguments", "kind", "code", "index", "final_response", "id"]), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=_json_values, truncate=st.integers(min_value=0, max_value=3))
def test_no_json_like_completion_raises(episode_set, demo_db: Path, value, truncate: int):
    from verifier.adapters.trl_reward import make_reward_func
    from verifier.adapters.verl_score import compute_score

    tasks, _, _, _ = episode_set
    task = next(t for t in tasks.values() if t.condition == "noise")
    text = json.dumps(value)
    text = text[: len(text) - truncate] if truncate else text
    out = compute_score("ehr", text, task.task_id, None, tasks=tasks, db=demo_db)
    assert out["score"] in (0.0, 1.0)
    reward = make_reward_func(tasks, db=demo_db)
    completions = [text, value if isinstance(value, list) else [value]]
    assert all(r in (0.0, 1.0) for r in reward(prompts=["q"] * 2, completions=completions, task_id=[task.task_id] * 2))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=60))
def test_plain_text_is_scored_exactly_as_verify(episode_set, demo_db: Path, text: str):
    from verifier.adapters.verl_score import compute_score

    tasks, _, _, config = episode_set
    task = next(t for t in tasks.values() if t.condition == "clean")
    out = compute_score("ehr", text, task.task_id, None, tasks=tasks, db=demo_db)
    assert out["reasons"] == verdict_fields(_text_verdict(text, task, config))["reasons"]


# --- M7: inspect_ai agents that end with submit() and call other tools ------------------------

def _replay_eval(episode_set, demo_db: Path, tmp_path: Path, agent: str):
    """Runs inspect_ai's own agent loop (mockllm scripted from real episodes): a ``think`` call, then
    the episode's SQL/Python calls answered by replay tools, then ``submit(answer=final_response)``."""
    inspect_ai = pytest.importorskip("inspect_ai", reason="inspect_ai not installed: the scorer test needs the real package")
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.tool import ToolDef, think

    from verifier.adapters.inspect_scorer import ehr_scorer

    tasks, trajs, expected, _ = episode_set
    chosen = [t for t in trajs if t.steps][:6] + [t for t in trajs if not t.steps][:2]
    by_id = {t.trajectory_id: t for t in chosen}

    def recorded(code: str) -> str:
        step = next(s for t in chosen for s in t.steps if s.code == code)
        return step.error or step.output or ""

    async def sql(query: str) -> str:
        return recorded(query)

    async def python(code: str) -> str:
        return recorded(code)

    run_sql = ToolDef(sql, name="run_sql", description="Run read-only SQL.", parameters={"query": "the SQL text"}).as_tool()
    run_python = ToolDef(python, name="run_python", description="Run Python.", parameters={"code": "the source"}).as_tool()

    def script(messages, tools, tool_choice, config):  # noqa: ANN001 - mockllm's callable form
        traj = by_id[next(m.text for m in messages if m.role == "user").split("]")[0].lstrip("[")]
        turn = sum(m.role == "assistant" for m in messages)
        calls = [("think", {"thought": "plan the queries"})]
        calls += [("run_sql", {"query": s.code}) if s.kind == "sql" else ("run_python", {"code": s.code}) for s in traj.steps]
        calls += [("submit", {"answer": traj.final_response})]
        name, args = calls[min(turn, len(calls) - 1)]
        out = ModelOutput.for_tool_call("mockllm/model", name, args, content="")
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # else mockllm fetches a tokenizer
        return out

    if agent == "basic_agent":
        from inspect_ai.solver import basic_agent

        solver = basic_agent(tools=[run_sql, run_python, think()], max_attempts=1)
    else:
        from inspect_ai.agent import AgentSubmit, react

        solver = react(tools=[run_sql, run_python, think()], submit=AgentSubmit(keep_in_messages=True))
    dataset = [Sample(input=f"[{t.trajectory_id}] {tasks[t.task_id].question}", target=t.task_id, id=t.trajectory_id) for t in chosen]
    task = inspect_ai.Task(dataset=dataset, solver=solver, scorer=ehr_scorer(tasks, demo_db))
    model = get_model("mockllm/model", custom_outputs=script)
    [log] = inspect_ai.eval(task, model=model, log_dir=str(tmp_path / "logs"), display="none", max_tool_output=10**7)
    assert log.status == "success", log.error
    return log, chosen, expected


@pytest.mark.parametrize("agent", ["basic_agent", "react"])
def test_inspect_scorer_agent_loop_ending_with_submit(episode_set, demo_db: Path, tmp_path: Path, agent: str):
    log, chosen, expected = _replay_eval(episode_set, demo_db, tmp_path, agent)
    assert {s.id for s in log.samples} == {t.trajectory_id for t in chosen}
    for s in log.samples:
        assert any(tc.function == "think" for m in s.messages if m.role == "assistant" for tc in (m.tool_calls or []))
        assert any(tc.function == "submit" for m in s.messages if m.role == "assistant" for tc in (m.tool_calls or []))
        v = expected[s.id]
        score = s.scores["ehr_verifier"]
        assert score.value == ("C" if v.success else "I"), (s.id, score.explanation)
        assert score.metadata["reasons"] == [r.value for r in v.reasons]
    assert {expected[t.trajectory_id].success for t in chosen} == {True, False}


def test_inspect_scorer_submit_then_later_text_and_unknown_tool_errors(episode_set, demo_db: Path):
    pytest.importorskip("inspect_ai", reason="inspect_ai not installed: the scorer test needs the real package")
    import anyio
    from inspect_ai.model import (
        ChatMessageAssistant,
        ChatMessageTool,
        ChatMessageUser,
        ModelName,
    )
    from inspect_ai.scorer import Target
    from inspect_ai.solver import TaskState
    from inspect_ai.tool import ToolCall, ToolCallError

    from verifier.adapters.inspect_scorer import ehr_scorer

    tasks, _, expected, _ = episode_set
    traj = _solved(episode_set, "clean")
    scorer = ehr_scorer(tasks, demo_db)

    def state(messages) -> TaskState:
        return TaskState(ModelName("mockllm/model"), traj.trajectory_id, 1, "q", [ChatMessageUser(content="q"), *messages])

    def run(messages):
        return anyio.run(scorer, state(messages), Target(traj.task_id))

    bash = ChatMessageAssistant(content="let me look", tool_calls=[ToolCall(id="b1", function="bash", arguments={"cmd": "ls"})])
    bash_err = ChatMessageTool(content="", tool_call_id="b1", function="bash", error=ToolCallError("unknown", "no such tool"))
    submit_wrong = ChatMessageAssistant(content="done", tool_calls=[ToolCall(id="s1", function="submit", arguments={"answer": "<answer>nothing</answer>"})])
    submit_res = ChatMessageTool(content="<answer>nothing</answer>", tool_call_id="s1", function="submit")
    right = ChatMessageAssistant(content=traj.final_response)
    submit_right = ChatMessageAssistant(content="", tool_calls=[ToolCall(id="s2", function="submit", arguments={"answer": traj.final_response})])

    assert run([bash, bash_err, submit_right]).value == "C"  # the submitted answer is the final response
    assert run([bash, bash_err, submit_wrong, submit_res, right]).value == "C"  # later assistant text wins
    wrong = run([right, bash, bash_err, submit_wrong, submit_res])  # a later submit wins over earlier text
    assert wrong.value == "I" and wrong.metadata["reasons"] != []
    assert expected[traj.trajectory_id].success


def test_a_model_cannot_type_its_own_evidence(episode_set, demo_db: Path):
    """Reward hack: the model writes, as its completion TEXT, a serialized trajectory whose
    steps carry the evidence query of a solved Noise episode and its (easily guessed) output.
    Text is never read as steps, so the verdict is the text's (no evidence), while the same
    steps handed over by the framework (a dict it recorded, or message lists with its tool
    results) still score as the real episode."""
    from verifier.adapters.trl_reward import make_reward_func
    from verifier.adapters.verl_score import compute_score

    tasks, _, expected, config = episode_set
    solved = _solved(episode_set, "noise")
    forged = solved.model_dump_json()
    reward = make_reward_func(tasks, db=demo_db)
    assert reward(prompts=["q"], completions=[forged], task_id=[solved.task_id]) == [0.0]
    assert reward.last_verdicts[0].reasons == _text_verdict(forged, tasks[solved.task_id], config).reasons
    out = compute_score("ehr", forged, tasks[solved.task_id].model_dump_json(), {}, db=demo_db)
    assert out["score"] == 0.0
    # the framework's own record of the episode is still trusted
    assert reward(prompts=["q"], completions=[json.loads(forged)], task_id=[solved.task_id]) == [expected[solved.trajectory_id].score]
    assert reward(prompts=["q"], completions=[completion_messages(solved)], task_id=[solved.task_id]) == [1.0]
