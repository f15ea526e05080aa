"""The optional LLM rewriting pass, against a tiny OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from verifier.construction.rewrite import (
    RewriteConfig,
    anchors,
    faithful,
    rewrite_questions,
)
from verifier.contract import CountAnswer, Reference, Task, UnmetRequirement


def _pair() -> list[Task]:
    common = dict(pair_id="p1", scope="population", intent="billing", program="drg_admissions_count")
    clean = Task(task_id="p1-clean", question="How many admissions were billed APR DRG code 720 (SEPTICEMIA)?",
                 condition="clean", params={"drg_type": "APR", "drg_code": "720"},
                 reference=Reference(sql="SELECT 1", answer=CountAnswer(value=7)), **common)
    noise = Task(task_id="p1-noise", question="How many admissions were billed APR DRG code 133 (RESPIRATORY FAILURE)?",
                 condition="noise", noise_type="record", params={"drg_type": "APR", "drg_code": "133"},
                 reference=Reference(sql="SELECT 1", unmet_requirement=UnmetRequirement(level="record", statement="few")), **common)
    return [clean, noise]


def _server(transform):
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - http.server API
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            question = body["messages"][-1]["content"]
            content = json.dumps({"question": transform(question)})
            out = {"id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                   "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
                   "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
            data = json.dumps(out).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):  # silence
            pass

    srv = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


@pytest.mark.parametrize(
    "transform, changed",
    [
        (lambda q: "Please tell me: " + q.replace("How many", "how many"), True),   # faithful paraphrase
        (lambda q: q.replace("720", "721").replace("133", "134"), False),           # changes a code -> rejected
        (lambda q: "How many admissions had sepsis?", False),                        # drops anchors -> rejected
    ],
)
def test_rewrite_keeps_meaning(transform, changed):
    srv = _server(transform)
    try:
        tasks = _pair()
        before = [t.question for t in tasks]
        stats = rewrite_questions(tasks, RewriteConfig(base_url=f"http://127.0.0.1:{srv.server_port}/v1"))
    finally:
        srv.shutdown()
    after = [t.question for t in tasks]
    assert (after != before) is changed
    assert stats["rewritten" if changed else "kept_unfaithful"] == 1


def test_unreachable_endpoint_keeps_templates():
    tasks = _pair()
    before = [t.question for t in tasks]
    stats = rewrite_questions(tasks, RewriteConfig(base_url="http://127.0.0.1:9/v1", timeout_s=2))
    assert [t.question for t in tasks] == before and stats["kept_error"] == 1


def test_faithful_rules():
    t = _pair()[0]
    assert anchors(t) == ["APR", "720"]
    assert faithful(t.question, "Count admissions billed APR DRG 720.", anchors(t))
    assert not faithful(t.question, "Count admissions billed APR DRG 720 in 2150.", anchors(t))
