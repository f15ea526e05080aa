"""Report tables and figure from a summary: deterministic, complete, written as PNG."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from test_metrics import _task, _verdict

from verifier.metrics import summarize
from verifier.scoring import (
    comparison_table,
    plot_report,
    print_comparison,
    print_report,
)


def _summary(flip: bool = False):
    tasks = {
        "a-c": _task("a-c", "a", "clean"),
        "a-n": _task("a-n", "a", "noise", noise_type="record"),
        "b-c": _task("b-c", "b", "clean", scope="population"),
        "b-n": _task("b-n", "b", "noise", noise_type="query", scope="population"),
    }
    vs = []
    for i in range(4):
        vs.append(_verdict("a-c", i, success=(i % 2 == 0) != flip, reasons=[] if (i % 2 == 0) != flip else ["WRONG_VALUE"]))
        vs.append(_verdict("a-n", i, success=False, condition="noise", abstained=i < 2, reasons=["NO_EVIDENCE"] if i < 2 else ["ANSWERED_NOISE"]))
        vs.append(_verdict("b-c", i, success=True))
        vs.append(_verdict("b-n", i, success=i == 0, condition="noise", abstained=True, reasons=[] if i == 0 else ["EVIDENCE_NOT_SENSITIVE"]))
    return summarize(vs, tasks, ks=(1, 2, 4))


def _render(fn, *args, **kw) -> str:
    con = Console(record=True, width=160)
    fn(*args, console=con, **kw)
    return con.export_text()


def test_report_tables_are_deterministic_and_ordered():
    s = _summary()
    text = _render(print_report, s, title="agent")
    assert text == _render(print_report, s, title="agent")
    for needle in ("Clean success", "Noise NULL rate", "pass@4 / pass^4", "RS(10)", "noise type", "population"):
        assert needle in text
    lines = [l for l in text.splitlines() if any(c in l for c in ("SUCCESS", "NO_EVIDENCE", "ANSWERED_NOISE", "EVIDENCE_NOT_SENSITIVE", "WRONG_VALUE"))]
    order = [next(c for c in ("SUCCESS", "NO_EVIDENCE", "ANSWERED_NOISE", "EVIDENCE_NOT_SENSITIVE", "WRONG_VALUE") if c in l) for l in lines]
    # by total count: SUCCESS 7+1=... then ties broken by name
    assert order == ["SUCCESS", "EVIDENCE_NOT_SENSITIVE", "ANSWERED_NOISE", "NO_EVIDENCE", "WRONG_VALUE"]


def test_comparison_keeps_agent_order_and_names_top_failures():
    text = _render(print_comparison, {"zeta": _summary(), "alpha": _summary(flip=True)})
    assert text.index("zeta") < text.index("alpha")
    assert "EVIDENCE_NOT_SENSITIVE" in text and "WRONG_VALUE" in text
    assert comparison_table({"x": _summary()}).row_count == 1


def test_plot_report_writes_a_png(tmp_path: Path):
    out = plot_report(_summary(), tmp_path / "sub" / "report.png", title="t")
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


def test_plot_report_renders_when_a_condition_has_no_verdicts(tmp_path: Path):
    """Only Clean verdicts (every Noise item an error record): the figure still renders, panels marked (none)."""
    tasks = {"a-c": _task("a-c", "a", "clean"), "a-n": _task("a-n", "a", "noise", noise_type="record")}
    records = [_verdict("a-c", i, success=i == 0) for i in range(2)]
    records.append({"line": 3, "trajectory_id": "a-n#0", "task_id": "a-n", "error": {"type": "SourceDataError", "message": "x", "line": 3}})
    summary = summarize(records, tasks, ks=(1, 2))
    assert summary["noise"]["n"] == 0 and not summary.get("by_noise_type")
    data = plot_report(summary, tmp_path / "report.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    empty = summarize([], tasks, ks=(1,))
    assert plot_report(empty, tmp_path / "empty.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
