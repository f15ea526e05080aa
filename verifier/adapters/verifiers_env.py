"""A prime-intellect ``verifiers`` environment: ``run_sql`` / ``run_python`` on an ``EHREnv`` episode, reward = ``verify``.

``verifiers`` >= 0.4 (``import verifiers.v1 as vf``) composes an environment from a **taskset**
plugin (a module whose ``__all__`` exports one ``vf.Taskset`` subclass, named by its import path
as ``taskset.id``) and an agent harness; ``vf.load_environment(vf.EnvConfig(...))`` builds the
``vf.Env`` (``SingleAgentEnv`` for a plain taskset). There is no ``vf.ToolEnv`` any more: tools
are ``vf.Toolset`` MCP servers that each rollout launches (``python -m <module>``, which is why
this module ends with ``EHRToolset.run()``), given the rollout's task through ``setup_task``; a
toolset shares a typed ``vf.State`` with the rollout (``trace.state``); rewards are
``@vf.reward`` methods of the ``vf.Task`` (verifiers' ``verifiers/v1/task.py``, ``taskset.py``,
``mcp/server.py``).

* :class:`EHRTaskset` (``taskset.id`` = this module): one :class:`EHRTask` per task of the
  tasks file; the prompt is the environment's reset observation (instructions, schema, question);
* :class:`EHRToolset`: tools ``run_sql(query)`` and ``run_python(code)`` stepping the rollout's
  ``EHREnv`` (advertised bare: ``TOOL_PREFIX = None``); after each call the episode's recorded
  steps go into the rollout state (:class:`EHRState` ``episode``);
* :meth:`EHRTask.ehr_verify`: the reward: the episode's steps with the trace's last reply as the
  final response, scored by ``verify`` (1.0 / 0.0); :meth:`EHRTask.ehr_abstained` a metric;
* :func:`load_environment`: ``load_environment(tasks=..., db=...) -> vf.Env``.

verifiers resolves a taskset id as a top-level module name (a dotted id fails its lookup), so
importing this module also makes it importable as :data:`TASKSET_ID` (``ehr_verifier_taskset``).
For verifiers' own CLI (``eval ehr_verifier_taskset``), put a file ``ehr_verifier_taskset.py``
on the path holding ``from verifier.adapters.verifiers_env import EHRTaskset; __all__ =
["EHRTaskset"]``.

``verifiers`` is imported when this module is (extra ``.[verifiers]``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import verifiers.v1 as vf

from verifier.adapters.common import read_trajectory
from verifier.contract import InputError, Task, Trajectory, VerifyConfig, load_tasks


class EHRState(vf.State):
    """Rollout state shared by the toolset and the task: ``episode`` is the Trajectory JSON so far."""

    episode: dict[str, Any] | None = None


class EHRToolsetConfig(vf.ToolsetConfig):
    """The toolset's config: ``db`` the DuckDB file; ``max_steps`` the tool-call limit (0: EnvConfig's)."""

    db: str = ""
    max_steps: int = 0


class EHRToolset(vf.Toolset[EHRToolsetConfig, EHRState]):
    """``run_sql`` / ``run_python`` on one ``EHREnv`` episode per rollout (a per-rollout MCP server)."""

    TOOL_PREFIX = None

    def __init__(self, config: EHRToolsetConfig) -> None:
        super().__init__(config)
        self.env: Any = None

    async def setup_task(self, task: Any) -> None:
        """Open the rollout's episode on ``task`` (the rollout's :class:`EHRTaskData`).

        Raises:
            InputError: no ``db`` in the toolset config, or the task JSON is invalid.
        """
        from verifier.env import EHREnv, EnvConfig

        if not self.config.db:
            raise InputError("tools.db", self.config.db, "the toolset needs the DuckDB file")
        ehr_task = Task.model_validate_json(task.task)
        self.env = EHREnv(self.config.db, EnvConfig(max_steps=self.config.max_steps) if self.config.max_steps else None)
        self.env.reset(ehr_task, metadata={"framework": "verifiers"})

    def _act(self, kind: str, code: str) -> str:
        if self.env is None:
            return "Error: no episode (the toolset was not given a task)."
        if self.env.done:
            return "Error: the episode is over (tool-call limit reached); nothing was run."
        obs, *_ = self.env.step({"kind": kind, "code": code})
        self.state.episode = self.env.trajectory.model_dump(mode="json")
        return obs

    @vf.tool
    def run_sql(self, query: str) -> str:
        """Run one read-only SQL query (DuckDB dialect) on the hospital database and see the result."""
        return self._act("sql", query)

    @vf.tool
    def run_python(self, code: str) -> str:
        """Run Python code; variables persist between calls; db.sql('SELECT ...') queries the database."""
        return self._act("python", code)


class EHRTaskData(vf.TaskData):
    """A task on the wire: ``task`` the Task as JSON text, ``condition`` for grouping."""

    task: str
    condition: str = ""


class EHRTaskConfig(vf.TaskConfig):
    """Per-task config: ``tools`` the toolset's, ``db`` the database the reward re-executes evidence on."""

    tools: EHRToolsetConfig = EHRToolsetConfig()
    db: str = ""


