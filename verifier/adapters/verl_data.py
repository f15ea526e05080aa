"""Tasks as the parquet file verl's ``RLHFDataset`` reads (``data.train_files`` / ``data.val_files``).

verl's ``RLHFDataset`` (``verl.utils.dataset.rl_dataset``) reads a parquet file row by row: the
``prompt`` column (chat messages) becomes ``raw_prompt``, ``extra_info.index`` the sample index and
``extra_info.tools_kwargs`` the ``tools_kwargs`` its agent loop hands to each tool's ``create``;
``agent_name`` picks the agent loop; the reward function receives ``data_source``,
``reward_model.ground_truth`` and ``extra_info`` (verl's documentation, "Prepare Data for
Post-Training", and its ``gsm8k_tool_agent_loop.py`` preprocessing example).

Columns written by :func:`to_verl_parquet`, one row per task:

* ``data_source`` (str), ``ability`` (``"clinical_database"``), ``agent_name`` (str);
* ``prompt``: ``[{"role": "user", "content": <the environment's reset observation>}]``
  (instructions, schema, question: what ``EHREnv.reset`` shows; nothing of the reference);
* ``reward_model``: ``{"style": "rule", "ground_truth": <Task JSON text>}``, which
  ``verl_score.compute_score`` accepts without a tasks file;
* ``extra_info``: ``{"index", "task_id", "condition", "agent_name", "need_tools_kwargs": true,
  "tools_kwargs": {"run_sql": {"create_kwargs": {"task_id", "task"}}, "run_python": {...}}}``.

The Task is stored as JSON text (not as nested columns): Arrow unifies nested dicts across rows and
would change typed answers and witness rows (see ``verifier.adapters.trl_data``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Mapping

from ..contract import InputError, Task
from .trl_data import _task_list
from .verl_agent_loop import AGENT_NAME
from .verl_tools import TOOL_NAMES


def verl_rows(tasks: Mapping[str, Task] | Iterable[Task] | str | Path, *, db: str | Path,
              agent_name: str = AGENT_NAME, data_source: str = "ehr_verifier",
              schema_detail: str = "compact") -> list[dict[str, Any]]:
    """The rows of :func:`to_verl_parquet` as dicts (see the module docstring for the columns).

    Args:
        tasks: Tasks (list, ``{task_id: Task}`` or a tasks JSONL path).
        db: the DuckDB database (its schema description goes into the prompt).
        agent_name: the agent loop verl runs for the rows (default ``ehr_agent``).
        data_source: the rows' ``data_source``.
        schema_detail: the prompt's schema description, ``"compact"`` (default) or ``"full"``
            (``EnvConfig.schema_detail``).

    Returns:
        One dict per task, in order.

    Raises:
        InputError: a non-Task item, duplicated task ids, an empty ``agent_name`` or an unknown
            ``schema_detail``.
    """
    from ..env import prompt_schema
    from ..env.instructions import reset_observation

    items = _task_list(tasks)
    ids = [t.task_id for t in items]
    if len(set(ids)) != len(ids):
        raise InputError("tasks", next(i for i in ids if ids.count(i) > 1), "duplicated task_id")
    if not agent_name:
        raise InputError("agent_name", agent_name, "expected the registered agent loop's name")
    schema = prompt_schema(db, schema_detail)
    rows = []
    for i, t in enumerate(items):
        task_json = t.model_dump_json()
        create = {"create_kwargs": {"task_id": t.task_id, "task": task_json}}
        rows.append({
            "data_source": data_source,
            "agent_name": agent_name,
            "prompt": [{"role": "user", "content": reset_observation(t.question, schema)}],
            "ability": "clinical_database",
            "reward_model": {"style": "rule", "ground_truth": task_json},
            "extra_info": {"index": i, "task_id": t.task_id, "condition": t.condition, "agent_name": agent_name,
                           "need_tools_kwargs": True, "tools_kwargs": {name: create for name in TOOL_NAMES}},
        })
    return rows


def to_verl_parquet(tasks: Mapping[str, Task] | Iterable[Task] | str | Path, path: str | Path, *, db: str | Path,
                    agent_name: str = AGENT_NAME, data_source: str = "ehr_verifier",
                    schema_detail: str = "compact") -> Path:
    """Write the tasks as a verl training/validation parquet file (pyarrow).

    Args:
        tasks, db, agent_name, data_source, schema_detail: as :func:`verl_rows`.
        path: the parquet file to write (parent folders are created).

    Returns:
        ``path`` as a Path.

    Raises:
        InputError: as :func:`verl_rows`.
        OSError: the file cannot be written.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(verl_rows(tasks, db=db, agent_name=agent_name, data_source=data_source,
                                                     schema_detail=schema_detail)), out)
    return out
