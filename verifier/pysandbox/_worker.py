"""Python sandbox worker: runs untrusted agent code in its own process.

Standard library only, started by ``verifier.env.sandbox.PythonSandbox``
(never imported by the package): by default as ``python -I -S worker.py ...``
inside the bubblewrap sandbox (``_bwrap``: only the runtime and the episode
folder exist, no network, no new processes), or, in the weaker in-process
mode the user must opt into, as ``python -I _worker.py ...`` on the host. It
speaks JSON lines over two inherited pipe fds (not stdin/stdout, so agent code
writing to fd 1 cannot corrupt the protocol).

Protocol (one JSON object per line):
    worker -> parent  {"op": "ready", "hardening": {...}}
    parent -> worker  {"op": "exec", "code": str, "step": int, "cpu_s": float, "max_output": int}
    worker -> parent  {"op": "query", "sql": str}            (while code runs, via ``db``)
    parent -> worker  {"op": "query_result", "ok": bool, "columns": [...], "rows": [...],
                       "truncated": bool, "error": str}
    worker -> parent  {"op": "done", "output": str, "error": str|null, "output_truncated": bool}

Confinement applied here before any agent code runs (the second layer under
bubblewrap, the only one in the in-process mode besides ``unshare``
namespaces; the parent adds a wall-time limit):
    - in a private mount namespace (``--readonly-fs``): every filesystem
      remounted read-only except the episode's folder, so even native code
      (pyarrow, numpy) cannot write elsewhere or touch the database file;
    - resource limits: RLIMIT_AS (memory), RLIMIT_CPU (per step soft, per
      episode hard), RLIMIT_FSIZE (largest file), RLIMIT_NOFILE, RLIMIT_CORE=0;
    - ``socket.socket`` replaced by a class that raises;
    - an audit hook (PEP 578), installed after the worker's own imports, that
      refuses: opening a file for writing, and creating/removing/renaming/
      chmod-ing paths, outside the temporary folder; opening a file for
      reading, listing a folder (``os.listdir``, ``os.scandir``, ``glob.glob``)
      outside the folder and the interpreter's import locations (prefixes,
      stdlib, site-packages, time-zone data; see ``_readable_roots``) and a few
      device files, so agent code cannot read task files, the database file
      or anything else on the host; ``os.chdir`` out of the folder; any socket
      creation or connection; starting processes, forking, sending signals;
      importing ``duckdb`` or ``ctypes`` (the database is reachable only
      through the ``db`` object, whose every query the parent checks with
      ``verifier.sql._safety`` and records).
Audit hooks are not a security boundary on their own (issue 11: ``os.open``
with ``dir_fd`` and ``_posixsubprocess.fork_exec`` got past them; issue 31:
agent code can switch the hook off through its closure cells, found with
``gc``); the bubblewrap sandbox and its seccomp filter are the boundary. The
hook gives clear error messages and is the in-process mode's only layer. ``--no-audit-hook`` (tests of that
sandbox alone) skips the hook and the ``socket`` stand-in; ``--site DIR``
adds a site-packages folder bound read-only (``PythonLimits.site_packages``).
"""

from __future__ import annotations

import argparse
import ast
import base64
import builtins
import datetime as _dt
import decimal
import io
import json
import math
import os
import resource
import signal
import sys
import threading
import traceback

_STEP_FILENAME = "<step {}>"


class SandboxViolation(PermissionError):
    """Raised when agent code attempts an operation the sandbox forbids."""


class CpuTimeExceeded(BaseException):
    """Raised (from SIGXCPU) when a step uses more CPU time than allowed."""


class DatabaseError(Exception):
    """A query sent through ``db`` was rejected, failed or timed out."""


# ---------------------------------------------------------------- values
def _decode(value):
    if isinstance(value, list):
        return [_decode(v) for v in value]
    if isinstance(value, dict):
        tag = value.get("$t")
        if tag is not None and set(value) == {"$t", "v"}:
            raw = value["v"]
            if tag == "datetime":
                return _dt.datetime.fromisoformat(raw)
            if tag == "date":
                return _dt.date.fromisoformat(raw)
            if tag == "time":
                return _dt.time.fromisoformat(raw)
            if tag == "timedelta":
                return _dt.timedelta(seconds=raw)
            if tag == "decimal":
                return decimal.Decimal(raw)
            if tag == "bytes":
                return base64.b64decode(raw)
            if tag == "float":
                return float(raw)
        return {k: _decode(v) for k, v in value.items()}
    return value


