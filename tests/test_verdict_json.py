"""A verdict can always be written as JSON (UTF-8), whatever text the trajectory quoted.

A final response or a step given as a Python string may hold lone UTF-16 surrogates (JSON
``"\\ud800"`` decodes to one). The verdict quotes that text in ``details`` and ids, and before this
``Verdict.model_dump_json()`` raised ``PydanticSerializationError`` ("surrogates not allowed"), so a
verdict could not be saved, and ``verify_batch`` turned the item into an error record."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier import verify
from verifier.contract import Trajectory, Verdict
from verifier.scoring import verify_batch
from verifier.scoring._agreement import read_episodes

_EPISODES = read_episodes(Path(__file__).resolve().parents[1] / "fixtures" / "episodes" / "synthetic")
_CLEAN = next(e for e in _EPISODES if e.task.condition == "clean")


def _with(final: str, trajectory_id: str = "t") -> Trajectory:
    return Trajectory(trajectory_id=trajectory_id, task_id=_CLEAN.task.task_id, steps=list(_CLEAN.trajectory.steps),
                      final_response=final)


def test_a_verdict_quoting_lone_surrogates_is_written_as_utf8_json() -> None:
    v = verify(_with("<answer>\ud800 5 \ud83d\ude00</answer><reasoning>see \udfff</reasoning>", "id\udc80"), _CLEAN.task)
    text = v.model_dump_json()
    text.encode("utf-8")  # strict: no surrogate left
    back = Verdict.model_validate_json(text)
    assert (back.success, back.reasons, back.condition) == (v.success, v.reasons, v.condition)
    assert back.trajectory_id == "id\ufffd" and "\ufffd" in back.details["parse"]["answer"]
    assert "\U0001F600" in back.details["parse"]["answer"]  # a pair given as two code points is its character
    assert json.loads(v.model_dump_json(indent=2)) == json.loads(text)  # pydantic's arguments still apply


@pytest.mark.parametrize("backend", ["serial", "process"])
def test_batch_scoring_keeps_the_verdict_of_such_an_item(backend: str) -> None:
    """Before, the item's own JSON (sent to the workers) raised, and the whole batch stopped."""
    items = [_with("<answer>\ud800</answer><reasoning>x</reasoning>", "a"), _CLEAN.trajectory]
    lines = list(verify_batch(items, {_CLEAN.task.task_id: _CLEAN.task}, backend=backend, workers=1, as_json=True))
    records = [json.loads(line) for line in lines]
    assert [("success" in r, "error" in r) for r in records] == [(True, False), (True, False)]
    assert records[1]["success"] is True


@settings(max_examples=300, deadline=None)
@given(text=st.text(st.characters(codec=None, categories=["Cs", "Lu", "Ll", "Nd", "Zs", "Po"]), max_size=60))
def test_any_text_gives_a_verdict_json_that_round_trips(text: str) -> None:
    v = verify(_with(f"<answer>{text}</answer><reasoning>{text}</reasoning>"), _CLEAN.task)
    back = Verdict.model_validate_json(v.model_dump_json().encode("utf-8"))
    assert (back.success, back.reasons, back.abstained) == (v.success, v.reasons, v.abstained)


def test_other_serialisation_failures_raise_once_as_pydantic_does() -> None:
    """The surrogate fallback cleans and retries once: a value JSON cannot hold raises pydantic's
    error (a blind review found a RecursionError of 994 chained errors before the retry was made
    on pydantic's own method)."""
    from pydantic_core import PydanticSerializationError

    base = dict(task_id="t", trajectory_id="x", success=False, score=0.0, condition="clean", abstained=False,
                verifier_version="1")
    for details in ({"o": object()}, {"when": {1, "\ud800"}}):  # no JSON form; a surrogate inside a set
        with pytest.raises(PydanticSerializationError):
            Verdict(details=details, **base).model_dump_json()


@pytest.mark.parametrize("backend", ["serial", "process"])
def test_an_unpicklable_model_without_json_is_its_own_error_record(backend: str) -> None:
    """A model whose JSON cannot be UTF-8 is sent as the object itself only when it pickles; one that
    does not (a lock in its metadata) is its own error record, and the items around it are scored."""
    import threading

    bad = _with("<answer>\ud800</answer><reasoning>x</reasoning>", "bad")
    bad.metadata["lock"] = threading.Lock()
    items = [_with("<answer>12</answer><reasoning>x</reasoning>", "a"), bad, _CLEAN.trajectory]
    records = [json.loads(line) for line in
               verify_batch(items, {_CLEAN.task.task_id: _CLEAN.task}, backend=backend, workers=1, as_json=True)]
    assert len(records) == 3 and "success" in records[0] and "success" in records[2]
    assert "error" in records[1] and "cannot be sent to a worker process" in records[1]["error"]["message"]
