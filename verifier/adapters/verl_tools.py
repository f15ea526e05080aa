"""verl tools ``run_sql`` and ``run_python`` that step an ``EHREnv`` episode during multi-turn rollout.

verl's ``ToolAgentLoop`` (``verl.experimental.agent_loop.tool_agent_loop``) builds its tools from
the YAML at ``actor_rollout_ref.rollout.multi_turn.tool_config_path`` (``class_name``, ``config``
with ``type: native``, ``tool_schema``), and for every tool call runs ``create(create_kwargs=...)``,
``execute(instance_id, parameters, agent_data=...)`` and ``release(instance_id)`` on the tool
(verl's ``BaseTool`` contract; ``create_kwargs`` come from the dataset row's
``extra_info.tools_kwargs[<tool name>]``). A tool instance therefore lives for one call only, so
the episode lives on the rollout: ``agent_data.extra_fields[EPISODE_KEY]`` holds the rollout's
``EHREnv``, opened on the first call with the task named in ``tools_kwargs`` and closed by
``verifier.adapters.verl_agent_loop.EHRAgentLoop`` when the rollout ends, which also records the
episode's steps for ``compute_score`` (``extra_info["ehr_episode"]``).

Needs verl >= 0.7.0 (the extra ``.[verl]`` says so): ``agent_data=`` in ``tool.execute`` and the
tools' extra fields merged into ``extra_info`` arrived then; on 0.5/0.6 every tool call would
answer an error and Noise abstentions would score ``NO_EVIDENCE``.

* :data:`EHRSqlTool` / :data:`EHRPythonTool`: ``BaseTool`` subclasses, built from verl's own
  ``BaseTool`` on first access (module ``__getattr__``), so this module imports without verl;
  without verl the access raises ``ImportError`` naming the extra (``pip install
  'ehr-verifier[verl]'``);
* :func:`tool_config_yaml`: the tool-config YAML verl reads (``tool_config_path``);
* :func:`episode_for`, :func:`run_action`, :func:`finish_episode`: the verl-free parts.

Tool ``config`` keys (the YAML's ``config:``): ``db`` (required: the DuckDB file), ``tasks``
(optional tasks JSONL, for rows whose ``create_kwargs`` carry only ``task_id``), ``max_steps``
(optional). The SQL and Python run synchronously in the rollout's event loop (``EHREnv`` keeps a
query process per thread; one thread per worker keeps it at one).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from ..contract import InputError, Task, Trajectory
from .common import resolve_task, task_map

#: Where the rollout's ``EHREnv`` lives in verl's ``AgentData.extra_fields``.
EPISODE_KEY = "ehr_env"
#: The tools' names (the model calls them by these; ``tools_kwargs`` is keyed by them).
TOOL_NAMES = ("run_sql", "run_python")
#: Each tool's argument (``verifier.env.TOOLS`` declares it).
_ARGUMENT = {"run_sql": "query", "run_python": "code"}
_KIND = {"run_sql": "sql", "run_python": "python"}
_MISSING = "verifier.adapters.verl_tools.{name} needs verl: pip install 'ehr-verifier[verl]' ({exc})"


def tool_schema(name: str) -> dict[str, Any]:
    """The OpenAI function schema of one tool, as verl's ``tool_schema`` YAML entry holds it.

    Args:
        name: ``"run_sql"`` or ``"run_python"``.

    Returns:
        ``{"type": "function", "function": {"name", "description", "parameters"}}``: the entry of
        ``verifier.env.TOOLS`` (a copy), so verl's model sees the tools every other framework and the
        exported training data show (issue 34).

    Raises:
        InputError: another name.
    """
    import copy

    from ..env import TOOLS

    if name not in TOOL_NAMES:
        raise InputError("tool", name, f"expected one of {list(TOOL_NAMES)}")
    return copy.deepcopy(next(t for t in TOOLS if t["function"]["name"] == name))


def tool_config_yaml(db: str | Path, *, tasks: str | Path | None = None, max_steps: int | None = None) -> str:
    """The tool-config YAML verl reads at ``actor_rollout_ref.rollout.multi_turn.tool_config_path``.

    Args:
        db: the DuckDB database the tools query; written as an absolute path (verl's workers do not
            start in the folder the YAML was written from, so a relative path would not resolve).
        tasks: optional tasks JSONL, for rows whose ``create_kwargs`` carry only a ``task_id``
            (absolute, as ``db``).
        max_steps: optional tool-call limit per episode (``EnvConfig.max_steps``).

    Returns:
        YAML text with one ``tools:`` entry per tool (``class_name`` the dotted class path,
        ``config`` with ``type: native``, ``tool_schema``).
    """
    import yaml

    config: dict[str, Any] = {"type": "native", "db": str(Path(db).resolve())}
    if tasks is not None:
        config["tasks"] = str(Path(tasks).resolve())
    if max_steps is not None:
        config["max_steps"] = int(max_steps)
    classes = {"run_sql": "EHRSqlTool", "run_python": "EHRPythonTool"}
    entries = [{"class_name": f"{__name__}.{classes[n]}", "config": dict(config), "tool_schema": tool_schema(n)}
               for n in TOOL_NAMES]
    return yaml.safe_dump({"tools": entries}, sort_keys=False)


def rollout_task(tools_kwargs: Mapping[str, Any] | None, tasks: Mapping[str, Task] | str | Path | None = None) -> Task:
    """The rollout's task, from the row's ``tools_kwargs`` (any tool's ``create_kwargs``).

    Args:
        tools_kwargs: ``{tool name: {"create_kwargs": {"task": Task JSON} or {"task_id": id}}}``
            (what ``verifier.adapters.verl_data.to_verl_parquet`` writes).
        tasks: ``{task_id: Task}`` or a tasks JSONL path, for ``task_id`` rows.

    Returns:
        The Task.

    Raises:
        InputError: no tool's ``create_kwargs`` names a task, or it is unknown or invalid.
    """
    for name in (*TOOL_NAMES, *(tools_kwargs or {})):
        kwargs = ((tools_kwargs or {}).get(name) or {}).get("create_kwargs") or {}
        ref = kwargs.get("task") if kwargs.get("task") is not None else kwargs.get("task_id")
        if ref is not None:
            return resolve_task(ref, task_map(tasks), field=f"tools_kwargs.{name}.create_kwargs.task")
    raise InputError("tools_kwargs", tools_kwargs, "no create_kwargs with a 'task' or 'task_id': build the rows with to_verl_parquet")


def episode_for(extra_fields: dict[str, Any], tools_kwargs: Mapping[str, Any] | None, config: Mapping[str, Any],
                trajectory_id: str | None = None) -> Any:
    """The rollout's ``EHREnv``: the one in ``extra_fields``, else a new one reset on the rollout's task.

    Args:
        extra_fields: verl's ``AgentData.extra_fields`` (the episode is stored at ``EPISODE_KEY``).
        tools_kwargs: the row's ``tools_kwargs`` (see :func:`rollout_task`).
        config: the tool's YAML ``config`` (``db`` required; ``tasks``, ``max_steps`` optional).
        trajectory_id: the episode's trajectory id (verl's request id).

    Returns:
        The ``verifier.env.EHREnv`` holding the episode.

    Raises:
        InputError: no ``db`` in the tool config, or no task (see :func:`rollout_task`).
    """
    env = extra_fields.get(EPISODE_KEY)
    if env is not None:
        return env
    from ..env import EHREnv, EnvConfig

    if not config.get("db"):
        raise InputError("tool config.db", config.get("db"), "the tool config needs the DuckDB file (tool_config_yaml(db=...))")
    task = rollout_task(tools_kwargs, config.get("tasks"))
    env_config = EnvConfig(max_steps=int(config["max_steps"])) if config.get("max_steps") else None
    env = EHREnv(str(config["db"]), env_config)
    env.reset(task, trajectory_id=trajectory_id or None, metadata={"framework": "verl"})
    extra_fields[EPISODE_KEY] = env
    return env


def run_action(env: Any, tool_name: str, parameters: Mapping[str, Any]) -> str:
    """Run one tool call in the episode and return what the model sees.

    Args:
        env: the episode's ``EHREnv``.
        tool_name: ``"run_sql"`` or ``"run_python"``.
        parameters: the call's arguments (``query`` / ``code``; a missing one is an error text).

    Returns:
        The observation (``[step N]`` and the result, or ``Error: ...``); never raises for model input.
    """
    if env.done:
        return "Error: the episode is over (tool-call limit reached); nothing was run."
    arg = _ARGUMENT[tool_name]
    code = parameters.get(arg) if isinstance(parameters, Mapping) else None
    if not isinstance(code, str) or not code.strip():
        return f"Error: {tool_name} needs a non-empty string argument {arg!r}."
    obs, *_ = env.step({"kind": _KIND[tool_name], "code": code})
    return obs


def finish_episode(extra_fields: dict[str, Any], final_response: str, task: Task | None = None,
                   trajectory_id: str = "") -> dict[str, Any]:
    """End the rollout's episode: its Trajectory as JSON (for ``extra_info["ehr_episode"]``), env closed.

    Args:
        extra_fields: verl's ``AgentData.extra_fields``; the episode at ``EPISODE_KEY`` is removed.
        final_response: the model's last text (the Answer and Reasoning).
        task: the rollout's task, for a rollout that called no tool (no episode was opened).
        trajectory_id: id for that case.

    Returns:
        The Trajectory (steps as ``EHREnv`` recorded them, ``final_response``) as a JSON dict.

    Raises:
        InputError: no episode and no ``task``.
    """
    env = extra_fields.pop(EPISODE_KEY, None)
    if env is None:
        if task is None:
            raise InputError("task", None, "no episode was opened and no task was given")
        traj = Trajectory(trajectory_id=trajectory_id or f"{task.task_id}#verl", task_id=task.task_id,
                          final_response=final_response, metadata={"framework": "verl"})
    else:
        try:
            traj = env.trajectory.model_copy(update={"final_response": final_response})
        finally:
            env.close()
    return traj.model_dump(mode="json")


def _build() -> dict[str, type]:
    try:
        from verl.tools.base_tool import BaseTool
        from verl.tools.schemas import ToolResponse
    except ImportError as exc:
        raise ImportError(_MISSING.format(name="EHRSqlTool/EHRPythonTool", exc=exc)) from exc

    class _EHRTool(BaseTool):
        """A verl ``BaseTool`` stepping the rollout's ``EHREnv`` (see the module docstring)."""

        action = "run_sql"  # which action the tool runs, whatever name its schema gives it

        async def execute(self, instance_id: str, parameters: dict[str, Any], **kwargs: Any):
            """Run the call in the rollout's episode; ``kwargs["agent_data"]`` is verl's ``AgentData``.

            Returns:
                ``(ToolResponse(text=observation), 0.0, {"step": n})``; a configuration problem is an
                error text for the model (verl would log and show it anyway) and raises nothing.
            """
            agent_data = kwargs.get("agent_data")
            if agent_data is None:
                return ToolResponse(text="Error: this tool needs verl >= 0.7's agent loop (agent_data); pip install 'verl>=0.7'."), 0.0, {}
            try:
                env = episode_for(agent_data.extra_fields, agent_data.tools_kwargs, self.config,
                                  trajectory_id=getattr(agent_data, "request_id", None))
            except InputError as exc:
                return ToolResponse(text=f"Error: {exc}"), 0.0, {}
            obs = run_action(env, self.action, parameters)
            return ToolResponse(text=obs), 0.0, {"step": len(env.steps)}

    class EHRSqlTool(_EHRTool):
        """``run_sql(query)`` on the rollout's ``EHREnv`` (verl ``BaseTool``)."""

    class EHRPythonTool(_EHRTool):
        """``run_python(code)`` in the rollout's ``EHREnv`` confined worker (verl ``BaseTool``)."""

        action = "run_python"

    for cls in (EHRSqlTool, EHRPythonTool):
        cls.__module__ = __name__
        cls.__qualname__ = cls.__name__
    return {"EHRSqlTool": EHRSqlTool, "EHRPythonTool": EHRPythonTool}


def __getattr__(name: str) -> Any:
    """``EHRSqlTool`` / ``EHRPythonTool``, built on verl's ``BaseTool`` at first access (PEP 562).

    Raises:
        ImportError: verl is not installed (names the ``verl`` extra).
        AttributeError: any other name.
    """
    if name in ("EHRSqlTool", "EHRPythonTool"):
        built = _build()
        globals().update(built)
        return built[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
