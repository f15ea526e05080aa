"""JSONL files in and out of batch scoring: reading lines as bytes, writing verdicts atomically."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from ..contract import VerifyConfig
from ._batch import Backend, verify_batch
from ._items import iter_lines


def verify_file(
    trajectories_path: str | Path,
    tasks: Any,
    db: str | Path | None,
    out_path: str | Path,
    *,
    workers: int = 1,
    backend: Backend = "process",
    config: VerifyConfig | None = None,
    on_record: Callable[[str], None] | None = None,
    **options: Any,
) -> int:
    """Score a trajectories JSONL file into ``out_path`` (one line per input line).

    Args:
        trajectories_path: input JSONL.
        tasks, db, workers, backend, config, options: as ``verify_batch``.
        out_path: output JSONL (overwritten).
        on_record: called with each output line (e.g. to advance a progress bar).

    Returns:
        The number of lines written.

    Raises:
        InputError: bad tasks or options, before ``out_path`` is touched.
        OSError: the input cannot be read or the output written; ``out_path``
            is replaced only when every line was written (an existing file
            survives a failed run).
    """
    records = verify_batch(iter_lines(trajectories_path), tasks, db, workers, backend, config, as_json=True, **options)
    out_path = Path(out_path)
    tmp = out_path.with_name(f".{out_path.name}.partial")
    n = 0
    try:
        with open(tmp, "w", encoding="utf-8") as out:
            for line in records:
                out.write(line + "\n")
                n += 1
                if on_record is not None:
                    on_record(line)
        tmp.replace(out_path)
    finally:
        tmp.unlink(missing_ok=True)
    return n