def _cell(value) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, float) and math.isfinite(value) and value == int(value) and abs(value) < 1e15:
        return f"{value:.1f}"
    if isinstance(value, _dt.datetime):
        return value.isoformat(sep=" ")
    return str(value)


class Result:
    """Rows returned by ``db.sql``: ``columns``, ``rows`` (tuples), ``truncated``.

    DuckDB-like helpers: ``fetchall()``, ``fetchone()``, ``fetchmany(n)``,
    ``df()``/``fetchdf()`` (needs pandas), iteration, ``len()``; printing it
    shows a small table.
    """

    def __init__(self, columns, rows, truncated):
        self.columns = list(columns)
        self.rows = [tuple(r) for r in rows]
        self.truncated = bool(truncated)
        self._pos = 0

    @property
    def description(self):
        return [(c, None, None, None, None, None, None) for c in self.columns]

    def fetchall(self):
        rest = self.rows[self._pos :]
        self._pos = len(self.rows)
        return rest

    def fetchone(self):
        if self._pos >= len(self.rows):
            return None
        self._pos += 1
        return self.rows[self._pos - 1]

    def fetchmany(self, size=1):
        out = self.rows[self._pos : self._pos + size]
        self._pos += len(out)
        return out

    def df(self):
        import pandas  # noqa: PLC0415 - optional

        return pandas.DataFrame(self.rows, columns=self.columns)

    fetchdf = df

    def __iter__(self):
        return iter(self.rows)

    def __len__(self):
        return len(self.rows)

    def __repr__(self):
        lines = [" | ".join(self.columns)]
        lines += [" | ".join(_cell(v) for v in r) for r in self.rows[:50]]
        n = len(self.rows)
        more = ", showing first 50" if n > 50 else ""
        cap = " (row cap reached)" if self.truncated else ""
        return "\n".join(lines) + f"\n({n} row{'s' if n != 1 else ''}{more}){cap}"


class Database:
    """Read-only access to the task's database from agent code.

    ``db.sql(query)`` (aliases ``execute``, ``query``) sends the query to the
    environment, which checks it is a read (verifier.sql._safety), runs it with a
    time limit and row cap, records it in the step, and returns a ``Result``.
    Raises ``DatabaseError`` when the query is rejected, fails or times out.
    """

    def __init__(self, channel):
        self._channel = channel

    def sql(self, query):
        if not isinstance(query, str):
            raise TypeError(f"db.sql expects the SQL text as a str, got {type(query).__name__}")
        reply = self._channel.request({"op": "query", "sql": query})
        if not reply.get("ok"):
            raise DatabaseError(reply.get("error") or "query failed")
        return Result(reply.get("columns", []), _decode(reply.get("rows", [])), reply.get("truncated", False))

    execute = sql
    query = sql

    def tables(self):
        """Names of the tables in the database."""
        return [r[0] for r in self.sql("SELECT table_name FROM information_schema.tables ORDER BY 1").rows]

    def __repr__(self):
        return "<read-only database: use db.sql('SELECT ...')>"


class _Channel:
    def __init__(self, rfd: int, wfd: int):
        self._r = os.fdopen(rfd, "r", encoding="utf-8", newline="\n")
        self._w = os.fdopen(wfd, "w", encoding="utf-8", newline="\n")
        self._lock = threading.Lock()

    def send(self, msg):
        with self._lock:
            self._w.write(json.dumps(msg, default=str) + "\n")
            self._w.flush()

    def receive(self):
        line = self._r.readline()
        if not line:
            raise SystemExit(0)
        return json.loads(line)

    def request(self, msg):
        self.send(msg)
        return self.receive()


