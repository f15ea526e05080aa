"""TRL ``environment_factory``: the model plays ``EHREnv`` episodes through tools during GRPO.

TRL's ``GRPOTrainer(environment_factory=...)`` (TRL >= 1.0, experimental there) calls the
factory with no argument to make one environment per rollout, reuses instances across
batches, calls ``reset(**row)`` with the dataset row before generation (a returned string is
appended to the last user message), and exposes every public method of the class other than
``reset`` / ``get_reward`` as a tool (schema from type hints and Google-style docstrings);
reward functions then receive the rollouts' instances as ``environments=`` (TRL's
``GRPOTrainer`` documentation, "environment_factory").

* :class:`EHRToolEnv`: tools ``run_sql(query)`` and ``run_python(code)``, each running the action
  in the instance's ``EHREnv`` (SQL under the verifier's rules, Python in the confined worker), so
  what the model saw is recorded exactly as the verifier re-executes it. The tools are
  ``verifier.env.TOOLS`` (same names, descriptions and parameters), and the final response is the
  model's last message without a tool call, as the shared instructions say and as the exported SFT
  and DPO records, verl and inspect have it: one tool format for every framework (issue 34; there
  is no ``submit`` tool);
* :func:`environment_factory`: the zero-argument factory bound to the tasks and database;
* :func:`env_reward_func`: the reward read from the environments: each episode's verdict (the
  episode is ended with the model's last assistant text, its final response, unless the tool-call
  limit ended it first), with reason codes
  logged through ``log_extra`` / ``log_metric``.

The class has no ``get_reward``: TRL would add it as a second reward source beside
``env_reward_func`` and it could not log reason codes. It imports nothing from TRL.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from ..contract import InputError, Task, Verdict
from ..env import EHREnv, EnvConfig
from .common import _last_assistant_text, resolve_task, task_map
from .trl_reward import log_verdicts


class EHRToolEnv:
    """One GRPO rollout's episode over the hospital database, with tools for the model.

    Args:
        tasks: ``{task_id: Task}`` or a tasks JSONL path, for rows that carry a ``task_id``
            (rows carrying the Task as JSON text in ``task`` need none).
        db: the DuckDB database (opened read-only per episode).
        config: ``EnvConfig`` (``max_steps``, Python limits, verification settings).

    Attributes:
        task: the episode's Task (None before ``reset``).
        verdict: the episode's Verdict once it ended (submission, ``max_steps``, or the reward
            function ending it), else None.
    """

    def __init__(self, tasks: Mapping[str, Task] | str | Path | None, db: str | Path, config: EnvConfig | None = None) -> None:
        self._tasks = tasks
        self._env = EHREnv(str(db), config)
        self.task: Task | None = None
        self.verdict: Verdict | None = None

    def reset(self, **row: Any) -> str | None:
        """Start the episode of a dataset row (TRL passes the row's columns as keywords).

        Args:
            **row: ``task`` (Task JSON text, dict or Task) or ``task_id``; ``prompt`` (the row's
                prompt); ``trajectory_id`` (optional).

        Returns:
            The observation (instructions, schema, question), or None when the prompt's last
            message already holds the question (``to_grpo_dataset(prompt="observation")``).

        Raises:
            InputError: the row has no task, or an unknown, invalid or altered one.
        """
        ref = row.get("task") if row.get("task") is not None else row.get("task_id")
        if ref is None:
            raise InputError("task", None, "the dataset row needs a 'task' or 'task_id' column")
        self.task = resolve_task(ref, task_map(self._tasks), field="row.task")
        self.verdict = None
        obs, _info = self._env.reset(self.task, trajectory_id=row.get("trajectory_id"))
        prompt = row.get("prompt")
        last = prompt[-1].get("content") if isinstance(prompt, list) and prompt and isinstance(prompt[-1], Mapping) else prompt
        if isinstance(last, str) and self.task.question.strip() in last:
            return None
        return obs

    def _act(self, action: dict[str, Any]) -> str:
        if self.task is None or self._env.done:
            return "Error: the episode is over; nothing was run."
        obs, _reward, terminated, truncated, info = self._env.step(action)
        if terminated or truncated:
            self.verdict = info["verdict"]
        return obs

    def run_sql(self, query: str) -> str:
        """Run one read-only SQL query (DuckDB dialect) on the hospital database and see the result.

        Args:
            query: One SQL statement.

        Returns:
            The result as a text table, or an error message.
        """
        return self._act({"kind": "sql", "code": query})

    def run_python(self, code: str) -> str:
        """Run Python code; variables persist between calls; db.sql('SELECT ...') queries the database. Print what you want to see.

        Args:
            code: Python source.

        Returns:
            What the code printed, or its error.
        """
        return self._act({"kind": "python", "code": code})

    def _finish(self, text: str) -> Verdict:
        """End the episode (if still open) with ``text`` as its final response; the verdict."""
        if self.task is None:
            raise InputError("environment", None, "reset was never called: no episode to score")
        if not self._env.done:
            self._act({"kind": "submit", "text": text})
        assert self.verdict is not None
        return self.verdict


def environment_factory(tasks: Mapping[str, Task] | str | Path | None, db: str | Path,
                        config: EnvConfig | None = None) -> Callable[[], EHRToolEnv]:
    """The ``environment_factory`` argument of TRL's ``GRPOTrainer``.

    Args:
        tasks: ``{task_id: Task}`` or a tasks JSONL path (for ``task_id`` rows; see ``EHRToolEnv``).
        db: the DuckDB database.
        config: ``EnvConfig`` for every episode.

    Returns:
        A zero-argument callable making a new :class:`EHRToolEnv`.
    """
    def make() -> EHRToolEnv:
        return EHRToolEnv(tasks, db, config)

    return make


def env_reward_func(completions: Sequence[Any] | None = None, environments: Sequence[Any] | None = None,
                    **kwargs: Any) -> list[float]:
    """GRPO reward read from the rollouts' environments (pass it in ``reward_funcs``).

    Args:
        completions: the rollouts' completions (message lists or text), one per environment: the
            last assistant text (the final response) ends an episode still open.
        environments: TRL's ``environments`` keyword: the :class:`EHRToolEnv` of each rollout.
        **kwargs: TRL's other keywords; ``log_extra`` / ``log_metric`` receive the reason codes
            (see ``verifier.adapters.trl_reward.log_verdicts``).

    Returns:
        One verdict score per rollout (1.0 success, 0.0 failure); the verdicts are kept on
        ``env_reward_func.last_verdicts``.

    Raises:
        InputError: no ``environments`` (the trainer has no ``environment_factory``), an
            environment that is not an ``EHRToolEnv`` or was never reset, or a completion count
            that differs from the environment count.
    """
    envs = list(environments or [])
    if not envs:
        raise InputError("environments", environments, "no environments: pass environment_factory(...) to GRPOTrainer")
    comps = list(completions) if completions is not None else [None] * len(envs)
    if len(comps) != len(envs):
        raise InputError("completions", f"{len(comps)} values", f"expected one per environment ({len(envs)})")
    verdicts = []
    for i, (env, completion) in enumerate(zip(envs, comps)):
        if not isinstance(env, EHRToolEnv):
            raise InputError(f"environments[{i}]", type(env).__name__, "expected an EHRToolEnv (verifier.adapters.trl_env)")
        text = completion if isinstance(completion, str) else _last_assistant_text(completion or [])
        verdicts.append(env._finish(text))  # noqa: SLF001 - the reward ends what the model left open
    env_reward_func.last_verdicts = verdicts  # type: ignore[attr-defined]
    log_verdicts(verdicts, kwargs.get("log_extra"), kwargs.get("log_metric"))
    return [v.score for v in verdicts]


env_reward_func.last_verdicts = []  # type: ignore[attr-defined]
