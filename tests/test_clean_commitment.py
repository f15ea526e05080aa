"""Clean answers judged on what they commit to (ported scorer bug reports).

Failure kinds, each written from its description with our own values:
1. several answer tags with differing contents: the last one won, so a response hedging
   between two values (or between a value and NULL) passed; identical repeats stay fine, and
   the Noise path (a committed NULL) agrees with the Clean one;
2. a value stated at the Answer's own reasonable precision (one decimal for a reference kept
   at two) was rejected; the route is narrow (d >= 1 decimals, 2 significant digits, fewer
   decimals than the policy, the reference rounds to it) and opens no hedge;
3. lactate mg/dL <-> mmol/L used the lactate anion's molar mass instead of lactic acid's
   (the clinical factor 0.111);
4. a parenthetical aside after a committed date-time describing another event's date made
   the Answer ambiguous; two bare candidate dates still must.
Real data: tasks of the synthetic hospital (``synth_tasks``, ``synth_db``) and small tasks
built here.
"""

from __future__ import annotations

import datetime as dt
from decimal import ROUND_HALF_UP, Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from verifier import verify
from verifier.contract import (
    AnswerPolicy,
    CountAnswer,
    DatetimeAnswer,
    NumberAnswer,
    QuantityAnswer,
    ReasonCode,
    Task,
    Trajectory,
    VerifyConfig,
)
from verifier.match.dispatch import match_answer
from verifier.match.numbers import stated_precision
from verifier.parse import parse

SETTINGS = settings(max_examples=150, deadline=None)


def _run(task, response: str, config=None):
    return verify(Trajectory(trajectory_id="t", task_id=task.task_id, steps=[], final_response=response), task, config)


def _task(answer: dict, policy: dict, question: str = "What was it?") -> Task:
    return Task.model_validate({
        "task_id": "c-clean", "pair_id": "c", "condition": "clean", "question": question,
        "intent": "laboratory_microbiology", "program": "hand_written",
        "reference": {"sql": "SELECT 1", "answer": answer, "answer_policy": policy},
    })


# ---------------------------------------------------------------- 1. several answer tags
def test_differing_answer_tags_are_a_hedge_on_real_clean_tasks(synth_tasks) -> None:
    tasks = [t for t in synth_tasks if t.condition == "clean" and isinstance(t.reference.answer, CountAnswer)][:6]
    assert tasks, "the synthetic hospital builds Clean count tasks"
    for task in tasks:
        n = task.reference.answer.value
        for response in (f"<answer>{n + 3}</answer> then on reflection <answer>{n}</answer>",
                         f"<answer>{n}</answer><reasoning>counted</reasoning><answer>{n + 1}</answer>",
                         f"<answer>NULL</answer><answer>{n}</answer>",
                         f"<answer>{n}</answer><answer>null</answer>"):
            v = _run(task, response)
            assert not v.success and v.reasons == [ReasonCode.WRONG_VALUE], (task.task_id, response, v.reasons)
            assert "ambiguous" in v.details["match"]["why"]
        for response in (f"<answer>{n}</answer><answer> {n} </answer>",
                         f"<answer>{n}</answer><reasoning>counted</reasoning><answer>{n} admissions</answer>"):
            v = _run(task, response)
            assert v.success, (task.task_id, response, v.reasons, v.details)


def test_a_null_beside_a_differing_answer_tag_is_no_committed_null(synth_tasks, synth_db) -> None:
    noise = next(t for t in synth_tasks if t.condition == "noise")
    config = VerifyConfig(db_path=str(synth_db))
    for response in ("<answer>7</answer><answer>NULL</answer><reasoning>not recorded</reasoning>",
                     "<answer>NULL</answer><reasoning>not recorded</reasoning><answer>7</answer>"):
        assert not parse(response).abstained
        v = _run(noise, response, config)
        assert not v.success and ReasonCode.ANSWERED_NOISE in v.reasons and not v.abstained, v.reasons
    both = "<answer>NULL</answer><reasoning>not recorded</reasoning><answer>NULL - nothing recorded</answer>"
    assert parse(both).abstained
    assert ReasonCode.ANSWERED_NOISE not in _run(noise, both, config).reasons


@SETTINGS
@given(st.from_regex(r"[A-Za-z0-9 .,:/-]{1,30}", fullmatch=True).filter(lambda a: a.strip() and "<" not in a),
       st.integers(2, 5), st.sampled_from(["", " ", "\n"]))
def test_identical_repeated_tags_are_one_answer(answer, times, gap) -> None:
    once = parse(f"<answer>{answer}</answer><reasoning>r</reasoning>")
    many = parse(gap.join([f"<answer>{answer}</answer>"] * times) + "<reasoning>r</reasoning>")
    assert many.answers == () and many.answer_text == once.answer_text and many.abstained == once.abstained


