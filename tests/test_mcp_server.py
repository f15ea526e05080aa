"""``ehr-verifier serve-tools``: an MCP client from the official ``mcp`` package spawns the server over
stdio and plays full episodes; each connection is one episode, logged when it ends."""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path

import pytest
from batch_data import episodes, pick_pairs

pytest.importorskip("mcp", reason="mcp is in the dev extra")

from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from verifier.contract import Task, Trajectory, Verdict, VerifyConfig, read_jsonl  # noqa: E402
from verifier.verify import verify  # noqa: E402


def _cli() -> tuple[str, list[str]]:
    exe = Path(sys.executable).with_name("ehr-verifier")
    if exe.is_file():
        return str(exe), []
    found = shutil.which("ehr-verifier")
    return (found, []) if found else (sys.executable, ["-m", "verifier.cli"])


def _text(result) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


async def _play(args: list[str], script: Trajectory | None, submit: bool = True) -> dict:
    """Connect, read the task, replay ``script``'s steps through the tools, submit, disconnect."""
    command, prefix = _cli()
    seen: dict = {}
    async with stdio_client(StdioServerParameters(command=command, args=prefix + ["serve-tools", *args])) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            seen["tools"] = sorted(t.name for t in (await session.list_tools()).tools)
            seen["task"] = _text(await session.call_tool("get_task", {}))
            outputs = []
            for step in script.steps if script else []:
                name, key = ("run_sql", "query") if step.kind == "sql" else ("run_python", "code")
                outputs.append(_text(await session.call_tool(name, {key: step.code})))
            seen["outputs"] = outputs
            if submit and script is not None:
                seen["submitted"] = _text(await session.call_tool("submit", {"answer": script.final_response}))
                seen["after"] = _text(await session.call_tool("run_sql", {"query": "SELECT 1"}))
    return seen


def test_mcp_client_plays_one_episode_per_connection(synth_db: Path, synth_tasks: list[Task], tmp_path: Path):
    tasks = pick_pairs(synth_tasks, 1)  # a Clean task and its Noise twin
    oracle = {t.task_id: t for t in (Trajectory.model_validate_json(line) for line in episodes(synth_db, tasks, agents=("oracle",)))}
    tasks_file, out, verdicts = tmp_path / "tasks.jsonl", tmp_path / "trajectories.jsonl", tmp_path / "verdicts.jsonl"
    tasks_file.write_text("".join(t.model_dump_json() + "\n" for t in tasks), encoding="utf-8")
    args = ["--tasks", str(tasks_file), "--db", str(synth_db), "--out", str(out), "--verdicts", str(verdicts)]
    for task in tasks:  # each connection takes the next task without an episode in --out
        seen = asyncio.run(_play(args, oracle[task.task_id]))
        assert seen["tools"] == ["get_task", "run_python", "run_sql", "submit"]
        assert task.question in seen["task"] and "## Database schema" in seen["task"] and task.reference.sql not in seen["task"]
        assert all(o.startswith("[step ") for o in seen["outputs"])
        assert seen["submitted"].startswith("Submitted") and seen["after"].startswith("Error: the episode is over")
    logged = list(read_jsonl(out, Trajectory))
    assert [t.task_id for t in logged] == [t.task_id for t in tasks]
    config = VerifyConfig(db_path=str(synth_db))
    by_id = {t.task_id: t for t in tasks}
    for traj in logged:  # the episodes the server recorded verify as the oracle's do
        assert verify(traj, by_id[traj.task_id], config).success, traj.task_id
    assert [v.success for v in read_jsonl(verdicts, Verdict)] == [True, True]
    # a client that disconnects without submitting still ends (and logs) its episode
    seen = asyncio.run(_play(args + ["--task-id", tasks[1].task_id], None, submit=False))
    assert tasks[1].question in seen["task"]
    *_, last = read_jsonl(out, Trajectory)
    assert last.task_id == tasks[1].task_id and last.final_response == "" and len(list(read_jsonl(out, Trajectory))) == 3


async def _submit_split(args: list[str], script: Trajectory) -> str:
    """Replay ``script``'s steps, then submit its Answer and Reasoning as two arguments."""
    from verifier.parse import parse

    command, prefix = _cli()
    parsed = parse(script.final_response)
    async with stdio_client(StdioServerParameters(command=command, args=prefix + ["serve-tools", *args])) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            await session.call_tool("get_task", {})
            for step in script.steps:
                name, key = ("run_sql", "query") if step.kind == "sql" else ("run_python", "code")
                await session.call_tool(name, {key: step.code})
            return _text(await session.call_tool("submit", {"answer": parsed.answer_text, "reasoning": parsed.reasoning}))


def test_submit_keeps_a_separate_reasoning(synth_db: Path, synth_tasks: list[Task], tmp_path: Path):
    """submit(answer="NULL", reasoning=...) records both: the Noise episode verifies as the oracle's."""
    tasks = [t for t in pick_pairs(synth_tasks, 1) if t.condition == "noise"]
    oracle = Trajectory.model_validate_json(episodes(synth_db, tasks, agents=("oracle",))[0])
    tasks_file, out = tmp_path / "tasks.jsonl", tmp_path / "trajectories.jsonl"
    tasks_file.write_text(tasks[0].model_dump_json() + "\n", encoding="utf-8")
    said = asyncio.run(_submit_split(["--tasks", str(tasks_file), "--db", str(synth_db), "--out", str(out)], oracle))
    assert said.startswith("Submitted")
    (logged,) = read_jsonl(out, Trajectory)
    assert logged.final_response.startswith("<answer>") and "<reasoning>" in logged.final_response
    verdict = verify(logged, tasks[0], VerifyConfig(db_path=str(synth_db)))
    assert verdict.success, verdict.reasons


def test_connection_without_tool_calls_is_not_an_episode(synth_db: Path, synth_tasks: list[Task], tmp_path: Path):
    """``serve-tools < /dev/null`` logs nothing and leaves its task for the next connection."""
    import subprocess

    tasks = pick_pairs(synth_tasks, 1)
    tasks_file, out = tmp_path / "tasks.jsonl", tmp_path / "trajectories.jsonl"
    tasks_file.write_text("".join(t.model_dump_json() + "\n" for t in tasks), encoding="utf-8")
    command, prefix = _cli()
    args = [command, *prefix, "serve-tools", "--tasks", str(tasks_file), "--db", str(synth_db), "--out", str(out)]
    for _ in range(2):
        subprocess.run(args, stdin=subprocess.DEVNULL, capture_output=True, timeout=300)
    assert not out.exists() or out.read_text(encoding="utf-8").strip() == ""
    from verifier.adapters.mcp_server import pick_task

    assert pick_task(tasks_file, out).task_id == tasks[0].task_id


@pytest.mark.parametrize("answer, reasoning, expected", [
    ("NULL", "no potassium in scope [step 2]", "<answer>NULL</answer><reasoning>no potassium in scope [step 2]</reasoning>"),
    ("Answer: 4\nReasoning: counted", None, "Answer: 4\nReasoning: counted"),
    ("4", "  ", "4"),
    ("<answer>4</answer>", "counted", "<answer>4</answer>\n<reasoning>counted</reasoning>"),
])
def test_final_response_of_submit(answer: str, reasoning, expected: str) -> None:
    from verifier.adapters.mcp_server import final_response

    assert final_response(answer, reasoning) == expected
