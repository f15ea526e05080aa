"""Bounded inputs (issue 15 item 3): caps give INPUT_TOO_LARGE naming the cap, never VERIFIER_ERROR;
the scanners that replaced quadratic regexes return what those regexes returned; parsing is
linear (measured in benchmarks/bench_adversarial_inputs.py, not timed here)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier import VerifyConfig, verify
from verifier.contract import (
    CountAnswer,
    InputLimits,
    ReasonCode,
    Step,
    Trajectory,
    nesting_depth,
)
from verifier.match.scan import json_fence_bodies, strip_fence
from verifier.parse import _CITE_AT, parse

_FENCE_RE = re.compile(r"```(?:json|JSON)?\s*(\{.*?\})\s*```", re.S)
_PIECES = st.lists(st.sampled_from(["`", "```", "{", "}", " ", "\n", "json", "JSON", "x", "\t"]), max_size=16).map("".join)


@settings(max_examples=3000, deadline=None)
@given(_PIECES)
def test_scanners_equal_the_regexes_they_replace(text: str) -> None:
    assert json_fence_bodies(text) == [m[1] for m in _FENCE_RE.finditer(text)]
    assert strip_fence(text) == re.sub(r"^```[A-Za-z]*\s*|\s*```$", "", text)


def test_nesting_depth() -> None:
    assert nesting_depth("no brackets") == 0
    assert nesting_depth("[step 1] and [step 2]") == 1
    assert nesting_depth('{"answer": [[1]]}') == 3
    assert nesting_depth("]]]]" + "[" * 5) == 5  # stray closers do not hide depth


def test_citation_list_without_closing_bracket_is_linear() -> None:
    # the old pattern (\s*#?\s* twice per item) backtracked 2^n ways: 22 items took 4 s
    # bare citations count since issue 18 point 3: the unclosed list is a list of step 1
    m = _CITE_AT.match("steps " + "1, " * 5000)
    assert m is not None and m[1].endswith("1")
    assert parse("Answer: NULL\nReasoning: [steps " + "1, " * 5000).citations == [1]



@pytest.mark.parametrize("cap,make", [
    ("max_response_chars", lambda: Trajectory(trajectory_id="t", task_id="T", final_response="<answer>1</answer>" + "x" * 40_000)),
    ("max_json_depth", lambda: Trajectory(trajectory_id="t", task_id="T",
                                          final_response='{"answer": ' + "[" * 3000 + "1" + "]" * 3000 + "}")),
    ("max_steps", lambda: Trajectory(trajectory_id="t", task_id="T", final_response="<answer>1</answer>",
                                     steps=[Step(index=i + 1, kind="sql", code="SELECT 1", output="1") for i in range(101)])),
    ("max_query_chars", lambda: Trajectory(trajectory_id="t", task_id="T", final_response="<answer>1</answer>",
                                           steps=[Step(index=1, kind="sql", code="SELECT 1" + " " * 20_000, output="1")])),
    ("max_scalar_answer_chars", lambda: Trajectory(trajectory_id="t", task_id="T",
                                                   final_response="<answer>" + "1 " * 2000 + "</answer>")),
])
def test_beyond_a_cap_is_input_too_large(cap, make) -> None:
    from verifier.contract import AnswerPolicy, Reference, Task

    task = Task(task_id="T", pair_id="P", question="How many?", condition="clean", scope="patient", intent="billing",
                program="p", params={}, split="test", track="in_domain",
                reference=Reference(sql="SELECT 1", answer=CountAnswer(value=1), answer_policy=AnswerPolicy()))
    v = verify(make(), task)
    assert [r for r in v.reasons] == [ReasonCode.INPUT_TOO_LARGE]
    assert v.details["input_too_large"]["cap"] == cap
    assert v.details["input_too_large"]["limit"] == getattr(InputLimits(), cap)


def _clean_tasks():
    from verifier.contract import (
        AnswerPolicy,
        DatetimeAnswer,
        ListAnswer,
        QuantityAnswer,
        RecordsAnswer,
        Reference,
        Task,
        TextAnswer,
    )

    answers = [CountAnswer(value=3), QuantityAnswer(value=4.1, unit="mEq/L", decimals=1),
               DatetimeAnswer(value="2180-07-23T14:00:00", precision="minute"), TextAnswer(value="home"),
               ListAnswer(items=[TextAnswer(value="a"), TextAnswer(value="b")]), RecordsAnswer(columns=["a", "b"], rows=[[1, "x"], [2, "y"]])]
    return [Task(task_id="T", pair_id="P", question="q?", condition="clean", scope="patient", intent="billing",
                 program="p", params={}, split="test", track="in_domain",
                 reference=Reference(sql="SELECT 1", answer=a, answer_policy=AnswerPolicy())) for a in answers]


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                     max_leaves=12)
_TEXT = st.text(alphabet=st.sampled_from(list("0123456789 ,.-:;|[](){}<>`*#_/\n\tabcdefghijklmnopqrstuvwxyzNULstep%µ°")),
                max_size=200)
_WRAPS = [lambda t: t, lambda t: f"<answer>{t}</answer><reasoning>[step 1]</reasoning>", lambda t: f"Answer: {t}\nReasoning: x",
          lambda t: f"```json\n{t}\n```", lambda t: f"**Answer:** {t}"]


@pytest.mark.slow
@settings(max_examples=10_000, deadline=None)
@given(st.one_of(_TEXT, _JSON.map(lambda v: __import__("json").dumps({"answer": v, "reasoning": "r"}))),
       st.integers(0, len(_WRAPS) - 1), st.integers(0, 5))
def test_fuzz_verify_never_verifier_error(body: str, wrap: int, which: int) -> None:
    """Arbitrary text and JSON answers on every Clean answer type: a verdict, never VERIFIER_ERROR."""
    task = _CLEAN_TASKS[which]
    traj = Trajectory(trajectory_id="t", task_id="T", final_response=_WRAPS[wrap](body))
    v = verify(traj, task)
    assert ReasonCode.VERIFIER_ERROR not in v.reasons, v.details


_CLEAN_TASKS = _clean_tasks()


# --- a blind review (2026-12-02) of the five-unit rule's speed-ups, each written from its description

def test_compatibility_characters_count_expanded_against_the_response_cap() -> None:
    """One character can expand to 18 under NFKC ("\\ufdfa"), and the five-unit rule reads the
    expansion: 12,000 of them were 216,000 characters to read, 130-180 ms per verify() (the cap
    was 12,000 characters then)."""
    limits = InputLimits()
    text = "<answer>NULL</answer><reasoning>" + "\ufdfa" * (limits.max_response_chars - 50) + "</reasoning>"
    assert len(text) <= limits.max_response_chars
    over = limits.check_trajectory(Trajectory(trajectory_id="t", task_id="T", final_response=text))
    assert over is not None and over["cap"] == "max_response_chars" and over["size"] > limits.max_response_chars
    # what NFKC does not grow is not counted (a second review: NFKD split Hangul, x2.1, and refused a
    # correct Korean response of 6,551 characters); nor are combining marks reordered
    korean = "<answer>12</answer><reasoning>" + "입원 환자 기록을 확인했습니다. " * 400 + "</reasoning>"
    assert 6_000 < len(korean) <= limits.max_response_chars
    assert limits.check_trajectory(Trajectory(trajectory_id="t", task_id="T", final_response=korean)) is None
    half = (limits.max_response_chars - 100) // 2
    marks = "<answer>12</answer><reasoning>a" + "\u0301" * half + "\u0316" * half + "</reasoning>"
    assert limits.check_trajectory(Trajectory(trajectory_id="t", task_id="T", final_response=marks)) is None
    # superscripts and accents in an ordinary response stay far under it
    ok = "<answer>NULL</answer><reasoning>No eligible admission had a value ≥ 10³ mmol/L; café.</reasoning>"
    assert limits.check_trajectory(Trajectory(trajectory_id="t", task_id="T", final_response=ok)) is None


def test_numbers_beyond_the_float_range_and_int_digit_limit_are_read() -> None:
    """``10.0 ** 400`` raised OverflowError and int() refuses more than 4,300 digits: both were a
    VERIFIER_ERROR in the number extraction and the five-unit rule's bounds."""
    from verifier.abstention._small_cell import disclosure
    from verifier.match.extract import extract_count, extract_numbers

    assert [t.value for t in extract_numbers("1 x 10^400 and -2 x 10^400, 3 x 10^-400")] == [float("inf"), float("-inf"), 0.0]
    # leading zeros are no size (a second review: "1.2 x 10^0001" read as inf)
    assert [t.value for t in extract_numbers("1.2 x 10^0001, 5 x 10^0000, 1.2 x 10^-0001")] == [12.0, 5.0, 0.12]
    assert extract_count("9" * 5000) is None
    big = "9" * 4400
    text = f"NULL. Fewer than 5 admissions qualify; none had more than {big} days, between 2 and {big}, {big} short of {big} patients."
    assert isinstance(disclosure(text, 2, "How many admissions had X?"), list)


