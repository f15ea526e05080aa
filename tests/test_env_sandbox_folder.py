"""Issue 31 point 3: the episode folder is bounded and leaves nothing behind.

One ``run_python`` step wrote 2 GiB of files (each under the 64 MiB RLIMIT_FSIZE) into a folder on
the host's temporary directory in 8.5 s, and the scoring replay runs the same code. Under
bubblewrap the folder is now a tmpfs of the worker's own mount namespace, capped in bytes and in
files (``PythonLimits.folder_mb``/``folder_files``): the step stops at the cap with a clear error,
the host's disk does not move, and nothing remains after the episode, also when the verifier is
killed. The in-process mode's host folders are named with their process id and removed by the
next sandbox when that process died.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from verifier.abstention._printed import replay, replay_limits
from verifier.contract import InputError, Step
from verifier.pysandbox import PythonLimits, PythonSandbox, sandbox_status
from verifier.pysandbox._sandbox import FOLDER_PREFIX, remove_stale_folders

bwrap_only = pytest.mark.skipif(not sandbox_status(PythonLimits(isolation="bwrap"))[0],
                                reason="bubblewrap cannot run here: the capped folder is the bwrap sandbox's")

#: Many files of 32 MiB (under RLIMIT_FSIZE's 64 MiB), 2 GiB in all: the issue's disk-fill step.
DISK_FILL = ("chunk = b'0' * (32 << 20)\n"
             "for i in range(64):\n"
             "    with open(f'fill{i}.bin', 'wb') as fh:\n"
             "        fh.write(chunk)\n"
             "print('wrote everything')\n")


def _no_sql(sql: str):
    return [], [], False


def _tmp_entries(folder: str | Path | None = None) -> set[str]:
    """The project's entries (``ehr-*``) in ``folder`` (default: the temporary directory)."""
    return {p for p in os.listdir(folder or tempfile.gettempdir()) if p.startswith("ehr-")}


@pytest.fixture
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary directory of this test's own, so other processes' files (parallel test runs, other
    sandboxes of the machine) never enter the before/after comparison."""
    d = tmp_path / "tmp"
    d.mkdir()
    monkeypatch.setenv("TMPDIR", str(d))
    monkeypatch.setattr(tempfile, "tempdir", str(d))
    return d


@bwrap_only
def test_disk_fill_stops_at_the_cap_and_leaves_nothing(private_tmp: Path) -> None:
    limits = PythonLimits()
    before, free = _tmp_entries(), shutil.disk_usage(tempfile.gettempdir()).free
    with PythonSandbox(_no_sql, limits) as box:
        res = box.run(DISK_FILL)
        during = shutil.disk_usage(tempfile.gettempdir()).free
        assert res.error and "No space left on device" in res.error and "EpisodeFolderFull" in res.error, res
        assert f"{limits.folder_mb} MiB" in res.error and "wrote everything" not in res.output
        assert abs(free - during) < limits.folder_mb << 20, "the step's files reached the host's disk"
        again = box.run("import os\nlen(os.listdir('.'))")  # the episode goes on, its files still there
        assert again.error is None and 0 < int(again.output.strip()) < 64
    assert _tmp_entries() <= before, "the episode left something in the temporary directory"
    assert box.folder is None


@bwrap_only
def test_file_count_is_capped() -> None:
    limits = PythonLimits(folder_files=200)
    with PythonSandbox(_no_sql, limits) as box:
        res = box.run("for i in range(100000):\n    open(f'e{i}', 'w').close()")
        assert res.error and "EpisodeFolderFull" in res.error and "200 files" in res.error, res
        n = box.run("import os\nlen(os.listdir('.'))")
        assert n.error is None and int(n.output.strip()) < 200


@bwrap_only
def test_files_persist_between_steps_of_one_episode() -> None:
    with PythonSandbox(_no_sql) as box:
        assert box.run("open('notes.txt', 'w').write('kept')").error is None
        assert box.run("open('notes.txt').read()").output.strip() == "'kept'"


@bwrap_only
def test_the_scoring_replay_has_the_same_cap() -> None:
    limits = replay_limits(30.0)
    assert (limits.folder_mb, limits.folder_files) == (PythonLimits().folder_mb, PythonLimits().folder_files)
    out = replay([Step(index=1, kind="python", code=DISK_FILL, output="")], 1, _no_sql, limits)
    assert out[1].error and "EpisodeFolderFull" in out[1].error


@bwrap_only
def test_a_killed_verifier_leaves_no_folder_and_no_worker(tmp_path: Path, private_tmp: Path) -> None:
    """SIGKILL the host process mid-episode: the worker dies with it (bwrap --die-with-parent) and
    its tmpfs with the worker; no folder of the episode stays on the host."""
    script = tmp_path / "host.py"
    script.write_text(
        "import sys\nfrom verifier.pysandbox import PythonSandbox\n"
        "box = PythonSandbox(lambda q: ([], [], False))\n"
        "r = box.run(\"open('a.bin', 'wb').write(b'0' * (8 << 20))\")\n"
        "assert r.error is None, r.error\n"
        "print(box._proc.pid, flush=True)\n"
        "import time\ntime.sleep(600)\n")
    before = _tmp_entries()
    host = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        worker = int(host.stdout.readline())
    finally:
        os.kill(host.pid, signal.SIGKILL)
        host.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(worker, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail("the worker outlived the killed host process")
    assert _tmp_entries() <= before


def test_stale_in_process_folders_are_removed(tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f"{FOLDER_PREFIX}{dead.pid}-abc"
    live = tmp_path / f"{FOLDER_PREFIX}{os.getpid()}-def"
    for d in (stale, live):
        d.mkdir()
        (d / "f.bin").write_bytes(b"0" * 1024)
    assert remove_stale_folders(tmp_path) == [stale]
    assert not stale.exists() and live.exists()


def test_in_process_folder_is_named_with_its_process_and_removed_on_close() -> None:
    box = PythonSandbox(_no_sql, PythonLimits(isolation="in_process"))
    res = box.run("import os\nopen('here.txt', 'w').write('x')\nos.getcwd()")
    folder = box.folder
    assert res.error is None and folder is not None and (folder / "here.txt").read_text() == "x"
    assert folder.name.startswith(f"{FOLDER_PREFIX}{os.getpid()}-")
    box.close()
    assert not folder.exists()


@bwrap_only
def test_a_host_folder_is_refused_under_bwrap(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="folder"):
        PythonSandbox(_no_sql, PythonLimits(isolation="bwrap"), folder=tmp_path)
