"""An inspect_ai ``@task`` over a tasks file: the model plays ``EHREnv`` episodes through tools.

``inspect eval verifier/adapters/inspect_task.py@ehr_verifier -T tasks=tasks.jsonl -T db=demo.duckdb
--model <any>`` (inspect_ai documentation, "Tasks", "Tools", "Scorers"):

* **dataset**: one ``Sample`` per task: ``input`` the question, ``target`` the task id,
  ``metadata`` the task as JSON text plus ``condition`` and ``noise_type`` (``"none"`` on Clean)
  for grouping; nothing of the reference reaches the model;
* **setup**: ``ehr_episode()`` opens the sample's ``EHREnv`` episode (read-only database
  connection, confined Python worker); ``cleanup`` closes it;
* **tools**: ``run_sql(query)`` and ``run_python(code)`` step that episode, so the model sees
  exactly what the environment shows and the verifier re-executes (``[step N]`` framing);
* **solver**: the shared instructions and the schema as the system message, the tools, and
  ``generate()`` (which loops over tool calls until the model answers in text);
* **scorer**: ``ehr_scorer`` with ``accuracy``/``stderr`` overall and grouped by ``condition``
  and by ``noise_type`` (``inspect_ai.scorer.grouped``): metrics ``accuracy``, ``stderr``,
  ``clean``, ``noise`` and one per noise type (``none`` for Clean tasks), no ``all``/``all2`` copies.

inspect_ai is imported when this module is (it is loaded by ``inspect eval`` or on demand).
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import anyio
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import accuracy, grouped, stderr
from inspect_ai.solver import Generate, Solver, TaskState, generate, solver, system_message, use_tools
from inspect_ai.tool import Tool, tool
from inspect_ai.util import store

from verifier.adapters.inspect_scorer import ehr_scorer
from verifier.contract import InputError, Task as EHRTask, load_tasks, validate
from verifier.env import EHREnv, EnvConfig, prompt_schema
from verifier.env.instructions import SHARED_INSTRUCTIONS

#: Open episodes by the key each sample keeps in its ``store()`` (environments are not serialisable).
_EPISODES: dict[str, EHREnv] = {}
_KEY = "ehr_verifier_episode"


def samples(tasks: str | Path) -> list[Sample]:
    """One inspect ``Sample`` per task of a tasks JSONL file.

    Args:
        tasks: the tasks JSONL path.

    Returns:
        Samples with ``id`` and ``target`` the task id, ``input`` the question, and ``metadata``
        ``{"task": Task JSON text, "condition": ..., "noise_type": ... or "none", "scope", "intent"}``.

    Raises:
        InputError / OSError: as ``verifier.contract.load_tasks``.
    """
    return [
        Sample(id=t.task_id, input=t.question, target=t.task_id, metadata={
            "task": t.model_dump_json(), "condition": t.condition, "noise_type": t.noise_type or "none",
            "scope": t.scope, "intent": t.intent,
        })
        for t in load_tasks(tasks).values()
    ]


def _episode() -> EHREnv:
    key = store().get(_KEY)
    env = _EPISODES.get(key) if key else None
    if env is None:
        raise InputError("episode", key, "no open episode for this sample: put ehr_episode() in the task's setup")
    return env


@solver
def ehr_episode(db: str, max_steps: int = 20, schema_detail: str = "compact") -> Solver:
    """Open the sample's ``EHREnv`` episode on its task (``state.metadata["task"]``).

    Args:
        db: the DuckDB database.
        max_steps: tool calls allowed before the episode is truncated.
        schema_detail: ``EnvConfig.schema_detail`` (``"compact"`` or ``"full"``).
    """
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        task = validate(EHRTask, state.metadata["task"], where="sample metadata task: ")
        env = EHREnv(db, EnvConfig(max_steps=max_steps, schema_detail=schema_detail))
        key = uuid.uuid4().hex
        _EPISODES[key] = env
        store().set(_KEY, key)
        await anyio.to_thread.run_sync(lambda: env.reset(task, trajectory_id=f"{state.sample_id}#{state.epoch}"))
        return state

    return solve


async def close_episode(state: TaskState) -> None:
    """The task's ``cleanup``: close the sample's episode (connection, Python worker)."""
    env = _EPISODES.pop(store().get(_KEY, ""), None)
    if env is not None:
        env.close()


async def _step(action: dict[str, Any]) -> str:
    env = _episode()
    if env.done:
        return "Error: the episode is over (tool-call limit reached); answer now."
    obs, *_rest = await anyio.to_thread.run_sync(lambda: env.step(action))
    return obs


@tool
def run_sql() -> Tool:
    """The environment's SQL tool."""
    async def execute(query: str) -> str:
        """Run one read-only SQL query (DuckDB dialect) on the hospital database and see the result.

        Args:
            query: One SQL statement.
        """
        return await _step({"kind": "sql", "code": query})

    return execute


@tool
def run_python() -> Tool:
    """The environment's Python tool."""
    async def execute(code: str) -> str:
        """Run Python code; variables persist between calls; db.sql('SELECT ...') queries the database. Print what you want to see.

        Args:
            code: Python source.
        """
        return await _step({"kind": "python", "code": code})

    return execute


@task
def ehr_verifier(tasks: str, db: str, max_steps: int = 20, schema_detail: str = "compact") -> Task:
    """Clean-Noise tasks over the hospital database, played with ``run_sql`` / ``run_python``.

    Args:
        tasks: tasks JSONL path (``ehr-verifier make-tasks``).
        db: the DuckDB database the tasks were built on.
        max_steps: tool calls per episode.
        schema_detail: the system message's schema description, ``"compact"`` (default) or ``"full"``
            (``-T schema_detail=full``; ``EnvConfig.schema_detail``).

    Returns:
        An inspect_ai ``Task``; its scores are grouped by ``condition`` and ``noise_type``.
    """
    schema = prompt_schema(db, schema_detail)
    return Task(
        dataset=samples(tasks),
        setup=ehr_episode(db, max_steps, schema_detail),
        solver=[system_message(f"{SHARED_INSTRUCTIONS.rstrip()}\n\n## Database schema\n{schema}".replace("{", "{{").replace("}", "}}")),
                use_tools(run_sql(), run_python()), generate()],
        cleanup=close_episode,
        # all=False: each grouped metric would add its own copy of the overall accuracy, which
        # inspect then names "all" and "all2"; the overall figure is `accuracy` itself
        scorer=ehr_scorer(tasks, db, metrics=[accuracy(), stderr(), grouped(accuracy(), "condition", all=False),
                                              grouped(accuracy(), "noise_type", all=False)]),
    )
