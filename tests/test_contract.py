"""The data contract: validation errors name the field and value; schemas export; chat adapter."""

from __future__ import annotations

import json
import pickle

import pytest
from typer.testing import CliRunner

from verifier import (
    InputError,
    Task,
    Trajectory,
    Verdict,
    from_chat_messages,
    validate,
)
from verifier.cli import app
from verifier.contract import MISSING, load_tasks, write_jsonl

CLEAN = {
    "task_id": "t1",
    "pair_id": "p1",
    "question": "What was the first potassium of admission 1?",
    "condition": "clean",
    "intent": "laboratory_microbiology",
    "program": "first_lab_value",
    "reference": {
        "sql": "SELECT 1",
        "answer": {"type": "quantity", "value": 5.2, "unit": "mEq/L", "decimals": 1},
        "answer_policy": {"analyte": "potassium", "db_unit": "mEq/L"},
    },
}
NOISE = {
    **CLEAN,
    "task_id": "t2",
    "condition": "noise",
    "noise_type": "record",
    "reference": {
        "sql": "SELECT 1",
        "unmet_requirement": {"level": "record", "statement": "no potassium", "key_terms": ["potassium"]},
        "witness": [{"table": "lab_events", "rows": [{"patientid": 1}]}],
    },
}


def test_valid_tasks_round_trip_through_json():
    for raw in (CLEAN, NOISE):
        task = validate(Task, raw)
        again = validate(Task, task.model_dump_json())
        assert again == task


@pytest.mark.parametrize(
    "patch, field, value",
    [
        ({"condition": "maybe"}, "Task.condition", "maybe"),
        ({"intent": "cardiology"}, "Task.intent", "cardiology"),
        ({"reference": {"sql": "x", "answer": {"type": "quantity", "value": "high", "unit": "mg"}}}, "Task.reference.answer.quantity.value", "high"),
    ],
)
def test_invalid_task_names_field_and_value(patch, field, value):
    with pytest.raises(InputError) as info:
        validate(Task, {**CLEAN, **patch})
    assert info.value.field == field
    assert info.value.value == value
    assert field in str(info.value)


def test_clean_without_answer_and_noise_without_requirement_are_rejected():
    with pytest.raises(InputError, match="reference.answer is required"):
        validate(Task, {**CLEAN, "reference": {"sql": "SELECT 1"}})
    with pytest.raises(InputError, match="unmet_requirement is required"):
        validate(Task, {**NOISE, "reference": {"sql": "SELECT 1"}})
    with pytest.raises(InputError, match="noise_type must be null"):
        validate(Task, {**CLEAN, "noise_type": "value"})


def test_witness_replace_needs_key():
    bad = json.loads(json.dumps(NOISE))
    bad["reference"]["witness"][0]["mode"] = "replace"
    with pytest.raises(InputError, match="needs key columns"):
        validate(Task, bad)


def test_trajectory_step_indices_must_be_one_based_in_order():
    with pytest.raises(InputError, match=r"steps\[1\]\.index is 3"):
        validate(
            Trajectory,
            {"trajectory_id": "a", "task_id": "t1", "steps": [{"index": 1, "kind": "sql", "code": "x"}, {"index": 3, "kind": "sql", "code": "y"}]},
        )


def test_bad_json_line_is_a_typed_error():
    with pytest.raises(InputError, match="invalid JSON"):
        validate(Trajectory, '{"trajectory_id": ')


def test_load_tasks_reports_line_and_duplicates(tmp_path):
    path = tmp_path / "tasks.jsonl"
    write_jsonl(path, [validate(Task, CLEAN), validate(Task, NOISE)])
    assert set(load_tasks(path)) == {"t1", "t2"}
    path.write_text(path.read_text() + json.dumps({**CLEAN, "condition": "?"}) + "\n")
    with pytest.raises(InputError, match="line 3"):
        load_tasks(path)
    path.write_text(json.dumps(CLEAN) + "\n" + json.dumps(CLEAN) + "\n")
    with pytest.raises(InputError, match="duplicated task_id"):
        load_tasks(path)