class EHRTask(vf.Task[EHRTaskData, EHRState, EHRTaskConfig]):
    """One clinical question; reward ``ehr_verify`` (``verify`` on the episode)."""

    @property
    def key(self) -> str:
        """The task id (stable across runs)."""
        return self.data.id or self.hash

    @classmethod
    def toolsets(cls, config: EHRTaskConfig) -> list[vf.Toolset]:
        """The per-rollout :class:`EHRToolset`."""
        return [EHRToolset(config.tools)]

    def trajectory(self, trace: Any) -> Trajectory:
        """The rollout as a Trajectory: the toolset's recorded steps, the trace's last reply.

        Args:
            trace: the ``vf.Trace`` (its ``state.episode`` and ``last_reply``).

        Returns:
            The Trajectory (no steps when the model called no tool).
        """
        ehr_task = Task.model_validate_json(self.data.task)
        tid = f"verifiers-{getattr(trace, 'id', '') or ehr_task.task_id}"
        episode = getattr(getattr(trace, "state", None), "episode", None)
        if episode is None:
            return Trajectory(trajectory_id=tid, task_id=ehr_task.task_id, final_response=trace.last_reply)
        traj = read_trajectory(episode, task_id=ehr_task.task_id, trajectory_id=tid, field="trace.state.episode")
        return traj.model_copy(update={"final_response": trace.last_reply})

    def _verdict(self, trace: Any) -> Any:
        from verifier.verify import verify

        ehr_task = Task.model_validate_json(self.data.task)
        return verify(self.trajectory(trace), ehr_task, VerifyConfig(db_path=self.config.db or None))

    @vf.reward(weight=1.0)
    async def ehr_verify(self, trace: vf.Trace) -> float:
        """``verify``'s score of the rollout: 1.0 success, 0.0 failure."""
        return float(self._verdict(trace).score)

    @vf.metric
    async def ehr_abstained(self, trace: vf.Trace) -> float:
        """1.0 when the final response abstained (NULL), else 0.0."""
        return float(self._verdict(trace).abstained)


class EHRTasksetConfig(vf.TasksetConfig):
    """``tasks`` the tasks JSONL, ``db`` the DuckDB file; ``task`` the per-task config (db filled in)."""

    tasks: str = ""
    db: str = ""
    task: EHRTaskConfig = EHRTaskConfig()


class EHRTaskset(vf.Taskset[EHRTask, EHRTasksetConfig]):
    """The tasks of a tasks file as verifiers tasks (prompt: the reset observation)."""

    def load(self) -> list[EHRTask]:
        """One :class:`EHRTask` per task, in file order.

        Raises:
            InputError: no ``tasks`` / ``db`` in the config, or an unreadable tasks file.
        """
        from verifier.env import prompt_schema
        from verifier.env.instructions import reset_observation

        cfg = self.config
        for field in ("tasks", "db"):
            if not getattr(cfg, field):
                raise InputError(f"taskset.{field}", getattr(cfg, field), "set the tasks JSONL and the DuckDB file")
        task_cfg = cfg.task.model_copy(update={"db": cfg.task.db or cfg.db,
                                               "tools": cfg.task.tools.model_copy(update={"db": cfg.task.tools.db or cfg.db})})
        schema = prompt_schema(cfg.db)
        return [EHRTask(EHRTaskData(id=t.task_id, name=t.task_id, prompt=reset_observation(t.question, schema),
                                    task=t.model_dump_json(), condition=t.condition), task_cfg)
                for t in load_tasks(cfg.tasks).values()]


def load_environment(tasks: str | Path, db: str | Path, *, max_steps: int = 0, **env: Any) -> Any:
    """The ``vf.Env`` over a tasks file (verifiers' own ``load_environment`` on this taskset).

    Args:
        tasks: the tasks JSONL.
        db: the DuckDB database (the tools' and the reward's).
        max_steps: tool calls per episode (0: ``EnvConfig``'s default).
        **env: other ``vf.SingleAgentEnvConfig`` fields (e.g. ``agent``).

    Returns:
        The ``vf.Env`` (``SingleAgentEnv``) whose taskset is :class:`EHRTaskset`.

    Raises:
        InputError: the tasks file does not exist.
    """
    if not Path(tasks).is_file():
        raise InputError("tasks", str(tasks), "no such tasks file")
    taskset = EHRTasksetConfig(id=TASKSET_ID, tasks=str(tasks), db=str(db),
                               task=EHRTaskConfig(db=str(db), tools=EHRToolsetConfig(db=str(db), max_steps=max_steps)))
    return vf.load_environment(vf.SingleAgentEnvConfig(taskset=taskset, **env))


__all__ = ["EHRTaskset"]
#: The taskset id verifiers resolves (a top-level module name: this module under another name).
TASKSET_ID = "ehr_verifier_taskset"
sys.modules.setdefault(TASKSET_ID, sys.modules[__name__])

if __name__ == "__main__":  # verifiers launches the per-rollout tool server as `python -m <module>`
    EHRToolset.run()