# ---------------------------------------------------------------- output capture
class _CappedWriter(io.TextIOBase):
    def __init__(self, limit: int):
        self.limit = limit
        self.parts: list[str] = []
        self.size = 0
        self.truncated = False

    def writable(self):
        return True

    def write(self, s):
        if not isinstance(s, str):
            raise TypeError(f"write() argument must be str, not {type(s).__name__}")
        room = self.limit - self.size
        if room > 0:
            self.parts.append(s[:room])
            self.size += min(len(s), room)
        if len(s) > room:
            self.truncated = True
        return len(s)

    def getvalue(self):
        return "".join(self.parts)


# ---------------------------------------------------------------- confinement
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_PATH_EVENTS = {  # event -> indices of path arguments that must stay inside the folder
    "os.remove": (0,), "os.rmdir": (0,), "os.mkdir": (0,), "os.chmod": (0,), "os.chown": (0,),
    "os.truncate": (0,), "os.utime": (0,), "os.chflags": (0,), "os.lchflags": (0,), "os.lchmod": (0,),
    "os.lchown": (0,), "os.rename": (0, 1), "os.mkfifo": (0,), "os.mknod": (0,),
    "shutil.copyfile": (1,), "shutil.copymode": (1,), "shutil.copystat": (1,), "shutil.copytree": (1,),
    "shutil.rmtree": (0,), "shutil.move": (0, 1), "shutil.make_archive": (0,), "shutil.unpack_archive": (1,),
    "os.removexattr": (0,), "os.setxattr": (0,),
}
_DENIED_EVENTS = {
    "socket.__new__": "network access is disabled in the sandbox",
    "socket.connect": "network access is disabled in the sandbox",
    "socket.bind": "network access is disabled in the sandbox",
    "socket.sendto": "network access is disabled in the sandbox",
    "socket.sendmsg": "network access is disabled in the sandbox",
    "socket.getaddrinfo": "network access is disabled in the sandbox",
    "socket.gethostbyname": "network access is disabled in the sandbox",
    "os.system": "starting processes is disabled in the sandbox",
    "os.exec": "starting processes is disabled in the sandbox",
    "os.posix_spawn": "starting processes is disabled in the sandbox",
    "os.spawn": "starting processes is disabled in the sandbox",
    "os.fork": "starting processes is disabled in the sandbox",
    "os.forkpty": "starting processes is disabled in the sandbox",
    "subprocess.Popen": "starting processes is disabled in the sandbox",
    "pty.spawn": "starting processes is disabled in the sandbox",
    "os.kill": "sending signals is disabled in the sandbox",
    "os.killpg": "sending signals is disabled in the sandbox",
    "signal.pthread_kill": "sending signals is disabled in the sandbox",
    "os.symlink": "creating links is disabled in the sandbox",
    "os.link": "creating links is disabled in the sandbox",
    "ctypes.dlopen": "loading native libraries is disabled in the sandbox",
}
_PATH_EVENTS_EXTRA = {"sqlite3.connect": (0,)}
_BLOCKED_IMPORTS = {
    "duckdb": "use the provided `db` object (db.sql('SELECT ...')) to query the database",
    "_duckdb": "use the provided `db` object (db.sql('SELECT ...')) to query the database",
    "ctypes": "ctypes is disabled in the sandbox",
    "_ctypes": "ctypes is disabled in the sandbox",
}


class _BlockedSocket:
    """Stand-in for ``socket.socket``: every construction fails."""

    def __init__(self, *args, **kwargs):
        raise SandboxViolation("network access is disabled in the sandbox")


#: Device files agent code may open although they are outside every readable folder.
_READABLE_DEVICES = ("/dev/null", "/dev/zero", "/dev/random", "/dev/urandom")
_LIST_EVENTS = ("os.listdir", "os.scandir")
_GLOB_EVENTS = ("glob.glob", "glob.glob/2")
_GLOB_MAGIC = "*?["


