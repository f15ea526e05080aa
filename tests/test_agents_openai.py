"""The ``openai`` agent against a scripted OpenAI-compatible server on 127.0.0.1.

The server plays tool calls (SQL, Python, two calls at once, an unknown tool)
and then a final answer built from the task; the test checks the episode,
the recorded trajectory and the requests the agent sent.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from verifier.agents import format_answer, make_agent, tagged_response
from verifier.agents.rollout import rollout, run_episode
from verifier.contract import Trajectory, read_jsonl
from verifier.env import EVIDENCE_CHECK_INSTRUCTION, EHREnv, EnvConfig


def _call(cid: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


class ScriptedServer:
    """Chat-completions endpoint replaying ``script`` (one assistant message per request)."""

    def __init__(self, script: list[dict[str, Any]]) -> None:
        self.script = script
        self.requests: list[dict[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server API
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
                i = len(outer.requests) - 1
                msg = outer.script[i % len(outer.script)]
                reply = {
                    "id": f"chatcmpl-{i}", "object": "chat.completion", "created": 0, "model": body["model"],
                    "choices": [{"index": 0, "message": {"role": "assistant", **msg},
                                 "finish_reason": "tool_calls" if msg.get("tool_calls") else "stop"}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
                }
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> "ScriptedServer":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def clean_task(demo_tasks: list):
    return next(t for t in demo_tasks if t.condition == "clean" and t.program.startswith("lab_first_value"))


def _script(task) -> list[dict[str, Any]]:
    return [
        {"content": None, "tool_calls": [_call("c1", "run_sql", {"query": task.reference.sql})]},
        {"content": None, "tool_calls": [
            _call("c2", "run_python", {"code": f"r = db.sql({task.reference.sql!r})\nprint(len(r.rows))"}),
            _call("c3", "run_sql", {"query": "SELECT 1"}),
        ]},
        {"content": None, "tool_calls": [_call("c4", "launch_rockets", {"x": 1})]},
        {"content": tagged_response(format_answer(task.reference.answer), "See [step 1]."), "tool_calls": None},
    ]


def test_openai_agent_completes_an_episode(demo_db: Path, clean_task, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_LLM_KEY", "sk-test-123")
    with ScriptedServer(_script(clean_task)) as server:
        agent = make_agent("openai", base_url=server.url, model="scripted-model", api_key_env="TEST_LLM_KEY")
        env = EHREnv(str(demo_db), EnvConfig(max_steps=10))
        try:
            traj, verdict = run_episode(env, agent, clean_task)
        finally:
            env.close()
    assert verdict.success, verdict.reasons
    assert [s.kind for s in traj.steps] == ["sql", "python"]
    assert traj.steps[0].code == clean_task.reference.sql and traj.steps[0].rows
    assert traj.steps[1].sql == [clean_task.reference.sql] and traj.steps[1].output.strip() == "1"
    assert traj.final_response.startswith("<answer>")
    assert traj.metadata["model"] == "scripted-model" and traj.metadata["usage"]["requests"] == 4
    assert len(server.requests) == 4
    first = server.requests[0]
    assert first["path"].endswith("/chat/completions") and first["auth"] == "Bearer sk-test-123"
    body = first["body"]
    assert body["model"] == "scripted-model"
    assert {t["function"]["name"] for t in body["tools"]} == {"run_sql", "run_python"}
    user = next(m for m in body["messages"] if m["role"] == "user")["content"]
    assert clean_task.question in user and EVIDENCE_CHECK_INSTRUCTION.strip() not in user
    # every tool call got exactly one tool result, in order, before the next request
    last = server.requests[-1]["body"]["messages"]
    tool_msgs = [m for m in last if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_msgs] == ["c1", "c3", "c2", "c4"]
    by_id = {m["tool_call_id"]: m["content"] for m in tool_msgs}
    assert by_id["c1"].startswith("[step 1]") and "(1 row)" in by_id["c1"]
    assert "one tool call is run at a time" in by_id["c3"]
    assert by_id["c4"].startswith("Error: invalid action")


def test_evidence_check_option_appends_the_instruction(demo_db: Path, demo_tasks: list, clean_task, tmp_path: Path) -> None:
    noise = next(t for t in demo_tasks if t.condition == "noise")
    script = [{"content": "<answer>NULL</answer><reasoning>nothing</reasoning>", "tool_calls": None}]
    with ScriptedServer(script) as server:
        out = tmp_path / "traj.jsonl"
        report = rollout("openai", [clean_task, noise], demo_db, out,
                         agent_options={"base_url": server.url, "model": "m", "evidence_check": True})
    assert report.episodes == 2 and report.success["clean"] == 0 and report.success["noise"] == 0
    trajs = list(read_jsonl(out, Trajectory))
    assert {t.task_id for t in trajs} == {clean_task.task_id, noise.task_id}
    assert all(t.metadata["evidence_check"] for t in trajs)
    user = next(m for m in server.requests[0]["body"]["messages"] if m["role"] == "user")["content"]
    assert EVIDENCE_CHECK_INSTRUCTION.strip() in user
    assert user.index(EVIDENCE_CHECK_INSTRUCTION.strip()) < user.index("## Database schema")


def test_unreachable_endpoint_is_recorded_not_fatal(demo_db: Path, clean_task) -> None:
    agent = make_agent("openai", base_url="http://127.0.0.1:9/v1", model="m", max_retries=0, timeout_s=2)
    env = EHREnv(str(demo_db))
    try:
        traj, verdict = run_episode(env, agent, clean_task)
    finally:
        env.close()
    assert not verdict.success and "agent_error" in traj.metadata and traj.final_response == ""


def test_an_unreachable_model_is_not_scored_and_a_rerun_retries(synth_db: Path, synth_tasks: list, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """An endpoint nobody listens on (a closed loopback port) is an outage, not a 0% model: its episodes are
    not written (a rerun retries them) and ``ehr-verifier rollout`` exits non-zero (fresh-user QA: the
    episodes were written empty, scored UNPARSEABLE_RESPONSE, and a rerun reported them 'already' done)."""
    import socket

    from typer.testing import CliRunner

    from verifier.cli import app
    from verifier.contract import write_jsonl

    with socket.socket() as s:  # a free port, closed again: connections are refused
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-123")
    tasks_file, out = tmp_path / "tasks.jsonl", tmp_path / "model.jsonl"
    write_jsonl(tasks_file, synth_tasks[:2])
    args = ["rollout", "--agent", "openai", "--base-url", f"http://127.0.0.1:{port}/v1", "--model", "m",
            "--tasks", str(tasks_file), "--db", str(synth_db), "--out", str(out)]
    for _ in range(2):  # the second run retries them: nothing was recorded as done
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 1, res.output
        assert "could not be reached in 2 episodes" in " ".join(res.output.split())
        assert not out.exists() or out.read_text() == ""
