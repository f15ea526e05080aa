"""Shared helpers of the blind-form tests: a one-answer Clean task and whether a final Answer matches it.

The task's reference is a single value (``reference.answer``, the SQL a constant): these tests judge the
matching of the Answer text alone, with no database.
"""

from __future__ import annotations

from verifier import Task, Trajectory, verify
from verifier.contract import AnswerPolicy, Step


def clean_task(answer, question: str, policy: AnswerPolicy | None = None,
               intent: str = "laboratory_microbiology") -> Task:
    """A patient-scope Clean task whose reference answer is ``answer`` (a contract answer model).

    Args:
        answer: e.g. ``QuantityAnswer(value=4.1, unit="mEq/L", decimals=1)``; its ``decimals`` (when it has
            them) set the policy's rounding unless ``policy`` is given.
        question: the question text (the matcher reads the question's words).
        policy: the answer policy; default ``AnswerPolicy(decimals=answer.decimals)``.
        intent: the task's intent label.

    Returns:
        The Task (``task_id`` "t-clean").
    """
    policy = policy or AnswerPolicy(decimals=getattr(answer, "decimals", None))
    return Task(task_id="t-clean", pair_id="t", question=question, condition="clean", scope="patient",
                intent=intent, program="p",
                reference={"sql": "SELECT 1 AS value", "answer": answer.model_dump(), "answer_policy": policy.model_dump()})


def answer_ok(answer_text: str, task: Task, steps: list[Step] | None = None) -> bool:
    """Whether a final response with ``answer_text`` as its Answer (and a one-line Reasoning) succeeds on ``task``."""
    traj = Trajectory(trajectory_id="x", task_id=task.task_id, steps=steps or [],
                      final_response=f"<answer>{answer_text}</answer><reasoning>As shown [step 1].</reasoning>")
    return verify(traj, task).success