def _readable_roots() -> tuple[str, ...]:
    """Folders agent code may read besides its own: what imports need.

    Returns:
        Real paths (symlinks resolved, no duplicates, never ``/``) of
        ``sys.prefix``, ``sys.base_prefix``, ``sys.exec_prefix``,
        ``sys.base_exec_prefix``, the sysconfig ``stdlib``/``platstdlib``/
        ``purelib``/``platlib`` folders, ``site.getsitepackages()`` and the
        ``zoneinfo.TZPATH`` time-zone folders (public data ``zoneinfo`` reads).
    """
    import site  # noqa: PLC0415 - before the audit hook, like every worker import
    import sysconfig  # noqa: PLC0415
    import zoneinfo  # noqa: PLC0415

    paths = sysconfig.get_paths()
    candidates = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]
    candidates += [paths.get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")]
    candidates += list(site.getsitepackages()) + list(zoneinfo.TZPATH)
    roots: list[str] = []
    for c in candidates:
        if c and os.path.isabs(c):
            real = os.path.realpath(c)
            if real != os.sep and real not in roots:
                roots.append(real)
    return tuple(roots)


def _glob_base(pattern, root_dir) -> str:
    """The folder a glob pattern starts listing from: its parts before the first wildcard."""
    text = os.fsdecode(os.fspath(pattern))
    parts = text.split(os.sep)
    fixed = []
    for part in parts[:-1]:
        if any(c in part for c in _GLOB_MAGIC):
            break
        fixed.append(part)
    base = os.sep.join(fixed) if fixed else ""
    if text.startswith(os.sep) and not base:
        base = os.sep
    if root_dir is not None and not os.path.isabs(base):
        base = os.path.join(os.fsdecode(os.fspath(root_dir)), base)
    return base or "."


def _install_audit_hook(folder: str, read_roots: tuple[str, ...] = ()) -> None:
    """Install the worker's audit hook (see the module docstring).

    Args:
        folder: the episode folder: the only place code may write, and (with
            ``read_roots`` and ``_READABLE_DEVICES``) read or list.
        read_roots: further folders code may read and list (``_readable_roots()``).

    The rule tables are copied into the hook's closure as read-only values,
    so agent code rebinding the module's globals changes nothing.
    """
    import types  # noqa: PLC0415

    root = os.path.realpath(folder)
    readable_prefixes = tuple(r.rstrip(os.sep) + os.sep for r in (root, *read_roots))
    readable_exact = frozenset((root, *read_roots, *_READABLE_DEVICES))
    write_flags = _WRITE_FLAGS
    path_events = types.MappingProxyType({**_PATH_EVENTS, **_PATH_EVENTS_EXTRA})
    denied_events = types.MappingProxyType(dict(_DENIED_EVENTS))
    blocked_imports = types.MappingProxyType(dict(_BLOCKED_IMPORTS))
    list_events, glob_events = frozenset(_LIST_EVENTS), frozenset(_GLOB_EVENTS)
    realpath, join, getcwd, fspath, fsdecode = os.path.realpath, os.path.join, os.getcwd, os.fspath, os.fsdecode
    violation, glob_base = SandboxViolation, _glob_base

    def resolve(path):
        """Real absolute path, or None when ``path`` is not a path."""
        try:
            return realpath(join(getcwd(), fsdecode(fspath(path))))
        except (TypeError, ValueError):
            return None

    def inside(path) -> bool:
        if isinstance(path, int) or path is None:
            return True  # an fd already opened (and checked) earlier / the current folder
        full = resolve(path)
        return full is not None and (full == root or full.startswith(root + os.sep))

    def readable(path) -> bool:
        if isinstance(path, int) or path is None:
            return True
        full = resolve(path)
        return full is not None and (full in readable_exact or full.startswith(readable_prefixes))

    def hook(event, args):
        if event == "import":
            name = str(args[0]) if args else ""
            top = name.split(".")[0]
            if top in blocked_imports:
                raise ImportError(f"import of {name!r} is blocked: {blocked_imports[top]}")
            return
        if event in denied_events:
            raise violation(denied_events[event])
        if event == "open":
            path, mode, flags = (list(args) + [None, None, None])[:3]
            writing = bool(mode and any(c in str(mode) for c in "wax+")) or bool(
                isinstance(flags, int) and flags & write_flags
            )
            if writing and not inside(path):
                raise violation(f"writing outside the sandbox folder is not allowed: {path!r}")
            if not readable(path):
                raise violation(f"reading outside the sandbox folder is not allowed: {path!r}")
            return
        if event in list_events:
            if args and not readable(args[0]):
                raise violation(f"listing outside the sandbox folder is not allowed: {args[0]!r}")
            return
        if event in glob_events:
            try:
                base = glob_base(args[0], args[2] if event == "glob.glob/2" and len(args) > 2 else None)
            except (TypeError, ValueError, IndexError):
                base = None
            if base is None or not readable(base):
                raise violation(f"listing outside the sandbox folder is not allowed: {args[0] if args else None!r}")
            return
        if event == "os.chdir":
            target = args[0] if args else None
            if isinstance(target, int) or not inside(target):
                raise violation(f"changing directory out of the sandbox folder is not allowed: {target!r}")
            return
        idx = path_events.get(event)
        if idx:
            for i in idx:
                if i < len(args) and not inside(args[i]):
                    raise violation(f"{event} outside the sandbox folder is not allowed: {args[i]!r}")

    sys.addaudithook(hook)


def _readonly_filesystem(folder: str) -> str:
    """Inside a private mount namespace: everything read-only except ``folder``.

    Bind-mounts ``folder`` onto itself (so it stays writable), then remounts
    ``/`` and the other real filesystems read-only (``/proc``, ``/sys``,
    ``/dev`` and ``/mnt`` are left alone). Only called when the parent started
    the worker with ``unshare --mount``; the host's mounts are unaffected.

    Returns:
        ``"ok"`` or the first failure (then the folder is not made writable
        alone and the audit hook remains the only write barrier).
    """
    import subprocess

    def mount(*args: str) -> str | None:
        done = subprocess.run(["mount", *args], capture_output=True, text=True, timeout=20)
        return None if done.returncode == 0 else (done.stderr.strip() or f"mount {args} failed")

    err = mount("--bind", folder, folder)
    if err:
        return err
    points = []
    with open("/proc/self/mountinfo", encoding="utf-8") as fh:
        for line in fh:
            mp = line.split()[4].replace("\\040", " ")
            if mp == folder or mp.startswith(("/proc", "/sys", "/dev/pts", "/mnt")) or mp == "/dev":
                continue
            points.append(mp)
    for mp in sorted(set(points), key=len):
        err = mount("-o", "remount,bind,ro", mp)
        if err:
            return err
    return "ok"


def _on_xcpu(signum, frame):
    raise CpuTimeExceeded()


def _apply_limits(mem_mb: int, cpu_total_s: int, fsize_mb: int) -> dict:
    applied = {}
    for name, res, value in (
        ("memory_mb", resource.RLIMIT_AS, mem_mb * 1024 * 1024),
        ("file_size_mb", resource.RLIMIT_FSIZE, fsize_mb * 1024 * 1024),
        ("open_files", resource.RLIMIT_NOFILE, 256),
        ("core", resource.RLIMIT_CORE, 0),
    ):
        try:
            resource.setrlimit(res, (value, value))
            applied[name] = True
        except (ValueError, OSError):
            applied[name] = False
    try:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_total_s, cpu_total_s))
        applied["cpu_total_s"] = cpu_total_s
    except (ValueError, OSError):
        applied["cpu_total_s"] = None
    signal.signal(signal.SIGXCPU, _on_xcpu)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the limit fail with EFBIG instead
    return applied


