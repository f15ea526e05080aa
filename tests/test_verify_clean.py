"""verify() on Clean tasks: verdicts, reasons, details, robustness, determinism."""

from __future__ import annotations

import datetime as dt
import pickle
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from multiprocessing import get_context

import pytest

import verifier
from verifier import InputError, Task, Trajectory, Verdict, verify
from verifier import ReasonCode as R
from verifier.contract import (
    AnswerPolicy,
    DatetimeAnswer,
    NumberAnswer,
    QuantityAnswer,
    RecordsAnswer,
    Reference,
)


def task(answer, policy: AnswerPolicy | None = None, tid: str = "t1") -> Task:
    return Task(task_id=tid, pair_id="p1", question="q", condition="clean", intent="laboratory_microbiology",
                program="test", reference=Reference(sql="SELECT 1", answer=answer,
                                                    answer_policy=policy or AnswerPolicy()))


def traj(response: str, tid: str = "t1", rid: str = "r1") -> Trajectory:
    return Trajectory(trajectory_id=rid, task_id=tid, final_response=response)


K = task(QuantityAnswer(value=5.2, unit="mmol/L", decimals=1), AnswerPolicy(analyte="potassium", db_unit="mEq/L"))

CASES = [
    (K, "<answer>5.2 mEq/L</answer><reasoning>lab_events [step 2]</reasoning>", []),
    (task(QuantityAnswer(value=5.0, unit="mmol/L", decimals=1), AnswerPolicy(analyte="glucose")),
     "**Answer:** 90 mg/dL\n\n**Reasoning:** converted", []),
    (task(QuantityAnswer(value=37, unit="degC", decimals=0)), "Answer: 98.6 °F", []),
    (task(NumberAnswer(value=1234.5)), '{"answer": "1,234.5", "reasoning": "sum"}', []),
    (task(QuantityAnswer(value=35.2, unit="%", decimals=1)), "Answer: 35.2%", []),
    (task(DatetimeAnswer(value=dt.datetime(2180, 7, 23), precision="day")), "Answer: July 23, 2180", []),
    (task(NumberAnswer(value=7.4, decimals=1)), "Answer: 7.5", [R.WRONG_VALUE]),
    (K, "Answer: NULL\nReasoning: not found", [R.ABSTAINED_ON_CLEAN]),
    (K, "The potassium is 5.2.", [R.UNPARSEABLE_RESPONSE]),
    (K, "", [R.UNPARSEABLE_RESPONSE]),
    (K, "Answer: 5.2 mmHg", [R.INCOMPATIBLE_UNIT]),
    (K, "Answer: 5.2 mg/dL", [R.WRONG_UNIT]),
    (task(RecordsAnswer(columns=("id", "v"), rows=((1, "a"), (2, "b")))), "Answer:\n| id | v |\n|--|--|\n| 2 | b |",
     [R.MISSING_RECORDS]),
]


@pytest.mark.parametrize("tsk, response, reasons", CASES)
def test_verdicts(tsk: Task, response: str, reasons: list[R]) -> None:
    v = verify(traj(response), tsk)
    assert v.reasons == reasons, v.details
    assert v.success is (not reasons) and v.score == (1.0 if not reasons else 0.0)
    assert v.condition == "clean" and v.task_id == "t1" and v.trajectory_id == "r1"
    assert v.verifier_version == verifier.__version__
    assert v.abstained is (R.ABSTAINED_ON_CLEAN in reasons)


def test_details_say_what_was_compared() -> None:
    v = verify(traj("<answer>5.2 mEq/L</answer><reasoning>[step 2]</reasoning>"), K)
    assert v.details["parse"] == {"format": "tags", "answer": "5.2 mEq/L"}
    match = v.details["match"]
    assert match["reference"] == "5.2 mmol/L" and match["submitted"] == "5.2 mEq/L"
    assert match["bridge"] == "potassium: valence 1" and "rule" in match
    bad = verify(traj("nothing"), K)
    assert "no Answer found" in bad.details["parse"]["error"]


def test_fast_verdict_equals_validated_verdict_and_round_trips() -> None:
    v = verify(traj("Answer: 5.3 mEq/L"), K)
    again = Verdict.model_validate(v.model_dump())
    assert again == v
    assert Verdict.model_validate_json(v.model_dump_json()) == v
    assert pickle.loads(pickle.dumps(v)) == v
    assert v.model_dump(mode="json")["reasons"] == ["WRONG_VALUE"]


