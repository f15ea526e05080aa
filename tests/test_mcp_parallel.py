"""Parallel MCP clients on one ``--out``: each connection claims a distinct episode (issue 34).

On main two clients of ``serve-tools`` on the same ``--out`` both took the first task and logged
two ``<task_id>#0`` trajectories, which ``score`` then reported as duplicated ids.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from batch_data import pick_pairs

pytest.importorskip("mcp", reason="mcp is in the dev extra")

from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from test_mcp_server import _cli, _text  # noqa: E402

from verifier.contract import Task, Trajectory, VerifyConfig, read_jsonl  # noqa: E402
from verifier.verify import verify  # noqa: E402


async def _client(args: list[str], together: asyncio.Barrier) -> str:
    """Connect, read the task, wait until every client holds its episode, then play and submit."""
    command, prefix = _cli()
    async with stdio_client(StdioServerParameters(command=command, args=prefix + ["serve-tools", *args])) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            seen = _text(await session.call_tool("get_task", {}))
            await together.wait()  # all connections are open at once
            await session.call_tool("run_sql", {"query": "SELECT count(*) AS n FROM patients"})
            await session.call_tool("submit", {"answer": "NULL", "reasoning": "not enough in [step 1]"})
    return seen


async def _clients(n: int, args: list[str]) -> list[str]:
    together = asyncio.Barrier(n)
    return list(await asyncio.gather(*(_client(args, together) for _ in range(n))))


@pytest.mark.parametrize("n", [2, 4])
def test_concurrent_clients_get_distinct_tasks_and_trajectory_ids(synth_db: Path, synth_tasks: list[Task],
                                                                   tmp_path: Path, n: int) -> None:
    tasks = pick_pairs(synth_tasks, 3)  # 6 tasks for at most 4 clients
    tasks_file, out = tmp_path / "tasks.jsonl", tmp_path / "trajectories.jsonl"
    tasks_file.write_text("".join(t.model_dump_json() + "\n" for t in tasks), encoding="utf-8")
    seen = asyncio.run(_clients(n, ["--tasks", str(tasks_file), "--db", str(synth_db), "--out", str(out)]))
    logged = list(read_jsonl(out, Trajectory))
    assert len(logged) == n
    assert len({t.task_id for t in logged}) == n, [t.trajectory_id for t in logged]
    assert len({t.trajectory_id for t in logged}) == n
    by_id = {t.task_id: t for t in tasks}
    assert sorted(by_id[t.task_id].question in s for t in logged for s in seen).count(True) == n
    config = VerifyConfig(db_path=str(synth_db))
    for traj in logged:  # every trajectory is scorable against its own task
        verdict = verify(traj, by_id[traj.task_id], config)
        assert verdict.trajectory_id == traj.trajectory_id and "VERIFIER_ERROR" not in verdict.reasons


def test_replaying_a_task_gets_the_next_sample(synth_tasks: list[Task], tmp_path: Path) -> None:
    """``--task-id`` of a task already logged claims ``#1``, and a held claim is skipped."""
    from verifier.adapters.mcp_server import claim_for

    task = synth_tasks[0]
    tasks_file, out = tmp_path / "tasks.jsonl", tmp_path / "trajectories.jsonl"
    tasks_file.write_text(task.model_dump_json() + "\n", encoding="utf-8")
    first = claim_for(tasks_file, out, task.task_id)
    second = claim_for(tasks_file, out, task.task_id)  # #0 is held (flock is per open file): next sample
    assert (first.sample, second.sample) == (0, 1)
    first.release()
    second.release()
    out.write_text(Trajectory(task_id=task.task_id, trajectory_id=f"{task.task_id}#0", final_response="").model_dump_json() + "\n",
                   encoding="utf-8")
    again = claim_for(tasks_file, out, task.task_id)
    assert again.sample == 1
    again.release()
