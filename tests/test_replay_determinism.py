"""Issue 31 point 1: a replayed Python step is judged the same on every re-scoring, and a step whose
printout depends on the clock, randomness or object identities is ``EVIDENCE_NONDETERMINISTIC``.

The episode's printout is recorded the way the environment records it (the step run in the
bubblewrap sandbox, its ``db.sql`` answered from a read-only connection), then scored again and
again. The print path re-runs the step twice on the base (``abstention/_printed``): two printouts
that differ on the same database are nondeterministic evidence (on main f4d08ac such a step was
``EVIDENCE_FABRICATED``: its re-run printed another time or number than the episode).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest

from verifier import VerifyConfig, verify
from verifier.agents.format import tagged_response
from verifier.agents.reference_agents import abstention_reasoning
from verifier.contract import Step, Task, Trajectory
from verifier.pysandbox import PythonLimits, PythonSandbox, sandbox_status

from test_noise_printed import _filter_in_python, _filterable

pytestmark = pytest.mark.skipif(
    not sandbox_status(PythonLimits(isolation="bwrap", site_packages=True))[0],
    reason="bubblewrap cannot run here: Python steps are not re-run, nothing to test",
)


def _episode(db: Path, code: str) -> tuple[str, list[str]]:
    """What the environment records for ``code``: its printout and SQL, run in the sandbox."""
    con = duckdb.connect(str(db), read_only=True)

    def run_sql(sql: str) -> tuple[list[str], list[tuple[Any, ...]], bool]:
        cur = con.execute(sql)
        return [d[0] for d in cur.description], [tuple(r) for r in cur.fetchall()], False

    try:
        with PythonSandbox(run_sql, PythonLimits(isolation="bwrap")) as box:
            res = box.run(code, step=1)
    finally:
        con.close()
    assert res.error is None, res.error
    return res.output, res.sql


def _abstain(task: Task, code: str, db: Path) -> Trajectory:
    output, sqls = _episode(db, code)
    step = Step(index=1, kind="python", code=code, output=output, sql=sqls)
    return Trajectory(trajectory_id=f"{task.task_id}#py", task_id=task.task_id, steps=[step],
                      final_response=tagged_response("NULL", abstention_reasoning(task, [1])))


#: Honest printing whose order Python decides: sets and dicts of strings, sorted output,
#: datetime arithmetic on the data's own values.
HONEST_TAIL = (
    "names = {str(c) for c in res.columns} | {'absent', 'missing', 'none', 'empty'}\n"
    "print('columns:', names)\n"
    "print('positions:', {c: i for c, i in at.items()})\n"
    "print('sorted:', sorted(names))\n"
    "import datetime\n"
    "stamps = [v for r in res.rows for v in r if isinstance(v, datetime.datetime)]\n"
    "print('span:', (max(stamps) - min(stamps)) if stamps else datetime.timedelta(0))\n"
)


def _assert_one_verdict(task: Task, db: Path) -> None:
    traj = _abstain(task, _filter_in_python(task, db) + HONEST_TAIL, db)
    config = VerifyConfig(db_path=str(db))
    verdicts = []
    for _ in range(20):
        v = verify(traj, task, config)
        verdicts.append((v.success, [r.value for r in v.reasons]))
        assert "EVIDENCE_FABRICATED" not in verdicts[-1][1], v.details["evidence"]["queries"]
        assert "EVIDENCE_NONDETERMINISTIC" not in verdicts[-1][1], v.details["evidence"]["queries"]
    assert len(set(map(repr, verdicts))) == 1, verdicts
    assert verdicts[0][0], verdicts[0]


def test_honest_sets_and_dicts_get_one_verdict_on_20_rescorings(synth_db: Path, synth_tasks: list) -> None:
    _assert_one_verdict(_filterable(synth_tasks, 1, synth_db)[0], synth_db)


@pytest.mark.real_data
def test_honest_sets_and_dicts_get_one_verdict_on_20_rescorings_real_demo(demo_db: Path, demo_tasks: list) -> None:
    """The same on the real MIMIC-IV demo (skips, saying so, when MIMIC_DEMO_DIR is absent)."""
    _assert_one_verdict(_filterable(demo_tasks, 1, demo_db)[0], demo_db)


#: Printouts that depend on something else than the records and the code.
NONDETERMINISTIC = {
    "time.time": "import time\nprint('at', time.time())\n",
    "datetime.now": "import datetime\nprint('now', datetime.datetime.now())\n",
    "random": "import random\nprint('draw', random.random())\n",
    "uuid": "import uuid\nprint('run', uuid.uuid4())\n",
    "os.urandom": "import os\nprint('salt', os.urandom(8).hex())\n",
    "secrets": "import secrets\nprint('token', secrets.token_hex(8))\n",
    "id()": "print('object', id(object()))\n",
    "hash() of an object": "print('hash', hash(object()))\n",
    "perf_counter": "import time\nprint('took', time.perf_counter_ns())\n",
}


@pytest.mark.parametrize("source", list(NONDETERMINISTIC))
def test_code_reading_time_or_randomness_is_nondeterministic(synth_db: Path, synth_tasks: list, source: str) -> None:
    task = _filterable(synth_tasks, 1, synth_db)[0]
    traj = _abstain(task, _filter_in_python(task, synth_db) + NONDETERMINISTIC[source], synth_db)
    v = verify(traj, task, VerifyConfig(db_path=str(synth_db)))
    reasons = [r.value for r in v.reasons]
    assert not v.success and "EVIDENCE_NONDETERMINISTIC" in reasons and "EVIDENCE_FABRICATED" not in reasons, (
        reasons, v.details["evidence"]["queries"])
    rec = [r for r in v.details["evidence"]["queries"] if r["origin"] == "python_output"][0]
    assert rec["status"] == "nondeterministic" and "twice" in rec["why"], rec


def test_a_replay_is_charged_its_cpu_seconds_not_the_seconds_it_waited(synth_db: Path, synth_tasks: list) -> None:
    """Issue 31 point 2, from CI of 320c3f1: an honest whole-table step was judged
    ``EVIDENCE_BUDGET_EXCEEDED`` once in twenty re-scorings on a loaded machine, since each replay
    was charged its wall seconds. A step that waits (as a step descheduled by the load does) is
    charged nothing for the waiting: the four replays of a step that sleeps 0.8 s spend 3.2 wall
    seconds, over the 2 s budget floor, and the abstention holds."""
    task = _filterable(synth_tasks, 1, synth_db)[0]
    traj = _abstain(task, "import time\ntime.sleep(0.8)\n" + _filter_in_python(task, synth_db), synth_db)
    config = VerifyConfig(db_path=str(synth_db))
    v = verify(traj, task, config)
    assert config.evidence_budget_floor_s < 3.2 and v.details["evidence"]["budget"]["time_budget_s"] < 3.2
    assert v.success, ([r.value for r in v.reasons], v.details["evidence"]["queries"])


def test_a_replay_that_works_past_the_budget_is_over_budget(synth_db: Path, synth_tasks: list) -> None:
    """The charge is real: a step whose own code spends about a CPU second (a loop), replayed on
    the base, again, and on the overlays, passes the 2 s budget: ``EVIDENCE_BUDGET_EXCEEDED``."""
    task = _filterable(synth_tasks, 1, synth_db)[0]
    burn = "t = 0\nfor i in range(25_000_000):\n    t += i\n"
    traj = _abstain(task, burn + _filter_in_python(task, synth_db), synth_db)
    v = verify(traj, task, VerifyConfig(db_path=str(synth_db)))
    reasons = [r.value for r in v.reasons]
    assert not v.success and "EVIDENCE_BUDGET_EXCEEDED" in reasons, (reasons, v.details["evidence"]["queries"])
