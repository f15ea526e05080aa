"""Training-data export: successful trajectories for SFT, success/failure pairs for DPO.

Issue 7 item 6. Trajectories become OpenAI-style chat messages, the form the
environment's agents see and most trainers read (TRL ``SFTTrainer`` and
``DPOTrainer`` conversational formats):

* a ``user`` message: the environment's first observation
  (``verifier.env.instructions.reset_observation``: shared instructions, the
  schema description when a database is given, the question);
* per step, an ``assistant`` message with one ``tool_calls`` entry
  (``run_sql`` with ``{"query": ...}`` or ``run_python`` with ``{"code": ...}``)
  and a ``tool`` message with the observation (``[step N]`` then the output or
  the error, as the environment shows it);
* a final ``assistant`` message with the final response.

The task's ``reference`` (SQL, answer, unmet requirement, witness) is never
written; only ``task_id``, ``condition`` and the trajectory's id travel as
metadata. ``verifier.chat.from_chat_messages`` reads these messages back.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterable, Iterator, Literal, Mapping

from .task import Task
from .trajectory import Step, Trajectory

Kind = Literal["sft", "dpo"]

#: Tool names, as the environment declares them.
SQL_TOOL, PYTHON_TOOL = "run_sql", "run_python"


def _observation(step: Step) -> str:
    """What the environment showed after the step (``EHREnv._sql_step``/``_python_step``)."""
    if step.kind == "sql":
        shown = step.error if step.error else (step.output or "")
    else:
        parts = [p for p in ((step.output or "").rstrip("\n"), step.error or "") if p]
        shown = "\n".join(parts) or "(no output)"
    return f"[step {step.index}]\n{shown}"


def prompt_messages(task: Task, schema: str = "") -> list[dict[str, Any]]:
    """The episode's opening message (the environment's reset observation), without the reference.

    Args:
        task: the task (only ``question`` is used).
        schema: the schema description shown to agents (``schema_doc.schema_text``); may be empty.
    """
    from .env.instructions import reset_observation

    return [{"role": "user", "content": reset_observation(task.question, schema or "(see the database)")}]


def completion_messages(traj: Trajectory) -> list[dict[str, Any]]:
    """The agent's side of an episode: tool calls, tool results, final answer (OpenAI chat format)."""
    out: list[dict[str, Any]] = []
    for step in traj.steps:
        call_id = f"call_{step.index}"
        name, args = (SQL_TOOL, {"query": step.code}) if step.kind == "sql" else (PYTHON_TOOL, {"code": step.code})
        out.append({
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}],
        })
        out.append({"role": "tool", "tool_call_id": call_id, "content": _observation(step)})
    out.append({"role": "assistant", "content": traj.final_response})
    return out


def sft_record(traj: Trajectory, task: Task, schema: str = "") -> dict[str, Any]:
    """One SFT example: ``{"messages": [...], "task_id", "trajectory_id", "condition"}``."""
    return {
        "messages": prompt_messages(task, schema) + completion_messages(traj),
        "task_id": task.task_id,
        "trajectory_id": traj.trajectory_id,
        "condition": task.condition,
    }


def dpo_record(chosen: Trajectory, rejected: Trajectory, task: Task, schema: str = "") -> dict[str, Any]:
    """One preference pair in TRL's conversational form: ``prompt``, ``chosen``, ``rejected`` message lists."""
    return {
        "prompt": prompt_messages(task, schema),
        "chosen": completion_messages(chosen),
        "rejected": completion_messages(rejected),
        "task_id": task.task_id,
        "chosen_id": chosen.trajectory_id,
        "rejected_id": rejected.trajectory_id,
        "condition": task.condition,
    }


