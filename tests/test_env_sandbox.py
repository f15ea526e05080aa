"""Python steps in EHREnv: state, recorded SQL, and confinement of untrusted code.

Each attack (network, writes outside the folder, database modification,
limits) must come back as an error observation while the episode continues.
A small DuckDB file made here is enough: these tests are about the sandbox,
not the clinical data (the real demo runs in test_env.py/test_agents.py).
"""

from __future__ import annotations

import hashlib
import socket
import threading
from pathlib import Path

import duckdb
import pytest

from verifier.contract import Task, Verdict
from verifier.env import EHREnv, EnvConfig, PythonLimits
from verifier.env.sandbox import STATE_LOST, PythonSandbox


@pytest.fixture(scope="module")
def small_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sandbox_db") / "small.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE lab_events (patientid INTEGER, itemid INTEGER, value_numeric DOUBLE, chart_time TIMESTAMP)")
    con.execute("INSERT INTO lab_events VALUES (1, 50971, 4.1, '2150-01-01 08:00'), (1, 50971, 3.9, '2150-01-02 08:00'), (2, 50983, 140, '2150-01-03 09:30')")
    con.close()
    return path


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


TASK = Task.model_validate({
    "task_id": "sandbox-1", "pair_id": "sandbox", "question": "What was the first potassium of patient 1?",
    "condition": "clean", "intent": "laboratory_microbiology", "program": "test",
    "reference": {"sql": "SELECT 4.1", "answer": {"type": "quantity", "value": 4.1, "unit": "mmol/L"}},
})


def _scorer(traj, task, cfg):  # the sandbox tests never judge answers
    return Verdict(task_id=task.task_id, trajectory_id=traj.trajectory_id, success=False, score=0.0,
                   condition=task.condition, abstained=False, verifier_version="test")


@pytest.fixture()
def env(small_db: Path):
    limits = PythonLimits(cpu_s=5, cpu_total_s=60, wall_s=30, memory_mb=512, max_output_chars=2000, file_size_mb=1)
    e = EHREnv(str(small_db), EnvConfig(max_steps=30, python=limits), scorer=_scorer)
    e.reset(TASK)
    yield e
    e.close()


def py(env: EHREnv, code: str) -> tuple[str, object]:
    obs, reward, terminated, truncated, _ = env.step({"kind": "python", "code": code})
    assert not terminated and not truncated, "a Python step must never end the episode"
    assert reward == 0.0
    return obs, env.steps[-1]


def test_state_persists_and_sql_is_recorded(env: EHREnv) -> None:
    obs, _ = py(env, "rows = db.sql('SELECT value_numeric FROM lab_events WHERE patientid = 1 ORDER BY chart_time').rows")
    obs, step = py(env, "print(sum(v for (v,) in rows))\nlen(rows)")
    assert "8.0" in obs and obs.strip().endswith("2")
    first = env.steps[0]
    assert first.kind == "python" and first.sql == ["SELECT value_numeric FROM lab_events WHERE patientid = 1 ORDER BY chart_time"]
    assert step.sql == [] and step.error is None


def test_query_values_keep_their_types(env: EHREnv) -> None:
    obs, step = py(env, "r = db.sql('SELECT chart_time, value_numeric FROM lab_events ORDER BY 1 LIMIT 1')\n"
                        "print(type(r.rows[0][0]).__name__, r.rows[0][0].isoformat(), r.columns)")
    assert "datetime 2150-01-01T08:00:00 ['chart_time', 'value_numeric']" in obs


def test_network_socket_is_refused(env: EHREnv) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    accepted: list[object] = []
    t = threading.Thread(target=lambda: accepted.append(server.accept()), daemon=True)
    t.start()
    try:
        obs, step = py(env, f"import socket\ns = socket.create_connection(('127.0.0.1', {port}), timeout=2)\ns.sendall(b'hi')")
        assert step.error and "network access is disabled" in step.error
        obs, step = py(env, f"import _socket\ns = _socket.socket()\ns.connect(('127.0.0.1', {port}))")
        assert step.error and "network access is disabled" in step.error
        t.join(0.5)
        assert not accepted, "the sandbox reached a socket on the host"
    finally:
        server.close()
    obs, step = py(env, "1 + 1")
    assert obs.strip().endswith("2"), "the episode continues after a refused connection"


