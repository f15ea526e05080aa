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
    t.add_column("reason")
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


def print_report(summary: Mapping[str, Any], console: Console | None = None, *, title: str = "") -> None:
    """Print the summary, breakdown and reason-code tables of one run."""
    console = console or Console()
    prefix = f"{title}: " if title else ""
    console.print(summary_table(summary, title=f"{prefix}summary"))
    console.print(breakdown_table(summary, title=f"{prefix}Clean vs Noise success by group"))
    console.print(reasons_table(summary, title=f"{prefix}reason codes by condition"))


def comparison_table(summaries: Mapping[str, Mapping[str, Any]], *, title: str = "Agents compared") -> Table:
    """One row per agent (in the mapping's order): the headline metrics side by side.

    Args:
        summaries: ``{agent name: summarize output}``.

    Returns:
        A table with Clean/Noise success, NULL rate, abstention validity,
        pass@1, RS(10) and the most frequent failure code per condition.
    """
    t = Table(title=title, header_style="bold")
    for col in ("agent", "Clean", "Noise", "NULL rate", "abst. validity", "pass@1", "RS(10)", "top Clean failure", "top Noise failure"):
        t.add_column(col, justify="left" if col in ("agent", "top Clean failure", "top Noise failure") else "right")
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
    console.print(comparison_table(summaries))
    if details:
        for name, s in summaries.items():
            console.print(reasons_table(s, title=f"{name}: reason codes by condition"))


def score_agents(
    tasks: Any,
    trajectories_by_agent: Mapping[str, Any],
    db: str | Path,
    *,
    workers: int = 1,
    console: Console | None = None,
    out_dir: str | Path | None = None,
    details: bool = True,
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
            ``summary.json`` and ``report.png`` per agent.
        details: also print each agent's reason-code table.

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
        lines = list(verify_batch(items, task_map, db, workers=workers, backend="process" if workers > 1 else "serial", as_json=True))
        summary = summarize((json.loads(line) for line in lines), task_map)
        summaries[name] = summary
        if out_dir is not None:
            folder = Path(out_dir) / name
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "verdicts.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
            (folder / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n", encoding="utf-8")
            plot_report(summary, folder / "report.png", title=name)
    if console is not None:
        print_comparison(summaries, console, details=details)
    return summaries


def plot_report(summary: Mapping[str, Any], out: str | Path, *, title: str = "") -> Path:
    """Write the report figure (PNG, matplotlib Agg backend).

    Panels: (1) success by noise type, Noise tasks vs their Clean twins;
    (2) Clean vs Noise success by scope; (3) pass@k and pass^k against k.
    A panel without data (no Noise verdicts, no scopes, no pass@k) is drawn
    empty (an "(none)" slot) rather than failing.

    Args:
        summary: ``summarize`` output.
        out: PNG path (parent folders created).
        title: figure title.

    Returns:
        The written path.
    """
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))

    def bars(ax: Any, groups: list[str], clean: list[float | None], noise: list[float | None], ttl: str) -> None:
        if not groups:  # e.g. no Noise verdicts at all: one empty "(none)" slot, so ticks and labels agree
            groups, clean, noise = ["(none)"], [None], [None]
        xs = range(len(groups))
        w = 0.38
        ax.bar([x - w / 2 for x in xs], [0 if v is None else 100 * v for v in clean], w, label="Clean", color="#4C72B0")
        ax.bar([x + w / 2 for x in xs], [0 if v is None else 100 * v for v in noise], w, label="Noise", color="#DD8452")
        ax.set_xticks(list(xs))
        ax.set_xticklabels(groups)
        ax.set_ylim(0, 120)
        ax.set_yticks(range(0, 101, 20))
        ax.set_ylabel("success (%)")
        ax.set_title(ttl)
        ax.legend(loc="upper center", ncol=2, fontsize=8)

    nt = summary.get("by_noise_type", {})
    groups = list(nt)
    bars(axes[0], groups, [nt[g]["clean_twin"]["success_rate"] for g in groups], [nt[g]["success_rate"] for g in groups],
         "by noise type (Noise vs Clean twin)")
    sc = summary.get("by_scope", {})
    groups = list(sc)
    bars(axes[1], groups, [sc[g]["clean"]["success_rate"] for g in groups], [sc[g]["noise"]["success_rate"] for g in groups],
         "by scope")
    ax = axes[2]
    ks = [int(k) for k in summary.get("pass_at_k", {})]
    if ks:
        ax.plot(ks, [summary["pass_at_k"][str(k)] for k in ks], "o-", label="pass@k")
        ax.plot(ks, [summary["pass_hat_k"][str(k)] for k in ks], "s--", label="pass^k")
        ax.set_xscale("log", base=2)
        ax.set_xticks(ks)
        ax.set_xticklabels([str(k) for k in ks])
        ax.legend(loc="lower left", fontsize=8)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("k (samples per task)")
    ax.set_title("pass@k and pass^k")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out
