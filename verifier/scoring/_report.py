"""Reports over a scoring run: rich tables and a PNG figure, from ``summarize`` output.

Nothing here computes a metric; every number comes from
``verifier.metrics.summarize`` (ARCHITECTURE.md section 8: metrics are separate
from scoring, reports separate from metrics). Orderings are deterministic:
groups alphabetically, reason codes by decreasing count then name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from rich.console import Console
from rich.table import Table

from ._figure import plot_report

#: Width of the longest reason code: code columns are at least this wide and fold (never "…").
_CODE_WIDTH = 28


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _num(x: float | None, digits: int = 3) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def summary_table(summary: Mapping[str, Any], *, title: str = "Scoring summary") -> Table:
    """Headline metrics of one run: Clean and Noise rates, pass@k, pass^k, RS.

    Args:
        summary: ``verifier.metrics.summarize`` output.
        title: table title (e.g. the agent's name).

    Returns:
        A ``rich.table.Table`` with one row per metric.
    """
    t = Table(title=title, show_header=True, header_style="bold")
    t.add_column("metric")
    t.add_column("value", justify="right")
    c, n = summary["clean"], summary["noise"]
    t.add_row("items (verdicts / errors)", f"{summary['n_records']} ({summary['n_verdicts']} / {summary['n_errors']})")
    t.add_row("Clean success", f"{_pct(c['success_rate'])} of {c['n']}")
    t.add_row("Noise success", f"{_pct(n['success_rate'])} of {n['n']}")
    t.add_row("Noise NULL rate", _pct(n["null_rate"]))
    t.add_row("Noise abstention validity", _pct(n["abstention_validity"]))
    tasks_per_k = summary.get("pass_k_tasks", {})
    for k in summary.get("pass_at_k", {}):
        covered = f" ({tasks_per_k[k]} tasks with >= {k} samples)" if k in tasks_per_k else ""
        t.add_row(f"pass@{k} / pass^{k}", f"{_num(summary['pass_at_k'][k])} / {_num(summary['pass_hat_k'][k])}{covered}")
    if summary.get("duplicate_trajectory_ids"):
        t.add_row("[bold red]duplicated trajectory ids[/]",
                  f"{summary['duplicate_trajectory_ids']} (each copy counts as a sample: check the input)")
    for p, v in summary.get("rs", {}).items():
        t.add_row(f"RS({p}) EHRSQL / evidence", f"{_num(v)} / {_num(summary['rs_evidence'].get(p))}")
    return t


def breakdown_table(summary: Mapping[str, Any], *, title: str = "Success by group") -> Table:
    """Clean vs Noise success by noise type, scope, intent and track.

    Returns:
        A table with columns group, value, Clean success (n), Noise success (n),
        NULL rate; noise-type rows compare each Noise type with its Clean twins.
    """
    t = Table(title=title, header_style="bold")
    for col, just in (("by", "left"), ("group", "left"), ("Clean", "right"), ("Noise", "right"), ("NULL rate", "right")):
        t.add_column(col, justify=just)  # type: ignore[arg-type]
    for ntype, s in summary.get("by_noise_type", {}).items():
        twin = s.get("clean_twin", {})
        t.add_row("noise type", ntype, f"{_pct(twin.get('success_rate'))} ({twin.get('n', 0)})", f"{_pct(s['success_rate'])} ({s['n']})", _pct(s["null_rate"]))
    for key, label in (("by_scope", "scope"), ("by_intent", "intent"), ("by_track", "track")):
        for group, s in summary.get(key, {}).items():
            c, n = s["clean"], s["noise"]
            t.add_row(label, group, f"{_pct(c['success_rate'])} ({c['n']})", f"{_pct(n['success_rate'])} ({n['n']})", _pct(n["null_rate"]))
    return t


def reasons_table(summary: Mapping[str, Any], *, title: str = "Reason codes by condition") -> Table:
    """The error taxonomy: count and share of each reason code, per condition.

    ``SUCCESS`` counts successful verdicts; a verdict can carry several codes.
    Rows: every code seen, ordered by total count (descending) then name.
    """
    t = Table(title=title, header_style="bold")
    t.add_column("reason", min_width=_CODE_WIDTH, overflow="fold")
    t.add_column("Clean", justify="right")
    t.add_column("Noise", justify="right")
    reasons = summary.get("reasons", {})
    clean, noise = reasons.get("clean", {}), reasons.get("noise", {})
    nc, nn = summary["clean"]["n"], summary["noise"]["n"]
    codes = sorted(set(clean) | set(noise), key=lambda c: (-(clean.get(c, 0) + noise.get(c, 0)), c))
    for code in codes:
        cell_c = f"{clean.get(code, 0)} ({_pct(clean.get(code, 0) / nc if nc else None)})"
        cell_n = f"{noise.get(code, 0)} ({_pct(noise.get(code, 0) / nn if nn else None)})"
        t.add_row(code, cell_c, cell_n)
    if summary.get("errors_by_type"):
        for etype, count in summary["errors_by_type"].items():
            t.add_row(f"[red]input error: {etype}[/]", str(count), "")
    return t


def _print_nonempty(console: Console, table: Table) -> None:
    """Print ``table`` unless it has no rows (a table of headers only says nothing)."""
    if table.row_count:
        console.print(table)


def print_report(summary: Mapping[str, Any], console: Console | None = None, *, title: str = "") -> None:
    """Print the summary, breakdown and reason-code tables of one run (tables without rows are left out)."""
    console = console or Console()
    prefix = f"{title}: " if title else ""
    console.print(summary_table(summary, title=f"{prefix}summary"))
    _print_nonempty(console, breakdown_table(summary, title=f"{prefix}Clean vs Noise success by group"))
    _print_nonempty(console, reasons_table(summary, title=f"{prefix}reason codes by condition"))


def comparison_table(summaries: Mapping[str, Mapping[str, Any]], *, title: str = "Agents compared") -> Table:
    """One row per agent (in the mapping's order): the headline metrics side by side.

    Args:
        summaries: ``{agent name: summarize output}``.

    Returns:
        A table with Clean/Noise success, NULL rate, abstention validity,
        pass@1, RS(10) and the most frequent failure code per condition.
    """
    t = Table(title=title, header_style="bold")
    t.add_column("agent", no_wrap=True)
    for col in ("Clean", "Noise", "NULL rate", "abst. validity", "pass@1", "RS(10)"):  # headers wrap, figures do not
        t.add_column(col, justify="right", max_width=max(6, *(len(w) for w in col.split())))
    for col in ("top Clean failure", "top Noise failure"):  # codes are never cut: past the edge they fold
        t.add_column(col, overflow="fold", min_width=len("ABSTAINED_ON_CLEAN"))
    for name, s in summaries.items():
        tops = []
        for cond in ("clean", "noise"):
            codes = [c for c in s.get("reasons", {}).get(cond, {}) if c != "SUCCESS"]
            tops.append(codes[0] if codes else "-")
        t.add_row(
            name, _pct(s["clean"]["success_rate"]), _pct(s["noise"]["success_rate"]), _pct(s["noise"]["null_rate"]),
            _pct(s["noise"]["abstention_validity"]), _num(s.get("pass_at_k", {}).get("1")), _num(s.get("rs", {}).get("10")),
            tops[0], tops[1],
        )
    return t


def print_comparison(summaries: Mapping[str, Mapping[str, Any]], console: Console | None = None, *, details: bool = False) -> None:
    """Print the agents-compared table (for the demo), and with ``details`` each agent's reason table.

    Args:
        summaries: ``{agent name: summarize output}``, in display order.
        console: where to print (default a new ``Console``).
        details: also print every agent's reason-code table.
    """
    console = console or Console()
    _print_nonempty(console, comparison_table(summaries))
    if details:
        for name, s in summaries.items():
            _print_nonempty(console, reasons_table(s, title=f"{name}: reason codes by condition"))


def score_agents(
    tasks: Any,
    trajectories_by_agent: Mapping[str, Any],
    db: str | Path,
    *,
    workers: int = 1,
    console: Console | None = None,
    out_dir: str | Path | None = None,
    details: bool = True,
    progress: Any = None,
) -> dict[str, dict[str, Any]]:
    """Score several agents' trajectories and print the comparison (what the demo ends with).

    Args:
        tasks: ``{task_id: Task}``, an iterable of Tasks or a tasks JSONL path.
        trajectories_by_agent: ``{agent name: trajectories}`` where trajectories
            are a JSONL path or an iterable accepted by ``verify_batch``; the
            table keeps this order.
        db: the DuckDB file.
        workers: worker processes per scoring run.
        console: where to print (``None``: print nothing).
        out_dir: if given, writes ``<out_dir>/<agent>/verdicts.jsonl``,
            ``summary.json`` and ``report.png`` per agent, and
            ``<out_dir>/report.png`` comparing all agents.
        details: also print each agent's reason-code table.
        progress: a ``rich.progress.Progress`` to show one bar per agent on (None: no bars).

    Returns:
        ``{agent name: summarize output}``.
    """
    import json

    from ..metrics import summarize
    from ._batch import verify_batch
    from ._items import as_task_map
    from ._jsonl import iter_lines

    task_map = as_task_map(tasks)
    summaries: dict[str, dict[str, Any]] = {}
    for name, trajs in trajectories_by_agent.items():
        items = iter_lines(trajs) if isinstance(trajs, (str, Path)) else trajs
        if progress is not None:
            if isinstance(trajs, (str, Path)):
                with open(trajs, "rb") as fh:
                    total: int | None = sum(1 for _ in fh)
            else:
                items = list(items)
                total = len(items)
            bar = progress.add_task(f"score {name}", total=total)
        lines = []
        for line in verify_batch(items, task_map, db, workers=workers, backend="process" if workers > 1 else "serial", as_json=True):
            lines.append(line)
            if progress is not None:
                progress.advance(bar)
        summary = summarize((json.loads(line) for line in lines), task_map)
        summaries[name] = summary
        if out_dir is not None:
            folder = Path(out_dir) / name
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "verdicts.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
            (folder / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n", encoding="utf-8")
            plot_report(summary, folder / "report.png", title=name)
    if out_dir is not None and len(summaries) > 1:
        plot_report(summaries, Path(out_dir) / "report.png", title="agents compared")
    if console is not None:
        print_comparison(summaries, console, details=details)
    return summaries