def export_records(
    kind: Kind,
    trajectories: Iterable[Trajectory],
    verdicts: Mapping[str, Mapping[str, Any]],
    tasks: Mapping[str, Task],
    *,
    schema: str = "",
    max_pairs_per_task: int | None = None,
) -> Iterator[dict[str, Any]]:
    """Yield SFT examples or DPO pairs.

    Args:
        kind: ``"sft"``: every trajectory whose verdict succeeded, in input
            order. ``"dpo"``: per task (in order of first appearance), the
            i-th successful trajectory paired with the i-th failed one, in
            input order, up to ``max_pairs_per_task``.
        trajectories: the trajectories.
        verdicts: ``{trajectory_id: verdict record}`` (``success`` is read);
            a trajectory without a verdict, or whose task is unknown, is skipped.
        tasks: ``{task_id: Task}``.
        schema: schema description for the opening message.
        max_pairs_per_task: cap on DPO pairs per task (``None``: no cap).

    Raises:
        ValueError: unknown ``kind``.
    """
    if kind not in ("sft", "dpo"):
        raise ValueError(f"kind must be 'sft' or 'dpo', got {kind!r}")
    wins: dict[str, list[Trajectory]] = defaultdict(list)
    losses: dict[str, list[Trajectory]] = defaultdict(list)
    order: list[str] = []
    for traj in trajectories:
        v = verdicts.get(traj.trajectory_id)
        task = tasks.get(traj.task_id)
        if v is None or task is None or "error" in v:
            continue
        if kind == "sft":
            if v.get("success"):
                yield sft_record(traj, task, schema)
            continue
        if traj.task_id not in wins and traj.task_id not in losses:
            order.append(traj.task_id)
        (wins if v.get("success") else losses)[traj.task_id].append(traj)
    for task_id in order:
        pairs = list(zip(wins[task_id], losses[task_id]))
        for chosen, rejected in pairs[: max_pairs_per_task] if max_pairs_per_task is not None else pairs:
            yield dpo_record(chosen, rejected, tasks[task_id], schema)


def export_file(
    kind: Kind,
    trajectories_path: str | Path,
    tasks: Mapping[str, Task],
    out: str | Path,
    *,
    verdicts: Mapping[str, Mapping[str, Any]],
    schema: str = "",
    max_pairs_per_task: int | None = None,
) -> int:
    """Write ``export_records`` to ``out`` as JSONL; returns the number of lines.

    Lines of ``trajectories_path`` that are not valid trajectories are skipped
    (they have error records, not verdicts). ``out`` is replaced only when the
    export succeeds.

    Raises:
        InputError: two lines share a ``trajectory_id`` (e.g. two agents'
            rollouts concatenated, both ``<task_id>#0``): verdicts are matched
            by id, so the export would pair the wrong verdicts. Field
            ``<path>:line N: trajectory_id``, value the id.
        OSError: ``trajectories_path`` unreadable or ``out`` not writable.
    """
    from .contract import validate
    from .errors import InputError

    def trajs() -> Iterator[Trajectory]:
        first_line: dict[str, int] = {}
        with open(trajectories_path, encoding="utf-8") as fh:
            for n, line in enumerate(fh, start=1):
                if line.strip():
                    try:
                        traj = validate(Trajectory, line)
                    except InputError:
                        continue
                    if traj.trajectory_id in first_line:
                        raise InputError(
                            f"{trajectories_path}:line {n}: trajectory_id", traj.trajectory_id,
                            f"duplicated trajectory_id (first at line {first_line[traj.trajectory_id]}); verdicts are "
                            "matched by id, so give every trajectory a unique id (e.g. prefix each agent's ids)",
                        )
                    first_line[traj.trajectory_id] = n
                    yield traj

    out = Path(out)
    tmp = out.with_name(f".{out.name}.tmp")
    n = 0
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            for rec in export_records(kind, trajs(), verdicts, tasks, schema=schema, max_pairs_per_task=max_pairs_per_task):
                fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
                n += 1
        tmp.replace(out)
    finally:
        tmp.unlink(missing_ok=True)
    return n


def read_verdicts(path: str | Path) -> Iterator[dict[str, Any]]:
    """The records of a ``verdicts.jsonl`` (``ehr-verifier score`` output), one per non-blank line.

    Raises:
        InputError: a line is not a JSON object (field ``<path>:line N``, value
            the line's first 200 characters); a truncated or hand-edited file
            fails here with its line, not deep inside the export.
        OSError: the file cannot be read.
    """
    from .errors import InputError

    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}:line {n}", line.strip()[:200], f"not valid JSON ({exc.msg})") from None
            if not isinstance(record, dict):
                raise InputError(f"{path}:line {n}", line.strip()[:200], "expected a verdict or error record (a JSON object)")
            yield record


def verdict_index(records: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """``{trajectory_id: verdict record}`` from verdict/error records (error records skipped).

    Raises:
        InputError: two verdicts share a ``trajectory_id`` (field
            ``verdict N: trajectory_id``, N counting records from 1, i.e. the
            line of ``verdicts.jsonl`` and of the scored trajectories file).
    """
    from .errors import InputError

    index: dict[str, dict[str, Any]] = {}
    first: dict[str, int] = {}
    for n, r in enumerate(records, start=1):
        if "error" in r or r.get("trajectory_id") is None:
            continue
        tid = str(r["trajectory_id"])
        if tid in index:
            raise InputError(f"verdict {n}: trajectory_id", tid,
                             f"duplicated trajectory_id (first at verdict {first[tid]}); give every trajectory a unique id")
        index[tid], first[tid] = dict(r), n
    return index