def _cpu_used() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def _set_step_cpu(cpu_s: float) -> None:
    hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    soft = int(math.ceil(_cpu_used() + cpu_s))
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    try:
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
    except (ValueError, OSError):
        pass


# ---------------------------------------------------------------- execution
def _folder_note(exc: BaseException, caps) -> str:
    """A line naming the episode folder's caps when ``exc`` is a write refused for space
    (``ENOSPC``: the bwrap tmpfs's size or file cap, ``caps`` = (MiB, files)), else ""."""
    import errno  # noqa: PLC0415

    if caps is None or not isinstance(exc, OSError) or exc.errno not in (errno.ENOSPC, errno.EDQUOT):
        return ""
    return (f"EpisodeFolderFull: the episode folder holds at most {caps[0]} MiB in {caps[1]} files and folders; "
            "this write went past that cap. Delete files you no longer need.")


def _format_error(exc: BaseException, mem_mb: int, cpu_s: float, caps=None) -> str:
    if isinstance(exc, CpuTimeExceeded):
        return f"CpuTimeExceeded: the step used more than its CPU-time limit of {cpu_s:g} s"
    if isinstance(exc, MemoryError):
        return f"MemoryError: the step exceeded the memory limit of {mem_mb} MB"
    tb = exc.__traceback__
    while tb is not None and not tb.tb_frame.f_code.co_filename.startswith("<step "):
        tb = tb.tb_next
    frames = [f for f in traceback.extract_tb(tb) if f.filename != __file__]
    lines = ["Traceback (most recent call last):\n"] if frames else []
    lines += traceback.format_list(frames) + traceback.format_exception_only(type(exc), exc)
    text = "".join(lines)
    if len(text) > 4000:
        text = text[:1000] + "\n...\n" + text[-3000:]
    return text + _folder_note(exc, caps)


