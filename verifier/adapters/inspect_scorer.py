"""inspect_ai scorer backed by ``verify``.

inspect_ai scorers are made by a ``@scorer(metrics=[...])``-decorated factory
returning ``async def score(state: TaskState, target: Target) -> Score``
(inspect_ai documentation, "Scorers"). ``ehr_scorer`` builds one:

* the task: ``state.metadata["task"]`` (a Task dict), else the task id in
  ``state.metadata["task_id"]`` or ``target.text``, looked up in ``tasks``;
* the trajectory: ``state.messages`` (assistant ``tool_calls`` to
  ``run_sql``/``run_python`` and their ``tool`` results) converted to
  OpenAI-style dicts and then with ``verifier.adapters.common.to_trajectory``;
  the final response is the last assistant text, or the answer of a later
  ``submit`` call (the tool that ends inspect_ai's ``basic_agent``/``react``
  loops), else ``state.output.completion``. Calls to other tools (``think``,
  ``bash``, ...) are skipped as steps: they are never SQL evidence and never
  an error;
* the Score: ``value`` CORRECT/INCORRECT, ``answer`` the parsed Answer,
  ``explanation`` the reason codes, ``metadata`` the whole verdict.

Metrics stay separate from scoring (ARCHITECTURE.md section 8): ``accuracy`` and
``stderr`` by default. inspect_ai is imported only when ``ehr_scorer`` is
called; it is not a dependency of ehr-verifier.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from ..contract import Task, VerifyConfig
from .common import resolve_task, task_map, to_trajectory


def inspect_messages_to_chat(messages: list[Any]) -> list[dict[str, Any]]:
    """inspect_ai ``ChatMessage`` objects -> OpenAI-style message dicts.

    Args:
        messages: ``state.messages`` (system, user, assistant and tool messages).

    Returns:
        One dict per message (``role``, ``content`` text, assistant ``tool_calls`` of
        every tool with dict ``arguments``, tool ``tool_call_id``); a tool error becomes
        an ``Error: ...`` result. Messages of other roles are left out.

    Raises:
        Nothing on message content; which calls count as steps is decided by
        ``verifier.adapters.common.model_messages``.
    """
    out: list[dict[str, Any]] = []
    for m in messages:
        role = getattr(m, "role", None)
        if role == "assistant":
            msg: dict[str, Any] = {"role": "assistant", "content": m.text}
            if m.tool_calls:
                msg["tool_calls"] = [
                    {"id": tc.id, "type": "function", "function": {"name": tc.function, "arguments": dict(tc.arguments)}}
                    for tc in m.tool_calls
                ]
            out.append(msg)
        elif role == "tool":
            text = m.text
            if getattr(m, "error", None) is not None:
                text = f"Error: {m.error.message}"
            out.append({"role": "tool", "tool_call_id": m.tool_call_id, "content": text})
        elif role in ("system", "user"):
            out.append({"role": role, "content": m.text})
    return out


def ehr_scorer(
    tasks: Mapping[str, Task] | str | Path | None = None,
    db: str | Path | None = None,
    *,
    config: VerifyConfig | None = None,
    submit_name: str = "submit",
    metrics: Any = None,
) -> Any:
    """An inspect_ai ``Scorer`` that runs ``verify`` on the sample's episode.

    Args:
        tasks: ``{task_id: Task}`` or a tasks JSONL path (when samples carry task ids).
        db: DuckDB file for Noise evidence re-execution.
        config: VerifyConfig for finer settings.
        submit_name: name of the agent's submit tool (``basic_agent(submit_name=...)``,
            ``AgentSubmit(name=...)``); its ``answer`` argument is the final response.
        metrics: inspect_ai metrics (default ``[accuracy(), stderr()]``), e.g.
            ``grouped(accuracy(), "condition")`` over sample metadata.

    Returns:
        The scorer (pass it as ``Task(scorer=ehr_scorer(...))``).

    Raises:
        ImportError: inspect_ai is not installed.
        InputError (when scoring): the sample's task cannot be found or is invalid,
            or a Noise task has no database. Never on what the model wrote.
    """
    from inspect_ai.scorer import (
        CORRECT,
        INCORRECT,
        Score,
        Target,
        accuracy,
        scorer,
        stderr,
    )
    from inspect_ai.solver import TaskState

    cfg = config or VerifyConfig()
    submit_tools = frozenset({submit_name.lower()})
    if db is not None:
        cfg = cfg.model_copy(update={"db_path": str(db)})

    @scorer(metrics=metrics or [accuracy(), stderr()], name="ehr_verifier")
    def _ehr_verifier() -> Any:
        async def score(state: TaskState, target: Target) -> Score:
            import anyio

            from ..verify import verify

            meta = state.metadata or {}
            ref = meta.get("task") or meta.get("task_id") or target.text
            task = resolve_task(ref, task_map(tasks), field="sample task")
            traj = to_trajectory(inspect_messages_to_chat(state.messages), task_id=task.task_id,
                                 trajectory_id=f"{state.sample_id}#{state.epoch}", submit_tools=submit_tools)
            if not traj.final_response and state.output is not None and state.output.completion:
                traj = traj.model_copy(update={"final_response": state.output.completion})
            verdict = await anyio.to_thread.run_sync(verify, traj, task, cfg)
            answer = ((verdict.details or {}).get("parse") or {}).get("answer")
            return Score(
                value=CORRECT if verdict.success else INCORRECT,
                answer=answer,
                explanation=", ".join(r.value for r in verdict.reasons) or "success",
                metadata=verdict.model_dump(mode="json"),
            )

        return score

    return _ehr_verifier()
