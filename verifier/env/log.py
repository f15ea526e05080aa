"""Append-only, crash-safe trajectory log (JSONL) with resume.

Each finished episode is one line, written with a single ``write`` then
``flush`` and ``os.fsync``, so a crash loses at most the episodes still in
progress. On reopening, a torn last line (no trailing newline: the write that
was interrupted) is cut off, and the (task_id, sample) pairs already present
are reported so a rerun skips them.

Several processes may append to one log (parallel ``serve-tools`` clients, see ``claim``): an
append holds an exclusive ``fcntl.flock`` on the file while it writes, the torn-tail repair holds
it while it looks, and reading the keys holds a shared one, so no reader sees a half-written
line as torn and no repair cuts another process's line.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel

from ..contract import InputError, Trajectory, validate

_SAMPLE_SUFFIX = re.compile(r"#(\d+)$")


def trajectory_id(task_id: str, sample: int) -> str:
    """The id of sample ``sample`` (0-based) on ``task_id``: ``"<task_id>#<sample>"``."""
    return f"{task_id}#{sample}"


def episode_key(traj: Trajectory) -> tuple[str, int]:
    """``(task_id, sample)`` of a trajectory: ``metadata["sample"]``, else the ``#N`` id suffix, else 0."""
    sample = traj.metadata.get("sample")
    if isinstance(sample, int):
        return traj.task_id, sample
    m = _SAMPLE_SUFFIX.search(traj.trajectory_id)
    return traj.task_id, int(m.group(1)) if m else 0


def repair_torn_tail(path: Path) -> int:
    """Cut a last line that lacks its newline (an interrupted write).

    Returns:
        Bytes removed (0 when the file ends cleanly or does not exist).
    """
    if not path.exists():
        return 0
    size = path.stat().st_size
    if size == 0:
        return 0
    with open(path, "rb+") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)  # released when fh closes
        size = os.fstat(fh.fileno()).st_size
        fh.seek(size - 1)
        if fh.read(1) == b"\n":
            return 0
        # scan back for the last newline
        pos = size - 1
        block = 65536
        keep = 0
        while pos > 0:
            start = max(0, pos - block)
            fh.seek(start)
            chunk = fh.read(pos - start)
            i = chunk.rfind(b"\n")
            if i >= 0:
                keep = start + i + 1
                break
            pos = start
        fh.truncate(keep)
        fh.flush()
        os.fsync(fh.fileno())
    return size - keep


def existing_keys(path: str | Path) -> set[tuple[str, int]]:
    """``(task_id, sample)`` of every trajectory already in ``path`` (after repairing a torn tail).

    Raises:
        InputError: a complete line is not a valid Trajectory (the file is not
            a trajectory log), naming the line.
    """
    p = Path(path)
    repair_torn_tail(p)
    keys: set[tuple[str, int]] = set()
    if not p.exists():
        return keys
    with open(p, encoding="utf-8") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_SH)  # no append is half-written while we read
        for n, line in enumerate(fh, start=1):
            if line.strip():
                keys.add(episode_key(validate(Trajectory, line, where=f"{p}:line {n}: ")))
    return keys


class JsonlAppender:
    """Durable line appender: each ``append`` is one write, flushed and fsynced.

    Args:
        path: the JSONL file (created with its folder if absent; a torn last
            line is cut first).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        repair_torn_tail(self.path)
        self._fh: IO[str] | None = open(self.path, "a", encoding="utf-8")

    def append(self, item: BaseModel | dict[str, Any]) -> None:
        """Write one record (a model or a dict) as one line and make it durable."""
        text = item.model_dump_json() if isinstance(item, BaseModel) else json.dumps(item, sort_keys=True, default=str)
        self.append_text(text)

    def append_text(self, text: str) -> None:
        """Write one already-serialised JSON record (no newline inside) and make it durable.

        Raises:
            InputError: the log is closed or ``text`` contains a newline.
        """
        if self._fh is None:
            raise InputError("log", str(self.path), "the log is closed")
        if "\n" in text:
            raise InputError("record", text[:200], "a JSONL record must not contain a newline")
        fcntl.flock(self._fh.fileno(), fcntl.LOCK_EX)
        try:
            self._fh.write(text + "\n")
            self._fh.flush()
            os.fsync(self._fh.fileno())
        finally:
            fcntl.flock(self._fh.fileno(), fcntl.LOCK_UN)

    def close(self) -> None:
        """Close the file."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def __enter__(self) -> "JsonlAppender":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
