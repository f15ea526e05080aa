"""``EHREnv``: the Gymnasium-style episode loop over one task (ARCHITECTURE.md section 6).

``reset(task)`` shows the shared instructions, the schema description and the
question (nothing else of the task); ``step(action)`` runs SQL (checked by
``verifier.sql._safety``, run in the thread's query process under the verifier's own per-query
limits, ``verifier.sql._guard``, so what the agent saw is what the verifier reproduces), runs
Python (``PythonSandbox``, one worker per episode), or submits the final
response, which is scored with ``verifier.verify.verify``. Every tool call is
recorded as a contract ``Step`` with the text the agent saw, and for SQL the
fetched columns and rows; the episode's ``Trajectory`` is ``env.trajectory``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..contract import (
    InputError,
    Step,
    Task,
    Trajectory,
    UnsafeQueryError,
    Verdict,
    VerifierError,
    VerifyConfig,
)
from ..sql import json_cell, render_result
from .actions import Action, parse_action
from .instructions import SHARED_INSTRUCTIONS, reset_observation
from ..pysandbox import PythonLimits, PythonSandbox, WorkerDied

#: ``scorer(trajectory, task, config) -> Verdict``; default ``verifier.verify.verify``.
Scorer = Callable[[Trajectory, Task, VerifyConfig], Verdict]

#: Tool descriptions (OpenAI function-calling shape) matching the actions.
TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "run_sql",
            "description": "Run one read-only SQL query (DuckDB dialect) on the hospital database and see the result.",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string", "description": "One SQL statement."}},
                "required": ["query"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "run_python",
            "description": "Run Python code; variables persist between calls; db.sql('SELECT ...') queries the database. Print what you want to see.",
            "parameters": {
                "type": "object",
                "properties": {"code": {"type": "string", "description": "Python source."}},
                "required": ["code"],
            },
        },
    },
]


class EnvConfig(BaseModel):
    """Settings of ``EHREnv``.

    Attributes:
        max_steps: tool calls allowed per episode; reaching it without a
            submission truncates the episode (scored with an empty response).
        python: Python worker limits.
        verify: verification settings; its ``query_time_limit_s``, ``row_cap``
            and ``display`` are also the environment's, so the verifier
            re-renders what the agent saw; ``db_path`` is set by the env.
        instructions: the shared instructions shown at reset.
        schema_detail: how much schema description the reset observation shows: ``"compact"``
            (default: tables, columns, types by convention, join keys; about 2,000 tokens on
            MIMIC-IV, the full description one ``run_sql`` away) or ``"full"`` (every column's
            meaning; about 31,000 characters). ``verifier.database.render_schema`` (issue 34).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    max_steps: int = Field(default=20, ge=1)
    python: PythonLimits = Field(default_factory=PythonLimits)
    verify: VerifyConfig = Field(default_factory=VerifyConfig)
    instructions: str = SHARED_INSTRUCTIONS
    schema_detail: Literal["compact", "full"] = "compact"


def prompt_schema(db_path: str | Path, schema_detail: str = "compact") -> str:
    """The schema description a prompt shows for ``db_path``, as ``EHREnv.reset`` shows it.

    Args:
        db_path: the DuckDB file (opened read-only).
        schema_detail: ``"compact"`` or ``"full"`` (``EnvConfig.schema_detail``).

    Raises:
        InputError: another ``schema_detail`` (field ``schema_detail``).
    """
    from ..database import render_schema
    from ..sql import open_readonly

    con = open_readonly(str(db_path))
    try:
        return render_schema(con, schema_detail)
    finally:
        con.close()


def _holds_any(values: Any, needles: tuple[str, ...]) -> bool:
    """Whether any string in ``values`` (a row or column list; nested values by their repr) contains a needle."""
    for v in values:
        if v is None or isinstance(v, (int, float)):
            continue
        text = v if isinstance(v, str) else repr(v)
        if any(n in text for n in needles):
            return True
    return False


def _default_scorer(trajectory: Trajectory, task: Task, config: VerifyConfig) -> Verdict:
    from ..verify import verify

    return verify(trajectory, task, config)


