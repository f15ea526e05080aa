"""Episode claims: parallel players of one trajectory log never take the same episode.

Several processes appending to one trajectory log (``ehr-verifier serve-tools`` with parallel
MCP clients on one ``--out``) each claim the episode ``(task_id, sample)`` they play before
playing it. A claim is an exclusive ``fcntl.flock`` on a file in ``<out>.claims/`` held for the
whole episode: the kernel releases it when the holder ends, even by a crash, so a claim never
outlives its process and a task abandoned mid-episode is free again. Under its claim a player
re-reads the log, so an episode another player finished meanwhile is not played twice. Claimed
episodes are disjoint, hence so are their trajectory ids (``<task_id>#<sample>``).

POSIX only (``fcntl``); the claim files are empty markers, left in place (a later claim reuses them).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from ..contract import InputError, Task
from .log import existing_keys


def claims_dir(out: str | Path) -> Path:
    """The folder of ``out``'s claim files: ``<out>.claims`` next to the trajectory log."""
    p = Path(out)
    return p.with_name(p.name + ".claims")


@dataclass
class Claim:
    """An episode held by this process until :meth:`release` (or the process ends).

    Attributes:
        task: the claimed task.
        sample: the 0-based sample number (the trajectory id is ``<task_id>#<sample>``).
    """

    task: Task
    sample: int
    _fd: int | None = field(default=None, repr=False)

    def release(self) -> None:
        """Give the episode up (after its trajectory is logged, or when nothing was played)."""
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def _try_lock(out: Path, task_id: str, sample: int) -> int | None:
    """An fd holding the exclusive lock of ``(task_id, sample)``'s claim file, or None if held elsewhere."""
    folder = claims_dir(out)
    folder.mkdir(parents=True, exist_ok=True)
    name = hashlib.sha256(f"{task_id}#{sample}".encode()).hexdigest()[:32]
    fd = os.open(folder / name, os.O_CREAT | os.O_RDWR, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def claim_episode(tasks: Iterable[Task], out: str | Path, *, replay: bool = False) -> Claim:
    """Claim the next episode of ``tasks`` that is neither in ``out`` nor claimed by another process.

    Args:
        tasks: the candidate tasks, in the order they are offered.
        out: the trajectory log (may not exist yet); its claims live in ``<out>.claims/``.
        replay: play each task again: the claim is the task's lowest sample number that is
            neither logged nor claimed (so a replay of a done task gets ``#1``, ``#2``, ...);
            without it, only sample 0 of each task is offered.

    Returns:
        The held ``Claim`` (release it when the episode is logged).

    Raises:
        InputError: no task is left (every one logged or claimed), naming ``out``.
    """
    out = Path(out)
    done = existing_keys(out)
    for task in tasks:
        sample = 0
        while True:
            if (task.task_id, sample) not in done:
                fd = _try_lock(out, task.task_id, sample)
                if fd is not None:
                    done = existing_keys(out)  # under the claim: finished meanwhile by another player?
                    if (task.task_id, sample) not in done:
                        return Claim(task, sample, fd)
                    fcntl.flock(fd, fcntl.LOCK_UN)
                    os.close(fd)
            if not replay:
                break
            sample += 1
    raise InputError("--out", str(out), "every task already has an episode there or is being played by another client")
