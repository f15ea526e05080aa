"""Issue 32, point 1: the response the user sees is what is judged.

A leading reasoning block (``<think>``, ``<thinking>``, DeepSeek-R1's open-less ``...</think>``,
chat messages' ``reasoning_content``/``reasoning`` fields) is set aside before parsing: never an
Answer, never a disclosure, held to its own cap (64,000 characters), not the response cap
(8,000); the verdict's details say how many characters were set aside. HTML comments never
hold the Answer. Through ``verify``, ``verify_batch`` and the TRL and verl adapters.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier import Task, Trajectory, verify
from verifier import ReasonCode as R
from verifier.contract import AnswerPolicy, InputLimits, NumberAnswer, QuantityAnswer, Reference, VerifyConfig

THINK = "Let me look at the lab events. The value could be 4.9 or 12 or 7, not sure yet. " * 400  # ~30,000


def _task(answer=None, policy=None, tid: str = "t-think") -> Task:
    return Task(task_id=tid, pair_id="p", question="What was the first potassium?", condition="clean",
                intent="laboratory_microbiology", program="test",
                reference=Reference(sql="SELECT 1", answer=answer or QuantityAnswer(value=5.2, unit="mmol/L", decimals=1),
                                    answer_policy=policy or AnswerPolicy(analyte="potassium", db_unit="mEq/L")))


def _traj(text: str, tid: str = "t-think") -> Trajectory:
    return Trajectory(trajectory_id="r", task_id=tid, final_response=text)


ANSWER = "<answer>5.2 mEq/L</answer><reasoning>first potassium in labevents [step 1]</reasoning>"


def test_the_think_block_is_thirty_thousand_characters():
    assert 29_000 < len(THINK) < 64_000


@pytest.mark.parametrize("wrap", [
    "<think>{t}</think>\n\n{a}",
    "<THINK>{t}</THINK>{a}",
    "  <thinking>\n{t}\n</thinking>\n{a}",
    "{t}</think>\n\n{a}",  # DeepSeek-R1: the chat template wrote the opening <think>
    "<think>{t}</think><think>more</think>\n{a}",
])
def test_a_correct_answer_after_a_long_think_block_scores_as_without_it(wrap):
    plain = verify(_traj(ANSWER), _task())
    v = verify(_traj(wrap.format(t=THINK, a=ANSWER)), _task())
    assert plain.success
    assert v.success, v.details
    assert v.reasons == plain.reasons
    assert v.details["reasoning_set_aside"] >= len(THINK)
    assert v.details["match"] == plain.details["match"]


def test_no_block_no_detail():
    assert "reasoning_set_aside" not in verify(_traj(ANSWER), _task()).details


def test_a_block_beyond_its_own_cap_is_input_too_large():
    text = "<think>" + "x" * 64_001 + "</think>" + ANSWER
    v = verify(_traj(text), _task())
    assert v.reasons == [R.INPUT_TOO_LARGE]
    assert v.details["input_too_large"]["cap"] == "max_reasoning_chars"


def test_the_visible_reply_keeps_the_response_cap():
    text = "<think>short</think>" + ANSWER + " " * 8_001
    v = verify(_traj(text), _task())
    assert v.reasons == [R.INPUT_TOO_LARGE]
    assert v.details["input_too_large"]["cap"] == "max_response_chars"


def test_the_reasoning_cap_is_configurable():
    cfg = VerifyConfig(limits=InputLimits(max_reasoning_chars=100))
    assert verify(_traj("<think>" + "y" * 200 + "</think>" + ANSWER), _task(), cfg).reasons == [R.INPUT_TOO_LARGE]


def test_the_block_is_never_the_answer():
    # the scratchpad's value is the right one, the visible reply is wrong: the reply is judged
    v = verify(_traj("<think><answer>5.2 mEq/L</answer></think>\n<answer>4.1 mEq/L</answer>"), _task())
    assert not v.success and v.reasons == [R.WRONG_VALUE]
    # a reply that is only a scratchpad (never closed) has no visible answer
    v = verify(_traj("<think>the answer is 5.2 mEq/L"), _task())
    assert v.reasons == [R.UNPARSEABLE_RESPONSE]


def test_a_think_tag_in_the_middle_is_read_as_written():
    from verifier.contract._scratchpad import set_aside

    text = "Answer: 5.2 mEq/L <think>or maybe 4.1 mEq/L</think>"
    assert set_aside(text) == (text, 0)
    assert verify(_traj(text), _task()).reasons == [R.WRONG_VALUE]  # a hedge, as the user sees it


def test_html_comments_never_hold_the_answer():
    v = verify(_traj("Answer: <!-- 5.2 mEq/L --> 4.1 mEq/L"), _task())
    assert v.reasons == [R.WRONG_VALUE], v.details
    v = verify(_traj("<answer><!-- 4.1 mEq/L --> 5.2 mEq/L</answer>"), _task())
    assert v.success, v.details
    n = _task(NumberAnswer(value=7), AnswerPolicy())
    assert not verify(_traj("<!-- 7 --> 9"), n).success


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_characters="<>", blacklist_categories=("Cs",)), max_size=300))
def test_any_scratchpad_leaves_the_verdict_unchanged(scratch):
    plain = verify(_traj(ANSWER), _task())
    v = verify(_traj(f"<think>{scratch}</think>\n{ANSWER}"), _task())
    assert (v.success, v.reasons) == (plain.success, plain.reasons)


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_characters="<>", blacklist_categories=("Cs",)), max_size=200),
       st.sampled_from(["4.1 mEq/L", "NULL", "5.2 or 4.1 mEq/L"]))
def test_a_scratchpad_never_rescues_a_wrong_reply(scratch, wrong):
    # whatever the block holds (the right value included), a wrong visible reply stays wrong
    v = verify(_traj(f"<think>{scratch} 5.2 mEq/L</think><answer>{wrong}</answer>"), _task())
    assert not v.success


# ---- chat messages: reasoning_content / reasoning fields are never the reply --------------------

def test_chat_reasoning_fields_are_not_read():
    from verifier.adapters.common import to_trajectory

    msgs = [{"role": "user", "content": "q"},
            {"role": "assistant", "reasoning_content": "<answer>5.2 mEq/L</answer>", "reasoning": "5.2 mEq/L",
             "content": "<answer>4.1 mEq/L</answer>"}]
    t = to_trajectory(msgs, task_id="t-think", trajectory_id="r")
    assert "5.2" not in t.final_response
    assert verify(t, _task()).reasons == [R.WRONG_VALUE]
    msgs[1] = {"role": "assistant", "reasoning_content": THINK, "content": ANSWER}
    assert verify(to_trajectory(msgs, task_id="t-think", trajectory_id="r"), _task()).success


# ---- verify_batch and the TRL / verl adapters ---------------------------------------------------

def test_verify_batch_scores_a_long_think_block_as_without_it():
    from verifier.scoring import verify_batch

    tsk = _task()
    trajs = [_traj(ANSWER).model_copy(update={"trajectory_id": "a"}),
             _traj(f"<think>{THINK}</think>\n{ANSWER}").model_copy(update={"trajectory_id": "b"})]
    out = list(verify_batch(trajs, {tsk.task_id: tsk}, backend="serial"))
    assert [o["success"] for o in out] == [True, True], out
    assert out[1]["details"]["reasoning_set_aside"] >= len(THINK)


def test_trl_reward_scores_a_long_think_block_as_without_it():
    from verifier.adapters.trl_reward import make_reward_func

    tsk = _task()
    reward = make_reward_func({tsk.task_id: tsk})
    completions = [ANSWER, f"<think>{THINK}</think>\n{ANSWER}", f"{THINK}</think>{ANSWER}",
                   [{"role": "assistant", "content": f"<think>{THINK}</think>\n{ANSWER}"}]]
    assert reward(prompts=["q"] * 4, completions=completions, task_id=[tsk.task_id] * 4) == [1.0] * 4


def test_verl_score_scores_a_long_think_block_as_without_it():
    from verifier.adapters.verl_score import compute_score

    tsk = _task()
    tasks = {tsk.task_id: tsk}
    for text in (ANSWER, f"<think>{THINK}</think>\n{ANSWER}", f"{THINK}</think>\n\n{ANSWER}"):
        out = compute_score("ehr", text, tsk.task_id, tasks=tasks)
        assert out["score"] == 1.0, out
    out = compute_score("ehr", json.dumps([{"role": "assistant", "content": f"<think>{THINK}</think>{ANSWER}"}]),
                        tsk.task_id, tasks=tasks)
    assert out["score"] == 1.0, out


# ---- Noise: the block is never a disclosure --------------------------------------------------------

def test_a_think_block_is_never_a_disclosure(synth_tasks, synth_db):
    tasks = [t for t in synth_tasks if t.condition == "noise" and t.scope == "population"
             and t.reference.eligible_units in (1, 2, 3, 4)][:3]
    assert tasks
    cfg = VerifyConfig(db_path=str(synth_db))
    visible = "<answer>NULL</answer><reasoning>Fewer than five units qualify, so the count is suppressed.</reasoning>"
    for t in tasks:
        n = t.reference.eligible_units
        told = f"Eligible units: {n}. The eligible group has exactly {n} units."

        def run(text: str):
            return verify(Trajectory(trajectory_id="r", task_id=t.task_id, final_response=text), t, cfg)

        plain = run(visible)
        assert R.SMALL_CELL_DISCLOSED not in plain.reasons, plain.details
        leaked = run(visible.replace("</reasoning>", f" {told}</reasoning>"))
        assert R.SMALL_CELL_DISCLOSED in leaked.reasons, leaked.details  # the visible reply is read
        thought = run(f"<think>{told}</think>\n{visible}")
        assert thought.reasons == plain.reasons, thought.details
        assert thought.details["reasoning_set_aside"] > len(told)
