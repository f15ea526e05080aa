"""The optional LLM rewording of question templates (issue 33 point 4), against a tiny
OpenAI-compatible server on 127.0.0.1: templates, not rendered questions, so both twins of a pair
render one reworded template (one condition apart) and construction re-verifies every pair built
from it; rewrites are cached."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from verifier.construction import load_programs, make_tasks
from verifier.construction.rewrite import RewriteConfig, faithful, rewrite_programs


def _server(transform, calls: list[str] | None = None):
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - http.server API
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            question = body["messages"][-1]["content"]
            if calls is not None:
                calls.append(question)
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


def _spec(name: str):
    return next(p for p in load_programs() if p.name == name)


def test_faithful_rules():
    t = "When was {medication} first administered to patient {patientid} during hospital admission {admissionid}?"
    assert faithful(t, "Patient {patientid}, admission {admissionid}: when did they first get {medication}?")
    assert not faithful(t, "When was {medication} first given to patient {patientid}?")                 # drops a placeholder
    assert not faithful(t, "When was {medication} given to {patientid} in {admissionid} or {admissionid}?")  # twice
    assert not faithful(t, "Within 24 hours, when was {medication} given to {patientid} in {admissionid}?")  # a new number
    assert not faithful(t, "   ")


@pytest.mark.parametrize(("transform", "rewritten"), [
    (lambda q: "Clinician asks: " + q, True),                         # a faithful rewording
    (lambda q: q.replace("{patientid}", "the patient"), False),       # loses an anchor -> template kept
])
def test_pairs_from_rewritten_templates_are_built_and_verified(synth_db, tmp_path, transform, rewritten):
    srv = _server(transform)
    try:
        cfg = RewriteConfig(base_url=f"http://127.0.0.1:{srv.server_port}/v1", cache_path=str(tmp_path / "c.json"))
        spec = _spec("med_first_administration_time")
        tasks, report = make_tasks(synth_db, seed=0, programs=[spec], rewrite=cfg)
        plain, _ = make_tasks(synth_db, seed=0, programs=[spec])
    finally:
        srv.shutdown()
    assert tasks and len(tasks) == len(plain)
    assert report.rewrites["rewritten" if rewritten else "kept_unfaithful"] == len(spec.questions)
    by_id = {t.task_id: t for t in plain}
    for t in tasks:
        assert t.reference == by_id[t.task_id].reference            # the same verified reference
        assert t.question.startswith("Clinician asks: ") is rewritten
    # twins render one template: their questions differ only where their params do
    for clean in (t for t in tasks if t.condition == "clean"):
        noise = next(t for t in tasks if t.pair_id == clean.pair_id and t.condition == "noise")
        q = clean.question
        for k, v in clean.params.items():
            if noise.params.get(k) != v:
                q = q.replace(str(v), str(noise.params[k]))
        assert q == noise.question


def test_rewrites_are_cached_and_errors_are_not(tmp_path):
    calls: list[str] = []
    srv = _server(lambda q: "Asked: " + q, calls)
    spec = _spec("med_first_administration_time")
    try:
        cfg = RewriteConfig(base_url=f"http://127.0.0.1:{srv.server_port}/v1", cache_path=str(tmp_path / "c.json"))
        first, s1 = rewrite_programs([spec], cfg)
        second, s2 = rewrite_programs([spec], cfg)
    finally:
        srv.shutdown()
    assert len(calls) == len(spec.questions) and s1["rewritten"] == len(spec.questions) and s2["cached"] == len(spec.questions)
    assert first[0].questions == second[0].questions and all(q.startswith("Asked: ") for q in first[0].questions)
    assert spec.questions[0].startswith("Asked: ") is False  # the loaded program is not changed
    dead = RewriteConfig(base_url="http://127.0.0.1:9/v1", timeout_s=2, cache_path=str(tmp_path / "d.json"))
    kept, s3 = rewrite_programs([spec], dead)
    assert kept[0].questions == spec.questions and s3["kept_error"] == len(spec.questions)
    assert json.loads((tmp_path / "d.json").read_text()) == {}