class EHREnv:
    """One agent episode at a time over a DuckDB database.

    Args:
        db_path: the DuckDB file (opened read-only per episode).
        config: ``EnvConfig``.
        scorer: replaces ``verifier.verify.verify`` (tests, other verifiers).

    Gymnasium-style API: ``reset(task) -> (observation, info)``;
    ``step(action) -> (observation, reward, terminated, truncated, info)``;
    ``close()``. Observations are text. ``info`` never holds task labels
    except ``info["verdict"]`` at the end of an episode.
    """

    metadata = {"render_modes": []}

    def __init__(self, db_path: str, config: EnvConfig | None = None, scorer: Scorer | None = None) -> None:
        from ..sql import open_readonly

        self.db_path = str(db_path)
        self.config = config or EnvConfig()
        self.verify_config = self.config.verify.model_copy(update={"db_path": self.db_path})
        here = Path(self.db_path)
        hidden = {str(here), str(here.resolve()), str(here.parent), str(here.resolve().parent)}
        #: Paths an agent must never be shown (the database file and its folder), longest first.
        self._hidden_paths = tuple(sorted((h for h in hidden if len(h) > 1 and h != "."), key=len, reverse=True))
        self.scorer = scorer or _default_scorer
        self._open_readonly = open_readonly
        self._schema: str | None = None
        self._sandbox: PythonSandbox | None = None
        self.task: Task | None = None
        self.steps: list[Step] = []
        self.trajectory_id = ""
        self.final_response = ""
        self.done = True
        self._metadata: dict[str, Any] = {}
        self._invalid = 0  # invalid actions count against max_steps

    # ------------------------------------------------------------ helpers
    def schema(self) -> str:
        """The schema description shown at reset, at ``config.schema_detail`` (cached per env)."""
        if self._schema is None:
            self._schema = prompt_schema(self.db_path, self.config.schema_detail)
        return self._schema

    def _run_sql(self, sql: str) -> tuple[list[str], list[tuple[Any, ...]], bool]:
        """Check and run one agent query (SQL steps and Python's ``db.sql``) exactly as the
        verifier re-executes it: ``check_read_only``, then the calling thread's query process
        (``verifier.sql.execute_guarded``) on the read-only database, with the verifier's time
        limit, row cap and memory and result budgets (issue 16).

        Besides ``verifier.sql``'s checks (which reject the catalog views that
        show paths), a result or error message holding the database file's
        path or folder is never shown (issue 11): the result is refused with
        ``UnsafeQueryError``, an error message has the path replaced.
        """
        from ..sql import base_spec, check_read_only, execute_guarded

        try:
            res = execute_guarded(base_spec(self.db_path), check_read_only(sql),
                                  time_limit_s=self.verify_config.query_time_limit_s, row_cap=self.verify_config.row_cap)
        except VerifierError as exc:
            text = str(exc)
            if any(h in text for h in self._hidden_paths):
                for h in self._hidden_paths:
                    text = text.replace(h, "<hidden path>")
                raise UnsafeQueryError(sql, text) from None
            raise
        if _holds_any(res.columns, self._hidden_paths) or any(_holds_any(r, self._hidden_paths) for r in res.rows):
            raise UnsafeQueryError(sql, "the result would show a file path of the environment; not shown")
        return res.columns, res.rows, res.truncated

    def _end_episode_resources(self) -> None:
        if self._sandbox is not None:
            self._sandbox.close()
            self._sandbox = None

    @property
    def trajectory(self) -> Trajectory:
        """The episode so far (or finished) as a contract Trajectory."""
        if self.task is None:
            raise InputError("env", None, "no episode: call reset(task) first")
        return Trajectory(
            trajectory_id=self.trajectory_id,
            task_id=self.task.task_id,
            steps=list(self.steps),
            final_response=self.final_response,
            dialect="duckdb",
            metadata=dict(self._metadata),
        )

    # ------------------------------------------------------------ API
    def reset(
        self,
        task: Task | None = None,
        *,
        seed: int | None = None,
        options: dict[str, Any] | None = None,
        trajectory_id: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> tuple[str, dict[str, Any]]:
        """Start an episode on ``task``.

        Args:
            task: the task (or ``options["task"]``).
            seed: accepted for Gymnasium compatibility (the env is deterministic).
            options: ``{"task": Task}`` alternative.
            trajectory_id: id of the episode's trajectory (default ``"<task_id>#0"``).
            metadata: copied into ``Trajectory.metadata`` (agent name, sample index);
                the env adds ``python_isolation`` (``"bwrap"`` or ``"in_process"``) and
                ``db_fingerprint``, the fingerprint of the database the episode is played on
                (``verifier.database.database_fingerprint``, as ``make-tasks`` stamps it on
                tasks; ``verify`` refuses a trajectory whose fingerprint is not its task's).

        Returns:
            ``(observation, info)``: the observation is the shared instructions,
            the schema description and the question; ``info`` holds
            ``max_steps`` and the tool descriptions.

        Raises:
            InputError: no task given; or the task records the fingerprint of another database
                than ``db_path``'s (``Task.db_fingerprint``; field ``db_path``, the message
                ``score`` gives: ``verifier.database.check_tasks_database``). Checked before the
                episode starts, as ``verify`` would refuse to score it (ARCHITECTURE.md section 4);
                a task without a fingerprint is not checked.
            SourceDataError: the task has a fingerprint and the database cannot be read.
        """
        task = task if task is not None else (options or {}).get("task")
        if not isinstance(task, Task):
            raise InputError("task", task, "reset needs a Task")
        if task.db_fingerprint is not None:
            from ..database import check_tasks_database

            check_tasks_database((task,), self.db_path, field="db_path")
        self._end_episode_resources()
        self.task = task
        self.steps = []
        self.final_response = ""
        self.trajectory_id = trajectory_id or f"{task.task_id}#0"
        self._metadata = dict(metadata or {})
        self._metadata["python_isolation"] = self.config.python.isolation  # the weaker mode is always named
        self._metadata["db_fingerprint"] = self._played_on()
        self._invalid = 0
        self.done = False
        obs = reset_observation(task.question, self.schema(), instructions=self.config.instructions)
        return obs, {"max_steps": self.config.max_steps, "tools": TOOLS}

    def _played_on(self) -> str | None:
        """The fingerprint of ``db_path`` (remembered per process), or None if it cannot be read."""
        from ..contract import SourceDataError
        from ..database import recent_fingerprint

        try:
            return recent_fingerprint(str(self.db_path))
        except SourceDataError:
            return None

    def step(self, action: Action | dict[str, Any]) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Apply one action.

        Returns:
            ``(observation, reward, terminated, truncated, info)``. Tool calls
            return their output (or ``Error: ...``) with reward 0; a submission
            terminates with reward = the verdict's score and
            ``info["verdict"]``; the ``max_steps``-th tool call without a
            submission truncates (scored as an empty response, verdict in info).
            An invalid action is an error observation (it uses a step).

        Raises:
            InputError: the episode is over or was never started.
            SandboxUnavailable: a Python action while the bubblewrap sandbox
                cannot run here and the weaker ``in_process`` isolation was not
                chosen (``EnvConfig.python.isolation``); nothing is recorded,
                SQL actions still work.
        """
        if self.task is None or self.done:
            raise InputError("action", action, "the episode is over; call reset(task)")
        try:
            act = parse_action(action)
        except InputError as exc:
            self._invalid += 1
            obs = f"Error: invalid action: {exc}"
            return self._after_tool(obs, {"invalid_action": True})
        if act.kind == "submit":
            self.final_response = act.content
            return self._finish("", truncated=False)
        index = len(self.steps) + 1
        if act.kind == "sql":
            step, shown = self._sql_step(index, act.content)
        else:
            step, shown = self._python_step(index, act.content)
        self.steps.append(step)
        return self._after_tool(f"[step {index}]\n{shown}", {"step": index})

    def _after_tool(self, obs: str, info: dict[str, Any]) -> tuple[str, float, bool, bool, dict[str, Any]]:
        used = len(self.steps) + self._invalid
        if used >= self.config.max_steps:
            return self._finish(obs + f"\n\nThe limit of {self.config.max_steps} tool calls is reached; the episode ends.", truncated=True, info=info)
        return obs, 0.0, False, False, info

    def _sql_step(self, index: int, code: str) -> tuple[Step, str]:
        try:
            columns, rows, truncated = self._run_sql(code)
        except VerifierError as exc:
            err = f"Error: {exc}"
            return Step(index=index, kind="sql", code=code, error=err), err
        text = render_result(columns, rows, self.verify_config.display)
        shown = text
        if truncated:
            shown += f"\n[only the first {self.verify_config.row_cap} rows were fetched]"
        # cells recorded in their JSON form, so the episode scores the same in memory and from JSONL
        step = Step(index=index, kind="sql", code=code, output=text, columns=list(columns),
                    rows=[[json_cell(v) for v in r] for r in rows])
        return step, shown

    def _python_step(self, index: int, code: str) -> tuple[Step, str]:
        if self._sandbox is None:  # raises SandboxUnavailable when bwrap cannot run and in_process was not chosen
            self._sandbox = PythonSandbox(self._run_sql, self.config.python)
        try:
            res = self._sandbox.run(code, step=index)
        except WorkerDied as exc:
            err = f"Error: Python is unavailable: {exc}"
            return Step(index=index, kind="python", code=code, error=err), err
        error = f"Error: {res.error}" if res.error else None
        shown = "\n".join(p for p in (res.output.rstrip("\n"), error) if p) or "(no output)"
        step = Step(index=index, kind="python", code=code, output=res.output, error=error, sql=res.sql)
        return step, shown

    def _finish(self, obs: str, *, truncated: bool, info: dict[str, Any] | None = None) -> tuple[str, float, bool, bool, dict[str, Any]]:
        self.done = True
        self._end_episode_resources()
        assert self.task is not None
        traj = self.trajectory
        verdict = self.scorer(traj, self.task, self.verify_config)
        out = dict(info or {})
        out.update({"verdict": verdict, "trajectory": traj})
        return obs, float(verdict.score), not truncated, truncated, out

    def close(self) -> None:
        """Release the episode's connection and Python worker."""
        self._end_episode_resources()
        self.done = True

    def __enter__(self) -> "EHREnv":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