def test_writes_outside_the_folder_are_refused(env: EHREnv, tmp_path: Path) -> None:
    target = tmp_path / "escape.txt"
    obs, step = py(env, f"open({str(target)!r}, 'w').write('x')")
    assert step.error and "outside the sandbox folder" in step.error
    assert not target.exists()
    obs, step = py(env, f"import os\nos.makedirs({str(tmp_path / 'newdir')!r})")
    assert step.error and not (tmp_path / "newdir").exists()
    obs, step = py(env, "import os\nos.symlink('/etc', 'etc_link')")
    assert step.error and "links" in step.error
    # inside the folder is fine, and files persist between steps
    obs, step = py(env, "open('notes.txt', 'w').write('kept')")
    assert step.error is None
    obs, step = py(env, "open('notes.txt').read()")
    assert "'kept'" in obs


def test_the_database_cannot_be_modified(env: EHREnv, small_db: Path) -> None:
    before = _digest(small_db)
    obs, step = py(env, "db.sql('DROP TABLE lab_events')")
    assert step.error and "not a read" in step.error and step.sql == []
    obs, step = py(env, "db.sql(\"INSERT INTO lab_events VALUES (9, 1, 1.0, NULL)\")")
    assert step.error and step.sql == []
    obs, step = py(env, "import duckdb")
    assert step.error and "blocked" in step.error
    obs, step = py(env, f"open({str(small_db)!r}, 'r+b').write(b'garbage')")
    assert step.error and "outside the sandbox folder" in step.error
    obs, step = py(env, f"import os\nos.remove({str(small_db)!r})")
    assert step.error
    obs, step = py(env, "import ctypes")
    assert step.error and "blocked" in step.error
    assert _digest(small_db) == before
    obs, step = py(env, "db.sql('SELECT count(*) AS n FROM lab_events').rows")
    assert "[(3,)]" in obs


def test_processes_are_refused(env: EHREnv) -> None:
    obs, step = py(env, "import subprocess\nsubprocess.run(['true'])")
    assert step.error and "processes" in step.error
    obs, step = py(env, "import os\nos.system('true')")
    assert step.error and "processes" in step.error


def test_memory_limit(env: EHREnv) -> None:
    py(env, "x = 7")
    obs, step = py(env, "b = bytearray(2 * 1024 ** 3)")
    assert step.error and "MemoryError" in step.error and "512 MB" in step.error
    obs, step = py(env, "x")
    assert obs.strip().endswith("7"), "state survives a MemoryError"


def test_cpu_limit(small_db: Path) -> None:
    # a generous wall limit, so that the CPU limit fires first even on a loaded machine
    limits = PythonLimits(cpu_s=1, cpu_total_s=60, wall_s=60, memory_mb=512)
    env = EHREnv(str(small_db), EnvConfig(python=limits), scorer=_scorer)
    env.reset(TASK)
    py(env, "x = 7")
    obs, step = py(env, "while True:\n    pass")
    assert step.error and "CPU-time limit of 1 s" in step.error
    obs, step = py(env, "x")
    assert obs.strip().endswith("7"), "state survives a per-step CPU limit"
    env.close()


def test_wall_time_limit_restarts_the_worker(small_db: Path) -> None:
    env = EHREnv(str(small_db), EnvConfig(python=PythonLimits(wall_s=3)), scorer=_scorer)
    env.reset(TASK)
    py(env, "x = 7")
    obs, step = py(env, "import time\ntime.sleep(60)")
    assert step.error and "wall-time limit of 3 s" in step.error and STATE_LOST in step.error
    obs, step = py(env, "x")
    assert step.error and "NameError" in step.error, "a restarted worker has fresh state"
    obs, step = py(env, "y = 1; y")
    assert step.error is None
    env.close()


def test_killed_worker_is_restarted_with_a_notice(env: EHREnv) -> None:
    py(env, "x = 7")
    env._sandbox._proc.kill()  # noqa: SLF001 - simulate a crash between steps
    env._sandbox._proc.wait()  # noqa: SLF001
    obs, step = py(env, "1 + 1")
    assert STATE_LOST in obs and STATE_LOST in step.error
    assert step.output.strip() == "2", "the step still ran, in a fresh worker"


