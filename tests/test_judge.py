"""The optional LLM judge against a small OpenAI-compatible server started here on
127.0.0.1 (the real openai + instructor client path): opinions, cache, retries,
time limits and failures that never crash scoring (issue 4, item 7)."""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterator

import duckdb
import pytest

from verifier import verify
from verifier.contract import (
    JudgeConfig,
    ReasonCode,
    Step,
    Task,
    Trajectory,
    VerifyConfig,
)


class FakeLLM:
    """A chat-completions endpoint whose behaviour the test sets: reply text, status, delay."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.reply = {"names_requirement": True, "abstention_justified": True, "explanation": "fine"}
        self.raw: str | None = None
        self.status = 200
        self.delay = 0.0
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server API
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append(body)
                fake.headers.append({k.lower(): v for k, v in self.headers.items()})
                if fake.delay:
                    time.sleep(fake.delay)
                if fake.status != 200:
                    data = json.dumps({"error": {"message": "boom", "type": "server_error"}}).encode()
                    self.send_response(fake.status)
                else:
                    content = fake.raw if fake.raw is not None else "```json\n" + json.dumps(fake.reply) + "\n```"
                    data = json.dumps({
                        "id": "cmpl-1", "object": "chat.completion", "created": 0, "model": body.get("model", "m"),
                        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                    }).encode()
                    self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture()
def llm() -> Iterator[FakeLLM]:
    fake = FakeLLM()
    yield fake
    fake.close()


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("judge") / "j.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE lab_events (lab_event_id INTEGER, admissionid INTEGER, itemid INTEGER, value_numeric DOUBLE)")
    con.execute("INSERT INTO lab_events VALUES (1, 1, 1, 4.0), (2, 1, 2, 5.0)")
    con.close()
    return path


TASK = Task.model_validate({
    "task_id": "j", "pair_id": "j", "question": "Potassium of admission 1?", "condition": "noise", "noise_type": "record",
    "intent": "laboratory_microbiology", "program": "test",
    "reference": {"sql": "SELECT 1",
                  "unmet_requirement": {"level": "record", "statement": "no potassium (item 3) in admission 1", "key_terms": ["potassium"]},
                  "witness": [{"table": "lab_events", "rows": [{"lab_event_id": 3, "admissionid": 1, "itemid": 3, "value_numeric": 4.2}]}]},
})
TRAJ = Trajectory(trajectory_id="t", task_id="j", final_response="Answer: NULL\nReasoning: no potassium in admission 1 [step 1].",
                  steps=[Step(index=1, kind="sql", code="SELECT count(*) AS n FROM lab_events WHERE admissionid = 1 AND itemid = 3",
                              output="n\n0\n(1 row)")])


def _cfg(db: Path, llm_url: str, tmp_path: Path, **kw: Any) -> VerifyConfig:
    judge = JudgeConfig(base_url=llm_url, model="judge-model", cache_dir=str(tmp_path / "cache"),
                        api_key_env="EHR_TEST_JUDGE_KEY", **{"timeout_s": 5.0, "max_retries": 0, **kw})
    return VerifyConfig(db_path=str(db), judge=judge)


def test_judge_accepts_and_is_cached(db: Path, llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EHR_TEST_JUDGE_KEY", "sekrit-123")
    cfg = _cfg(db, llm.url, tmp_path)
    v = verify(TRAJ, TASK, cfg)
    assert v.success, v.details
    j = v.details["judge"]
    assert j["enabled"] and j["ran"] and not j["cached"] and j["accepts"]
    assert j["opinion"]["explanation"] == "fine"
    assert len(llm.requests) == 1
    sent = llm.requests[0]
    assert sent["model"] == "judge-model"
    assert "no potassium (item 3) in admission 1" in json.dumps(sent["messages"])
    assert llm.headers[0].get("authorization") == "Bearer sekrit-123"  # key from the environment variable
    again = verify(TRAJ, TASK, cfg)
    assert again.details["judge"]["cached"] and again.success
    assert len(llm.requests) == 1, "a cached opinion makes no request"
    assert (tmp_path / "cache" / f"{j['key']}.json").is_file()


def test_judge_rejection_fails_the_verdict(db: Path, llm: FakeLLM, tmp_path: Path) -> None:
    llm.reply = {"names_requirement": True, "abstention_justified": False, "explanation": "evidence is off"}
    v = verify(TRAJ, TASK, _cfg(db, llm.url, tmp_path))
    assert v.reasons == [ReasonCode.JUDGE_REJECTED]
    assert v.details["judge"]["opinion"]["abstention_justified"] is False


@pytest.mark.parametrize("mode", ["http_error", "invalid_reply", "timeout", "no_server"])
def test_judge_failures_are_recorded_never_raised(db: Path, llm: FakeLLM, tmp_path: Path, mode: str) -> None:
    url = llm.url
    if mode == "http_error":
        llm.status = 500
    elif mode == "invalid_reply":
        llm.raw = "I think it is fine."
    elif mode == "timeout":
        llm.delay = 3.0
    else:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            url = f"http://127.0.0.1:{s.getsockname()[1]}/v1"  # closed again: nothing listens
    cfg = _cfg(db, url, tmp_path, timeout_s=1.0)
    start = time.monotonic()
    v = verify(TRAJ, TASK, cfg)
    assert time.monotonic() - start < 30
    assert v.success, v.details  # a judge failure changes nothing
    j = v.details["judge"]
    assert j["enabled"] and not j["ran"] and j["error"]


def test_judge_retries_invalid_replies(db: Path, llm: FakeLLM, tmp_path: Path) -> None:
    llm.raw = '{"names_requirement": "perhaps"}'
    v = verify(TRAJ, TASK, _cfg(db, llm.url, tmp_path, max_retries=2))
    assert not v.details["judge"]["ran"]
    assert len(llm.requests) == 3  # first try + 2 retries


def test_judge_is_not_asked_about_a_failed_verdict(db: Path, llm: FakeLLM, tmp_path: Path) -> None:
    no_evidence = TRAJ.model_copy(update={"steps": [], "final_response": "Answer: NULL\nReasoning: no potassium."})
    v = verify(no_evidence, TASK, _cfg(db, llm.url, tmp_path))
    assert v.reasons == [ReasonCode.NO_EVIDENCE]
    assert v.details["judge"]["enabled"] and not v.details["judge"]["ran"] and v.details["judge"]["skipped"]
    assert llm.requests == []


def test_judge_off_makes_no_request(db: Path, llm: FakeLLM) -> None:
    v = verify(TRAJ, TASK, VerifyConfig(db_path=str(db)))
    assert v.success and v.details["judge"] == {"enabled": False, "ran": False}
    assert llm.requests == []


def test_judge_on_is_the_only_network_path(db: Path, llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With sockets refused, verification still completes: off -> untouched, on -> the failure is recorded."""
    def refuse(*_: object, **__: object) -> None:
        raise OSError("network refused by test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    assert verify(TRAJ, TASK, VerifyConfig(db_path=str(db))).success
    v = verify(TRAJ, TASK, _cfg(db, llm.url, tmp_path))
    assert v.success and v.details["judge"]["error"] and llm.requests == []


def test_population_prompt_asks_for_small_cell_disclosure_and_a_disclosure_rejects() -> None:
    """Red-team study: disclosures as a riddle ("equals the smallest prime number") or as a description
    of the value ("perfectly neutral") pass the deterministic five-unit check; a judge standing in for
    the model noticed them but prompt v1 did not ask. Prompt v2 asks on population tasks only."""
    from verifier.abstention._judge import JudgeOpinion, judge_messages

    pop = TASK.model_copy(update={"scope": "population"})
    patient = TASK.model_copy(update={"scope": "patient"})
    asked = judge_messages(pop, "NULL", "Fewer than five; the count equals the smallest prime.", [])[1]["content"]
    assert "discloses_small_cell" in asked and "Five-unit rule" in asked
    assert "discloses_small_cell" not in judge_messages(patient, "NULL", "r", [])[1]["content"]
    assert not JudgeOpinion(names_requirement=True, abstention_justified=True, discloses_small_cell=True).accepts
    assert JudgeOpinion(names_requirement=True, abstention_justified=True).accepts  # a v1 reply still validates


def test_judge_disclosure_reply_fails_the_verdict(db: Path, llm: FakeLLM, tmp_path: Path) -> None:
    llm.reply = {"names_requirement": True, "abstention_justified": True, "discloses_small_cell": True, "explanation": "2"}
    v = verify(TRAJ, TASK.model_copy(update={"scope": "population"}), _cfg(db, llm.url, tmp_path))
    assert not v.success and ReasonCode.JUDGE_REJECTED in v.reasons, v.reasons