def test_internal_bug_becomes_verifier_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    vmod = sys.modules["verifier.verify"]

    def boom(*a, **k):
        raise ZeroDivisionError("synthetic bug")

    monkeypatch.setattr(vmod, "match_answer", boom)
    v = verify(traj("Answer: 5.2 mEq/L"), K)
    assert v.reasons == [R.VERIFIER_ERROR] and "synthetic bug" in v.details["error"]


def test_bad_inputs_raise_input_error() -> None:
    with pytest.raises(InputError):
        verify(traj("Answer: 1", tid="other"), K)
    with pytest.raises(InputError):
        verify({"trajectory_id": "r"}, K)
    assert verify(traj("Answer: 5.2 mEq/L").model_dump(), K.model_dump()).success  # dicts are accepted


@pytest.mark.parametrize("garbage", ["\x00\x01", "<answer>", "{" * 5000, "Answer: " + "9" * 5000, "Answer: ∞ mEq/L",
                                     "<answer>NaN</answer>", "Answer: 1e999 mmol/L", "Answer: -0 K"])
def test_garbage_never_raises(garbage: str) -> None:
    v = verify(traj(garbage), K)
    assert not v.success and R.VERIFIER_ERROR not in v.reasons, v.details


def test_noise_task_answered_is_answered_noise() -> None:
    noise = Task(task_id="n1", pair_id="p1", question="q", condition="noise", noise_type="record",
                 intent="laboratory_microbiology", program="test",
                 reference=Reference(sql="SELECT 1", unmet_requirement={"level": "record", "statement": "none"}))
    v = verify(Trajectory(trajectory_id="r", task_id="n1", final_response="Answer: 5.2 mEq/L"), noise)
    assert R.ANSWERED_NOISE in v.reasons and not v.abstained and v.condition == "noise"


def _batch() -> list[tuple[Trajectory, Task]]:
    out = []
    for i, (tsk, response, _) in enumerate(CASES * 5):
        t = tsk.model_copy(update={"task_id": f"t{i}"})
        out.append((Trajectory(trajectory_id=f"r{i}", task_id=f"t{i}", final_response=response), t))
    return out


def _verify_json(pair: tuple[Trajectory, Task]) -> str:
    return verify(*pair).model_dump_json()


def test_same_verdict_in_threads_and_processes() -> None:
    pairs = _batch()
    serial = [_verify_json(p) for p in pairs]
    with ThreadPoolExecutor(8) as pool:
        assert list(pool.map(_verify_json, pairs)) == serial
    # spawn: fresh interpreters (forking the long-lived pytest process is unsafe in itself)
    with ProcessPoolExecutor(2, mp_context=get_context("spawn")) as pool:
        assert list(pool.map(_verify_json, pairs, chunksize=8)) == serial


def test_oracle_spelling_of_every_answer_type_matches() -> None:
    """The environment's oracle writes answers with verifier.agents.format; they must verify."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from verifier.agents.format import format_answer, tagged_response
    from verifier.contract import BooleanAnswer, CountAnswer, ListAnswer, TextAnswer
    from verifier.strategies import (
        count_cases,
        datetime_cases,
        number_cases,
        quantity_cases,
        records_cases,
        text_cases,
    )

    refs = st.one_of(
        *(s.map(lambda c: (c.reference, c.policy)) for s in
          (quantity_cases(), number_cases(), count_cases(), datetime_cases(), text_cases(), records_cases())),
        st.booleans().map(lambda b: (BooleanAnswer(value=b), AnswerPolicy())),
        st.lists(st.sampled_from(["aspirin", "heparin", "insulin", "furosemide"]), min_size=1, max_size=4,
                 unique=True).map(lambda xs: (ListAnswer(items=tuple(TextAnswer(value=x) for x in xs)),
                                              AnswerPolicy())),
        st.lists(st.integers(0, 500), min_size=1, max_size=4).map(
            lambda xs: (ListAnswer(items=tuple(CountAnswer(value=x) for x in xs)), AnswerPolicy())),
    )

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(refs)
    def check(ref_policy: tuple) -> None:
        ref, policy = ref_policy
        v = verify(traj(tagged_response(format_answer(ref), "oracle")), task(ref, policy))
        assert v.success, (format_answer(ref), v.details)

    check()
