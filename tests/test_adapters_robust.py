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
from verifier.config import VerifyConfig
from verifier.errors import InputError
from verifier.export import completion_messages
from verifier.parse import parse
from verifier.task import Task
from verifier.trajectory import Trajectory
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