def test_models_pickle():
    task = validate(Task, NOISE)
    verdict = Verdict(task_id="t2", trajectory_id="x", success=False, score=0.0, condition="noise", abstained=True, reasons=["NO_EVIDENCE"], verifier_version="0")
    assert pickle.loads(pickle.dumps(task)) == task
    assert pickle.loads(pickle.dumps(verdict)) == verdict


def test_schema_command_writes_valid_json_schemas(tmp_path):
    result = CliRunner().invoke(app, ["schema", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["Task.schema.json", "Trajectory.schema.json", "Verdict.schema.json"]
    task_schema = json.loads((tmp_path / "Task.schema.json").read_text())
    assert set(task_schema["required"]) >= {"task_id", "pair_id", "question", "condition", "intent", "program", "reference"}


def _chat():
    return [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": "What was the first potassium?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "execute_sql", "arguments": json.dumps({"query": "SELECT 1"})}},
            {"id": "c2", "type": "function", "function": {"name": "run_python", "arguments": json.dumps({"code": "print(2)"})}},
        ]},
        {"role": "tool", "tool_call_id": "c2", "content": "2"},
        {"role": "tool", "tool_call_id": "c1", "content": "Error: Catalog Error: table x does not exist"},
        {"role": "assistant", "content": [{"type": "text", "text": "<answer>NULL</answer><reasoning>none [step 1]</reasoning>"}]},
    ]


def test_chat_adapter_maps_tool_calls_to_steps():
    traj = from_chat_messages(_chat(), trajectory_id="r1", task_id="t1", metadata={"model": "m"})
    assert [s.kind for s in traj.steps] == ["sql", "python"]
    assert traj.steps[0].code == "SELECT 1" and traj.steps[0].error.startswith("Error:") and not traj.steps[0].ok
    assert traj.steps[1].output == "2" and traj.steps[1].ok
    assert traj.final_response.startswith("<answer>NULL")
    assert traj.metadata == {"model": "m"}


@pytest.mark.parametrize(
    "mutate, field",
    [
        (lambda m: m[2]["tool_calls"][0]["function"].update(name="browse"), "messages[2].tool_calls[0].function.name"),
        (lambda m: m[3].update(tool_call_id="zz"), "messages[3].tool_call_id"),
        (lambda m: m[1].update(role="robot"), "messages[1].role"),
        (lambda m: m[2]["tool_calls"][0]["function"].update(arguments=json.dumps({"foo": 1})), "messages[2].tool_calls[0].function.arguments"),
    ],
)
def test_chat_adapter_errors_name_the_message(mutate, field):
    msgs = _chat()
    mutate(msgs)
    with pytest.raises(InputError) as info:
        from_chat_messages(msgs, trajectory_id="r1", task_id="t1")
    assert info.value.field == field


@pytest.mark.parametrize(
    "model, data, field",
    [
        (Trajectory, {"task_id": "t1", "steps": [], "final_response": "x" * 500}, "Trajectory.trajectory_id"),
        (Trajectory, {"trajectory_id": "r1", "task_id": "t1", "final_response": "Answer: 1",
                      "steps": [{"index": 1, "kind": "sql", "output": "big " * 100}]}, "Trajectory.steps[0].code"),
        (Task, {"task_id": "t1", "condition": "clean", "question": "q " * 200}, "Task.pair_id"),
    ],
)
def test_missing_field_names_the_field_not_its_parent(model, data, field):
    """A required field that is absent is reported as ``<missing>`` (pydantic's "input" is the parent object,
    which used to be printed as the field's value: a wall of unrelated text for a missing id)."""
    with pytest.raises(InputError) as info:
        validate(model, data)
    err = info.value
    assert err.field == field
    assert err.value is MISSING
    assert str(err) == f"{field}=<missing>: required field is missing"
    assert pickle.loads(pickle.dumps(err.value)) is MISSING