def _run(code: str, step: int, ns: dict, out: _CappedWriter) -> None:
    filename = _STEP_FILENAME.format(step)
    tree = ast.parse(code, filename=filename, mode="exec")
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    exec(compile(tree, filename, "exec"), ns)  # noqa: S102 - sandboxed agent code
    if last is not None:
        value = eval(compile(last, filename, "eval"), ns)  # noqa: S307
        if value is not None:
            out.write(repr(value) + "\n")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rfd", type=int, required=True)
    ap.add_argument("--wfd", type=int, required=True)
    ap.add_argument("--folder", required=True)
    ap.add_argument("--mem-mb", type=int, default=1024)
    ap.add_argument("--cpu-total-s", type=int, default=300)
    ap.add_argument("--fsize-mb", type=int, default=64)
    ap.add_argument("--folder-mb", type=int, default=None, help="the folder's size cap (bwrap tmpfs), for error text")
    ap.add_argument("--folder-files", type=int, default=None, help="the folder's file cap (bwrap tmpfs), for error text")
    ap.add_argument("--readonly-fs", action="store_true")
    ap.add_argument("--site", action="append", default=[], help="site-packages folder to add (bwrap mode)")
    ap.add_argument("--no-audit-hook", action="store_true", help="tests of the OS sandbox alone")
    args = ap.parse_args(argv)

    os.chdir(args.folder)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1):
        os.dup2(devnull, fd)
    channel = _Channel(args.rfd, args.wfd)
    hardening = {}
    if args.readonly_fs:
        hardening["readonly_fs"] = _readonly_filesystem(os.path.realpath(args.folder))
        os.chdir(args.folder)  # re-enter through the writable bind mount
    hardening["limits"] = _apply_limits(args.mem_mb, args.cpu_total_s, args.fsize_mb)

    if args.site:
        import site  # noqa: PLC0415 - the worker runs with -S under bwrap

        for d in args.site:
            site.addsitedir(d)
    if not args.no_audit_hook:  # the in-process layer: socket stand-in and audit hook
        import socket

        socket.socket = _BlockedSocket  # type: ignore[misc]
        socket.create_connection = _BlockedSocket  # type: ignore[assignment]
        _install_audit_hook(args.folder, _readable_roots() + tuple(os.path.realpath(d) for d in args.site))
    hardening["audit_hook"] = not args.no_audit_hook

    ns: dict = {"__name__": "__main__", "__builtins__": builtins, "db": Database(channel)}
    channel.send({"op": "ready", "hardening": hardening, "pid": os.getpid()})
    while True:
        msg = channel.receive()
        if msg.get("op") != "exec":
            continue
        cpu_s = float(msg.get("cpu_s", 10))
        out = _CappedWriter(int(msg.get("max_output", 8000)))
        error = None
        _set_step_cpu(cpu_s)
        old_out, old_err = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = out
        try:
            _run(msg.get("code", ""), int(msg.get("step", 0)), ns, out)
        except SystemExit as exc:
            error = f"SystemExit: exit() is not allowed in a step (code {exc.code!r}); state is kept"
        except BaseException as exc:  # noqa: BLE001 - every agent error is an observation
            caps = (args.folder_mb, args.folder_files) if args.folder_mb else None
            error = _format_error(exc, args.mem_mb, cpu_s, caps)
        finally:
            sys.stdout, sys.stderr = old_out, old_err
        channel.send({"op": "done", "output": out.getvalue(), "error": error, "output_truncated": out.truncated})


if __name__ == "__main__":
    main()