@pytest.mark.slow
@settings(max_examples=1500, deadline=None)
@given(body=st.lists(st.one_of(
    st.sampled_from(["fewer than", "<", "under", "between", "and", "of", "patients", "admissions", "mean", "them",
                     "both", "short of", "the eligible", ".", ";", "\n", "[step 1]", "x 10^", "mg tablet", "%"]),
    st.integers(0, 10**6).map(str), st.sampled_from(["9" * 4400, "\u0668", "\u0968\u0966", "\u00b2", "\u2473", "\ufdfa"])),
    max_size=30).map(" ".join))
def test_fuzz_population_noise_never_verifier_error(body: str, population_tasks: list) -> None:
    """Arbitrary Reasonings on population Noise tasks with 1-4 eligible units (the five-unit rule
    reads them in full): a verdict, never VERIFIER_ERROR."""
    for task, db in population_tasks:
        traj = Trajectory(trajectory_id="t", task_id=task.task_id, final_response=f"<answer>NULL</answer><reasoning>{body}</reasoning>")
        v = verify(traj, task, VerifyConfig(db_path=str(db)))
        assert ReasonCode.VERIFIER_ERROR not in v.reasons, v.details


@pytest.fixture(scope="module")
def population_tasks(synth_tasks: list, synth_db) -> list:
    picked = {}
    for t in synth_tasks:
        if t.condition == "noise" and t.scope == "population" and t.reference.eligible_units in (1, 2, 3, 4):
            picked.setdefault(t.reference.eligible_units, (t, synth_db))
    assert picked
    return list(picked.values())