# ---------------------------------------------------------------- 2. a value at its own precision
def test_a_value_at_its_own_precision_matches_on_real_quantity_tasks(synth_tasks) -> None:
    tasks = [t for t in synth_tasks if t.condition == "clean" and isinstance(t.reference.answer, QuantityAnswer)
             and (t.reference.answer_policy.decimals or 0) >= 2 and abs(t.reference.answer.value) >= 1][:8]
    assert tasks, "the synthetic hospital builds Clean quantity tasks at two decimals"
    for task in tasks:
        ref = task.reference.answer
        one = Decimal(repr(ref.value)).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP)
        v = _run(task, f"<answer>{one} {ref.unit}</answer>")
        assert v.success, (task.task_id, ref.value, str(one), v.details)
        allowed = (task.reference.answer_policy.rel_tol or 0.0) * abs(ref.value)  # the policy's own tolerance
        k = int(allowed / 0.1) + 1  # the first one-decimal value beyond the tolerance, measured from the reference
        while abs(float(one + Decimal("0.1") * k) - ref.value) <= allowed:
            k += 1
        off = _run(task, f"<answer>{one + Decimal('0.1') * k} {ref.unit}</answer>")
        assert not off.success, (task.task_id, ref.value, v.details)


def test_the_own_precision_route_is_narrow() -> None:
    two = AnswerPolicy(decimals=2)
    mean = NumberAnswer(value=2.46, decimals=2)
    assert match_answer("2.5", mean, two).ok
    assert not match_answer("2.4", mean, two).ok
    assert not match_answer("2", mean, two).ok            # an integer never takes the route
    assert not match_answer("2.5 or 2.4", mean, two).ok   # no hedge opens
    assert not match_answer("0.1", NumberAnswer(value=0.06, decimals=2), two).ok  # one significant digit
    tie = QuantityAnswer(value=3.45, unit="mEq/L", decimals=2)
    tight = AnswerPolicy(decimals=2, rel_tol=0.005, analyte="potassium", db_unit="mEq/L")
    assert match_answer("3.5 mEq/L", tie, tight).ok       # half away from zero
    assert not match_answer("3.4 mEq/L", tie, tight).ok
    assert match_answer("3.5 mmol/L", tie, tight).ok      # in the reference's unit after conversion


@SETTINGS
@given(st.integers(100, 99999), st.sampled_from([1, 2]))
def test_own_precision_property(cents, d) -> None:
    ref = cents / 1000.0  # three decimals
    policy = AnswerPolicy(decimals=3)
    stated = Decimal(repr(ref)).quantize(Decimal(1).scaleb(-d), rounding=ROUND_HALF_UP)
    if len(str(stated).replace(".", "").replace("-", "").lstrip("0")) < 2:
        return
    assert match_answer(str(stated), NumberAnswer(value=ref, decimals=3), policy).ok
    step = Decimal(1).scaleb(-d)  # the route itself admits only the rounding (the older overlap rule may add more)
    assert stated_precision(float(stated), d, ref, 3)
    assert not stated_precision(float(stated + step), d, ref, 3)
    assert not stated_precision(float(stated - step), d, ref, 3)


# ---------------------------------------------------------------- 3. lactate as lactic acid
def test_lactate_converts_as_lactic_acid() -> None:
    task = _task({"type": "quantity", "value": 2.5, "unit": "mmol/L", "decimals": 2},
                 {"decimals": 2, "analyte": "lactate", "db_unit": "mmol/L"}, "First lactate of admission 1?")
    assert _run(task, "<answer>22.52 mg/dL</answer>").success   # 2.5 x 9.008
    assert not _run(task, "<answer>22.27 mg/dL</answer>").success  # the anion's 89.07 g/mol
    back = _task({"type": "quantity", "value": 36.0, "unit": "mg/dL", "decimals": 1},
                 {"decimals": 1, "analyte": "lactate", "db_unit": "mg/dL"}, "First lactate of admission 1?")
    assert _run(back, "<answer>3.996 mmol/L</answer>").success   # 36 x 0.111


# ---------------------------------------------------------------- 4. an aside about another event
def test_a_parenthetical_about_another_event_is_context_on_real_datetime_tasks(synth_tasks) -> None:
    tasks = [t for t in synth_tasks if t.condition == "clean" and isinstance(t.reference.answer, DatetimeAnswer)
             and t.reference.answer.precision == "minute"][:6]
    assert tasks
    for task in tasks:
        ref = task.reference.answer.value
        said = f"{ref:%Y-%m-%d %H:%M}"
        other = ref + dt.timedelta(days=3, hours=5)
        for aside in (f"(moved back to the floor on {other:%Y-%m-%d %H:%M})", f"(discharge followed on {other:%Y-%m-%d})",
                      f"(then readmitted {other:%B %d, %Y})"):
            v = _run(task, f"<answer>{said} {aside}</answer>")
            assert v.success, (task.task_id, aside, v.details)
        for hedge in (f"{said} ({other:%Y-%m-%d %H:%M})", f"{said} (on {other:%Y-%m-%d})",
                      f"{said} or {other:%Y-%m-%d %H:%M}", f"{said} (possibly {other:%Y-%m-%d %H:%M})",
                      # a review: a parenthetical that corrects or conditions the value is a second candidate
                      f"{said} (corrected: {other:%Y-%m-%d %H:%M})", f"{said} (revised to {other:%Y-%m-%d %H:%M})",
                      f"{said} (if the first transfer counts: {other:%Y-%m-%d %H:%M})"):
            v = _run(task, f"<answer>{hedge}</answer>")
            assert not v.success and v.reasons == [ReasonCode.WRONG_VALUE], (task.task_id, hedge, v.details)
        wrong = _run(task, f"<answer>{other:%Y-%m-%d %H:%M} (the stay began {said})</answer>")
        assert not wrong.success, task.task_id  # the committed value is the one outside the aside
