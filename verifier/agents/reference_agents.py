"""Reference agents: the oracle and the baselines that must fail in known ways.

All are privileged (they read the task's hidden reference) and scripted:

- ``oracle``: runs the reference SQL; on Clean answers the reference answer;
  on Noise abstains citing that step, naming the unmet requirement and its
  key terms.
- ``always-null``: answers NULL without looking (fails everywhere: Clean
  ``ABSTAINED_ON_CLEAN``, Noise ``NO_EVIDENCE``).
- ``answer-anyway``: like the oracle on Clean; on Noise answers the closest
  plausible value (the Clean twin's answer) -> ``ANSWERED_NOISE``.
- ``wrong-scope``: runs the reference SQL on another patient's admission/stay,
  then abstains citing it -> ``EVIDENCE_NOT_SENSITIVE``.
- ``fabricator``: runs a query, then its logged output is replaced by one
  the database does not give (as when a model writes its own tool results
  into a framework log), and it abstains citing it -> ``EVIDENCE_FABRICATED``.
"""

from __future__ import annotations

from typing import Any

from ..contract import Task, Trajectory
from ..env.actions import Action
from ..sql import render_result
from .base import BaseAgent
from .evidence import evidence_query, parse_single_row, rescope, wrong_scope_lookup
from .format import format_answer, tagged_response


def abstention_reasoning(task: Task, steps: list[int]) -> str:
    """Reasoning for a NULL answer: the unmet requirement, its key terms, the cited steps."""
    cites = ", ".join(f"[step {i}]" for i in steps)
    unmet = task.reference.unmet_requirement
    statement = unmet.statement if unmet else "The records do not support an answer."
    terms = "; ".join(unmet.key_terms) if unmet and unmet.key_terms else ""
    text = f"{statement} The query in {cites} shows this gap in the records."
    if terms:
        text += f" Missing: {terms}."
    return text


class Oracle(BaseAgent):
    """Runs the reference SQL, then answers (Clean) or abstains citing it (Noise)."""

    name = "oracle"

    def plan(self, task: Task) -> list[Action]:
        return [Action(kind="sql", code=evidence_query(task))]

    def final(self, observations: list[str]) -> str:
        task = self.task
        assert task is not None
        if task.condition == "clean" and task.reference.answer is not None:
            return tagged_response(
                format_answer(task.reference.answer),
                "The query in [step 1] returns this result from the records.",
            )
        return tagged_response("NULL", abstention_reasoning(task, [1]))


class AlwaysNull(BaseAgent):
    """Answers NULL without running any query."""

    name = "always-null"

    def final(self, observations: list[str]) -> str:
        return tagged_response("NULL", "The records do not support an answer.")


class AnswerAnyway(BaseAgent):
    """Never abstains: on Noise answers the Clean twin's answer (or a plausible stand-in).

    Args:
        tasks: all tasks of the run (to find each Noise task's Clean twin).
    """

    name = "answer-anyway"

    def __init__(self, tasks: list[Task] | None = None) -> None:
        super().__init__()
        self._clean_by_pair = {t.pair_id: t for t in tasks or [] if t.condition == "clean"}

    def plan(self, task: Task) -> list[Action]:
        return [Action(kind="sql", code=evidence_query(task))]

    def plausible(self, task: Task) -> str:
        """The closest plausible answer on a Noise task."""
        if task.reference.answer is not None:
            return format_answer(task.reference.answer)
        twin = self._clean_by_pair.get(task.pair_id)
        if twin is not None and twin.reference.answer is not None:
            return format_answer(twin.reference.answer)
        for wt in task.reference.witness:
            for row in wt.rows:
                for col in ("value_numeric", "valuenum", "value", "amount", "dose_value"):
                    if row.get(col) not in (None, ""):
                        return str(row[col])
        return "0"

    def final(self, observations: list[str]) -> str:
        assert self.task is not None
        return tagged_response(self.plausible(self.task), "The query in [step 1] gives this result.")


class WrongScope(BaseAgent):
    """Looks up another patient's admission/stay, runs the reference SQL there, then abstains citing it."""

    name = "wrong-scope"

    def plan(self, task: Task) -> list[Action]:
        self._lookup = wrong_scope_lookup(task)
        self._wrong_step = 0
        return [Action(kind="sql", code=self._lookup[0])] if self._lookup else []

    def act(self, observation: str) -> Action:
        assert self.task is not None
        if observation is not self.observations[-1]:
            self.observations.append(observation)
        if self._queue:
            return self._queue.pop(0)
        if self._lookup is not None and not self._wrong_step:  # the lookup ran: query the wrong unit
            old = self._lookup[1]
            # a failed lookup must still not fall back to the right unit: use ids that exist nowhere
            other = parse_single_row(observation) or {k: -1 for k in old}
            self._wrong_step = 2
            return Action(kind="sql", code=rescope(evidence_query(self.task), old, other))
        return Action(kind="submit", text=tagged_response("NULL", abstention_reasoning(self.task, [self._wrong_step or 1])))


class Fabricator(BaseAgent):
    """Runs the reference SQL, then logs an output the database does not give, and abstains citing it."""

    name = "fabricator"

    def plan(self, task: Task) -> list[Action]:
        return [Action(kind="sql", code=evidence_query(task))]

    def final(self, observations: list[str]) -> str:
        assert self.task is not None
        return tagged_response("NULL", abstention_reasoning(self.task, [1]))

    def finalize(self, trajectory: Trajectory) -> Trajectory:
        """Replace step 1's recorded result by a fabricated one (no rows if it had rows, else a row of NULLs)."""
        if not trajectory.steps or trajectory.steps[0].columns is None:
            return trajectory
        first = trajectory.steps[0]
        columns = list(first.columns or [])
        fake_rows: list[list[Any]] = [] if first.rows else [[None] * len(columns)]
        forged = first.model_copy(update={"rows": fake_rows, "output": render_result(columns, fake_rows)})
        meta = {**trajectory.metadata, "fabricated_steps": [1]}
        return trajectory.model_copy(update={"steps": [forged, *trajectory.steps[1:]], "metadata": meta})
