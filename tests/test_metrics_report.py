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


# -- the report figure, read as matplotlib objects ------------------------------------------------
def _texts(ax) -> list[str]:
    return [t.get_text() for t in ax.texts]


def _panels(fig) -> dict[str, object]:
    return {ax.get_title(): ax for ax in fig.axes}


def test_report_figure_panels_labels_and_n():
    """Hand-computed from ``_summary``: Clean 6/8 = 75%, Noise 1/8 = 12%, NULL 6/8, validity 1/6, record type 0/4."""
    import matplotlib.pyplot as plt

    from verifier.scoring import report_figure

    fig = report_figure({"zeta": _summary(), "alpha": _summary(flip=True)}, title="compared")
    try:
        panels = _panels(fig)
        assert set(panels) == {
            "Clean vs Noise success by agent", "success by noise type and scope", "NULL rate vs abstention validity",
            "top reason codes: Clean (verdicts with the code / n)", "top reason codes: Noise (verdicts with the code / n)",
            "pass@k and pass^k",
        }
        agents = panels["Clean vs Noise success by agent"]
        assert [t.get_text() for t in agents.get_yticklabels()] == ["zeta", "alpha"]
        assert _texts(agents).count("75% (n=8)") == 2 and _texts(agents).count("12% (n=8)") == 2
        groups = panels["success by noise type and scope"]
        assert [t.get_text() for t in groups.get_xticklabels()] == [
            "Noise: query", "Noise: record", "Clean patient", "Noise patient", "Clean population", "Noise population"]
        assert "0%\nn=4" in _texts(groups)  # 0% is a labelled cell, not a missing bar
        abst = panels["NULL rate vs abstention validity"]
        assert "75% (n=8)" in _texts(abst) and "17% (n=6)" in _texts(abst)
        noise = panels["top reason codes: Noise (verdicts with the code / n)"]
        assert [t.get_text() for t in noise.get_yticklabels()] == ["EVIDENCE_NOT_SENSITIVE", "ANSWERED_NOISE", "NO_EVIDENCE"]
        assert "3/8" in _texts(noise)
        clean = panels["top reason codes: Clean (verdicts with the code / n)"]
        assert [t.get_text() for t in clean.get_yticklabels()] == ["WRONG_VALUE"]
        assert [list(line.get_xdata()) for line in panels["pass@k and pass^k"].get_lines()][:2] == [[1, 2, 4], [1, 2, 4]]
    finally:
        plt.close(fig)


def test_report_figure_without_repeated_samples_has_no_pass_k_panel():
    import matplotlib.pyplot as plt

    from verifier.scoring import report_figure

    tasks = {"a-c": _task("a-c", "a", "clean"), "a-n": _task("a-n", "a", "noise", noise_type="value")}
    one = summarize([_verdict("a-c", 0, success=True), _verdict("a-n", 0, success=False, condition="noise", reasons=["ANSWERED_NOISE"])],
                    tasks, ks=(1, 2))
    fig = report_figure(one, title="solo")  # one summary: the title names the agent
    try:
        panels = _panels(fig)
        assert len(fig.axes) == 5 and "pass@k and pass^k" not in panels
        agents = panels["Clean vs Noise success by agent"]
        assert [t.get_text() for t in agents.get_yticklabels()] == ["solo"]
        assert "100% (n=1)" in _texts(agents) and "0% (n=1)" in _texts(agents)
        assert "no failure codes on Clean verdicts" in _texts(panels["top reason codes: Clean"])
    finally:
        plt.close(fig)


def test_score_agents_writes_a_comparison_figure(synth_db, synth_tasks, tmp_path: Path):
    """The demo's last step on real episodes: per-agent folders and one figure comparing the agents."""
    from verifier.agents.rollout import rollout
    from verifier.scoring import score_agents

    tasks = synth_tasks[:12]
    paths = {}
    for agent in ("oracle", "always-null"):
        paths[agent] = tmp_path / f"{agent}.jsonl"
        rollout(agent, tasks, synth_db, paths[agent])
    con = Console(record=True, width=100)
    summaries = score_agents(tasks, paths, synth_db, out_dir=tmp_path / "scores", console=con)
    assert list(summaries) == ["oracle", "always-null"]
    assert summaries["oracle"]["clean"]["success_rate"] == 1.0 and summaries["always-null"]["clean"]["success_rate"] == 0.0
    for p in ("report.png", "oracle/report.png", "always-null/summary.json"):
        assert (tmp_path / "scores" / p).is_file(), p
    assert "ABSTAINED_ON_CLEAN" in con.export_text()  # never cut to "ABSTAINED_ON_CL…"