def test_output_limit(env: EHREnv) -> None:
    obs, step = py(env, "print('a' * 100000)")
    assert len(step.output) < 2200 and "output truncated at 2000 characters" in step.output
    obs, step = py(env, "open('big.bin', 'wb').write(b'0' * (3 * 1024 * 1024))")
    assert step.error and ("File too large" in step.error or "Errno 27" in step.error)


def test_syntax_error_and_exit_are_observations(env: EHREnv) -> None:
    obs, step = py(env, "def (")
    assert step.error and "SyntaxError" in step.error
    obs, step = py(env, "import sys\nsys.exit(3)")
    assert step.error and "SystemExit" in step.error
    obs, step = py(env, "2 * 21")
    assert obs.strip().endswith("42")


def test_state_is_fresh_for_each_episode(env: EHREnv) -> None:
    py(env, "secret = 41")
    env.reset(TASK)
    obs, step = py(env, "secret")
    assert step.error and "NameError" in step.error


def test_sandbox_folder_is_removed_on_close(small_db: Path) -> None:
    """In-process: a host folder, removed by close. Under bwrap (issue 31) the folder is the worker's
    own tmpfs: nothing on the host, gone with the worker."""
    sb = PythonSandbox(lambda sql: ([], [], False), PythonLimits(isolation="in_process"))
    res = sb.run("import os\nopen('here.txt', 'w').write('x')\nos.getcwd()")
    folder = sb.folder
    assert res.error is None and (folder / "here.txt").read_text() == "x", "the worker's cwd is the episode folder"
    sb.close()
    assert not folder.exists() and not sb.alive
    with PythonSandbox(lambda sql: ([], [], False)) as box:
        res = box.run("import os\nopen('here.txt', 'w').write('x')\nos.getcwd()")
        assert res.error is None and res.output.strip() == "'/episode'" and box.folder is None


@pytest.mark.parametrize("isolation", ["bwrap", "in_process"])
def test_native_code_cannot_write_outside_the_folder(small_db: Path, tmp_path: Path, isolation: str) -> None:
    """pyarrow writes through C++ (no audit event): only the OS layer stops it (bwrap's read-only
    root, or the in-process mode's read-only mount namespace)."""
    from verifier.env.sandbox import mount_namespace_available

    pytest.importorskip("pyarrow")
    if isolation == "in_process" and not mount_namespace_available():
        pytest.skip("no mount namespace here (needs root on Linux); native writes are not confined")
    limits = PythonLimits(isolation=isolation, site_packages=True, memory_mb=2048)
    env = EHREnv(str(small_db), EnvConfig(python=limits), scorer=_scorer)
    env.reset(TASK)
    before = _digest(small_db)
    target = tmp_path / "native.parquet"
    obs, step = py(env, "import pyarrow as pa, pyarrow.parquet as pq\n"
                        f"pq.write_table(pa.table({{'a': [1]}}), {str(target)!r})")
    assert step.error and ("Read-only file system" in step.error or "No such file" in step.error) and not target.exists()
    obs, step = py(env, f"import pyarrow.fs as fs\nfs.LocalFileSystem().open_output_stream({str(small_db)!r})")
    assert step.error and ("Read-only file system" in step.error or "No such file" in step.error)
    assert _digest(small_db) == before
    obs, step = py(env, "import pyarrow as pa, pyarrow.parquet as pq\npq.write_table(pa.table({'a': [1]}), 'ok.parquet')\n"
                        "pq.read_table('ok.parquet').num_rows")
    assert step.error is None and obs.strip().endswith("1")
    if isolation == "in_process":
        assert env._sandbox.hardening["readonly_fs"] == "ok"  # noqa: SLF001
    env.close()


