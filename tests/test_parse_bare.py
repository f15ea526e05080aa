"""A final response that is only a NULL spelling (QA pass, finding 2).

"NULL" alone (or "None", "N/A", "null.") is the Answer NULL with an empty Reasoning. On a Noise
task it then fails for what it lacks (reasoning, evidence), never as UNPARSEABLE_RESPONSE; on a
Clean task it is ABSTAINED_ON_CLEAN. Unlabelled values stay unparseable, as the README says.
"""

from __future__ import annotations

import pytest

from verifier import verify
from verifier.contract import ReasonCode as R
from verifier.contract import Trajectory, VerifyConfig
from verifier.parse import parse

BARE_NULLS = ["NULL", "None", "N/A", "null.", "  **null**  ", "`NULL`\n", "n/a."]


@pytest.mark.parametrize("text", BARE_NULLS)
def test_bare_null_is_an_abstention_without_reasoning(text: str) -> None:
    p = parse(text)
    assert p.ok and p.abstained and p.reasoning == "" and p.format == "bare", p


@pytest.mark.parametrize("text", ["4.1 mEq/L", "Nonetheless the value was 4", "NULLS everywhere", "none of them"])
def test_unlabelled_text_stays_unparseable(text: str) -> None:
    assert not parse(text).ok


def _episode(synth_db, task, final: str) -> Trajectory:
    from verifier.agents import make_agent
    from verifier.agents.rollout import run_episode
    from verifier.env import EHREnv

    with EHREnv(str(synth_db)) as env:
        traj, _ = run_episode(env, make_agent("oracle", tasks=[task]), task)
    return traj.model_copy(update={"final_response": final})


def test_bare_null_on_noise_fails_for_its_real_reason(synth_db, synth_tasks: list) -> None:
    """On the synthetic hospital: the oracle's evidence steps + a bare NULL lacks only its reasoning."""
    task = next(t for t in synth_tasks if t.condition == "noise")
    cfg = VerifyConfig(db_path=str(synth_db))
    with_steps = verify(_episode(synth_db, task, "NULL"), task, cfg)
    assert not with_steps.success and with_steps.abstained
    assert R.UNPARSEABLE_RESPONSE not in with_steps.reasons
    assert {R.REASONING_MISSES_REQUIREMENT, R.REASONING_NOT_SPECIFIC, R.NO_EVIDENCE} & set(with_steps.reasons), \
        with_steps.reasons
    no_steps = verify(Trajectory(trajectory_id="t", task_id=task.task_id, steps=[], final_response="null."), task, cfg)
    assert not no_steps.success and no_steps.abstained
    assert R.UNPARSEABLE_RESPONSE not in no_steps.reasons and R.NO_EVIDENCE in no_steps.reasons, no_steps.reasons


def test_bare_null_on_clean_is_an_abstention(synth_tasks: list) -> None:
    task = next(t for t in synth_tasks if t.condition == "clean")
    v = verify(Trajectory(trajectory_id="t", task_id=task.task_id, steps=[], final_response="N/A"), task)
    assert not v.success and v.reasons == [R.ABSTAINED_ON_CLEAN], v.reasons