# ---------------------------------------------------------------- reading is confined too
def test_reading_outside_the_folder_is_refused(env: EHREnv, small_db: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Agent code must not read task files, the database file or host files (reward hacking)."""
    other = tmp_path_factory.mktemp("other_run")
    (other / "tasks.jsonl").write_text(TASK.model_dump_json() + "\n")
    attempts = {
        "host file": "open('/etc/passwd').read()",
        "database file": f"open({str(small_db)!r}, 'rb').read(16)",
        "database file via os.open": f"import os\nos.read(os.open({str(small_db)!r}, os.O_RDONLY), 16)",
        "another run's tasks": f"import json\njson.loads(open({str(other / 'tasks.jsonl')!r}).readline())['reference']",
        "listing another folder": f"import os\nos.listdir({str(other)!r})",
        "scanning another folder": f"import os\n[e.name for e in os.scandir({str(other.parent)!r})]",
        "globbing other runs": f"import glob\nglob.glob({str(other.parent) + '/*/tasks.jsonl'!r})",
        "leaving the folder": f"import os\nos.chdir({str(other)!r})",
    }
    for what, code in attempts.items():
        obs, step = py(env, code)
        assert step.error and "SandboxViolation" in step.error and "sandbox folder is not allowed" in step.error, what
        assert "4.1" not in obs and "sandbox-1" not in obs and "root:" not in obs, what
    obs, step = py(env, "import os\nos.getcwd() == os.path.realpath('.') and 'tasks.jsonl' not in os.listdir('.')")
    assert step.error is None and obs.strip().endswith("True"), "the episode continues in its own folder"


def test_normal_code_still_works_under_read_confinement(env: EHREnv) -> None:
    code = (
        "import json, math, collections, statistics, datetime, re, zoneinfo\n"
        "vals = [v for (v,) in db.sql('SELECT value_numeric FROM lab_events WHERE patientid = 1').rows]\n"
        "c = collections.Counter(re.findall(r'\\d', '1122'))\n"
        "t = datetime.datetime(2150, 1, 1, tzinfo=zoneinfo.ZoneInfo('UTC'))\n"
        "json.dumps({'mean': statistics.mean(vals), 'sqrt': math.sqrt(4), 'c': c['1'], 'y': t.year})"
    )
    obs, step = py(env, code)
    assert step.error is None, step.error
    assert '"mean": 4.0' in obs and '"sqrt": 2.0' in obs and '"c": 2' in obs and '"y": 2150' in obs
    assert step.sql == ["SELECT value_numeric FROM lab_events WHERE patientid = 1"]
    obs, step = py(env, "import os\nos.makedirs('sub', exist_ok=True)\nopen('sub/a.txt', 'w').write('x1')\n"
                        "sorted(os.listdir('sub')), open('sub/a.txt').read(), [p for p in __import__('glob').glob('sub/*')]")
    assert step.error is None and "(['a.txt'], 'x1', ['sub/a.txt'])" in obs
    obs, step = py(env, "import os\nlen(open('/dev/urandom', 'rb').read(4)), open(os.devnull).read()")
    assert step.error is None and "(4, '')" in obs


def test_a_library_that_needs_ctypes_fails_with_a_clear_message(small_db: Path) -> None:
    """pandas imports ctypes when it loads; ctypes stays disabled even with ``site_packages=True``
    (the audit hook's second layer), so the agent is told why instead of getting a bare crash."""
    pytest.importorskip("pandas", reason="pandas is not installed in this environment")
    env = EHREnv(str(small_db), EnvConfig(python=PythonLimits(site_packages=True)), scorer=_scorer)
    env.reset(TASK)
    obs, step = py(env, "import pandas")
    assert step.error is not None and "ctypes is disabled in the sandbox" in obs
    env.close()


@pytest.mark.parametrize("module", ["numpy"])
def test_installed_data_libraries_import(small_db: Path, module: str) -> None:
    """With ``site_packages=True`` the interpreter's third-party libraries are importable (read-only)."""
    pytest.importorskip(module, reason=f"{module} is not installed in this environment")
    env = EHREnv(str(small_db), EnvConfig(python=PythonLimits(site_packages=True)), scorer=_scorer)
    env.reset(TASK)
    obs, step = py(env, f"import {module}\n{module}.__name__")
    assert step.error is None, step.error
    if module == "numpy":
        obs, step = py(env, "import numpy as np\nfloat(np.mean([v for (v,) in db.sql('SELECT value_numeric FROM lab_events').rows]))")
        assert step.error is None and obs.strip().endswith("49.333333333333336")
    env.close()


def test_third_party_libraries_are_absent_by_default(env: EHREnv) -> None:
    """The default sandbox holds the standard library only: no site-packages, hence no duckdb or project code."""
    obs, step = py(env, "import importlib.util\n[importlib.util.find_spec(m) is None for m in ('numpy', 'duckdb', 'verifier', 'pydantic')]")
    assert step.error is None and "[True, True, True, True]" in obs


def test_rule_tables_cannot_be_unlocked_from_agent_code(env: EHREnv) -> None:
    """The hook keeps its own copies of the rules: clearing the worker module's tables changes nothing."""
    obs, step = py(env, "import __main__ as w\nfor t in (w._BLOCKED_IMPORTS, w._DENIED_EVENTS, w._PATH_EVENTS): t.clear()\n"
                        "w._READABLE_DEVICES = ('/etc/passwd',)")
    obs, step = py(env, "import duckdb")
    assert step.error and "blocked" in step.error
    obs, step = py(env, "import os\nos.system('true')")
    assert step.error and "processes" in step.error
    obs, step = py(env, "open('/etc/passwd').read()")
    assert step.error and "outside the sandbox folder" in step.error


def test_traceback_labels_use_the_environment_step_index(env: EHREnv) -> None:
    env.step({"kind": "sql", "code": "SELECT 1"})
    obs, step = py(env, "x = 1\n1 / 0")
    assert step.index == 2
    assert 'File "<step 2>", line 2' in step.error and "ZeroDivisionError" in step.error


def test_threads_work_and_processes_do_not_in_the_os_sandbox(small_db: Path) -> None:
    """The seccomp filter refuses new processes (fork, vfork, clone without CLONE_THREAD) but not threads."""
    from verifier.pysandbox._seccomp import filter_program

    assert filter_program("sparc") is None and len(filter_program("x86_64")) % 8 == 0
    env = EHREnv(str(small_db), EnvConfig(python=PythonLimits(audit_hook=False)), scorer=_scorer)
    env.reset(TASK)
    obs, step = py(env, "from concurrent.futures import ThreadPoolExecutor\n"
                        "with ThreadPoolExecutor(4) as ex: r = sorted(ex.map(lambda i: i * i, range(8)))\nr")
    assert step.error is None and "[0, 1, 4, 9, 16, 25, 36, 49]" in obs
    obs, step = py(env, "import os\nos.fork()")
    assert step.error and "Operation not permitted" in step.error
    obs, step = py(env, "import subprocess\nsubprocess.run(['/python/bin/python3', '-c', '1'])")
    assert step.error and ("Operation not permitted" in step.error or "No such file" in step.error)
    assert env._sandbox.hardening["seccomp"] is True  # noqa: SLF001
    env.close()


def test_a_closed_sandbox_keeps_no_file_descriptor() -> None:
    """Each sandbox kept its log file's descriptor open: past 1,024 sandboxes in one process (the
    verifier re-runs cited Python steps, several sandboxes per trajectory) ``select`` failed with
    "filedescriptor out of range"."""
    import os

    def count() -> int:
        return len(os.listdir("/proc/self/fd"))

    with PythonSandbox(lambda q: ([], [], False)) as box:  # the first start probes bubblewrap once
        box.run("print(1)")
    before = count()
    for _ in range(5):
        with PythonSandbox(lambda q: ([], [], False)) as box:
            assert box.run("print(1)").output == "1\n"
    assert count() == before


def test_a_set_prints_in_the_same_order_in_every_worker(small_db: Path) -> None:
    """Issue 31 point 1: the sandbox started Python with ``-I`` and so a random string-hash seed per
    worker; a step printing a set of strings printed another order on replay, and the honest step
    was judged ``EVIDENCE_FABRICATED``. Each environment here starts its own worker."""
    code = "print({'alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta'})\nprint(hash('potassium'))"
    outs = set()
    for _ in range(4):
        limits = PythonLimits(cpu_s=5, cpu_total_s=60, wall_s=30, memory_mb=512, max_output_chars=2000, file_size_mb=1)
        e = EHREnv(str(small_db), EnvConfig(max_steps=5, python=limits), scorer=_scorer)
        try:
            e.reset(TASK)
            obs, _step = py(e, code)
            outs.add(obs.split("\n", 1)[1] if obs.startswith("[step") else obs)
        finally:
            e.close()
    assert len(outs) == 1, outs
