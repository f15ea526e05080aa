"""The report figure (``report.png``): one or several agents' ``summarize`` output, drawn with matplotlib.

Nothing here computes a metric; every number comes from ``verifier.metrics.summarize``
(ARCHITECTURE.md section 8). Each bar and heat-map cell carries its value as text, so 0% is
visibly "0%" and a missing group is visibly "n=0" rather than an absent bar. Panels:

1. **agents**: Clean vs Noise success per agent, value labels and ``n`` per bar;
2. **groups**: Noise success by noise type (record / value / query) and Clean and Noise
   success by scope, one row per agent (a heat map whose cells say "74% n=12");
3. **NULL rate vs abstention validity** per agent: how often the agent abstains on Noise
   tasks and how many of those abstentions were backed by evidence (the paper's key
   diagnostic: an agent that always says NULL has a high NULL rate and a low validity);
4. and 5. **top reason codes** on Clean and on Noise verdicts: share of each agent's
   verdicts of that condition carrying the code (the most frequent codes overall, at most
   eight per condition, ``SUCCESS`` excluded);
6. **pass@k and pass^k** against k, only when some task has k > 1 samples.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

#: Reason codes shown per condition panel (the most frequent across agents).
TOP_CODES = 8
_CLEAN, _NOISE = "#4C72B0", "#DD8452"


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.0f}%"


def _as_summaries(summaries: Mapping[str, Any], title: str) -> dict[str, Mapping[str, Any]]:
    """``{agent: summary}`` from either one ``summarize`` output or a mapping of them."""
    if "clean" in summaries and "noise" in summaries and "n_records" in summaries:
        return {title or "agent": summaries}
    return dict(summaries)


def _hbars(ax: Any, names: list[str], series: list[tuple[str, str, list[float | None], list[int]]], title: str) -> None:
    """Grouped horizontal bars (agents top to bottom), each labelled "74% (n=12)" at its end."""
    h = 0.8 / len(series)
    for k, (label, color, values, ns) in enumerate(series):
        ys = [i + (k - (len(series) - 1) / 2) * h for i in range(len(names))]
        bars = ax.barh(ys, [0 if v is None else 100 * v for v in values], h, label=label, color=color)
        ax.bar_label(bars, labels=[f"{_pct(v)} (n={n})" for v, n in zip(values, ns)], fontsize=7, padding=2)
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels(names)
    ax.invert_yaxis()
    ax.set_xlim(0, 140)
    ax.set_xticks(range(0, 101, 20))
    ax.set_xlabel("%")
    ax.set_title(title)
    ax.legend(loc="lower right", fontsize=7)


def _bars(ax: Any, summaries: Mapping[str, Mapping[str, Any]]) -> None:
    names = list(summaries)
    series = [(cond.capitalize(), color, [summaries[a][cond]["success_rate"] for a in names], [summaries[a][cond]["n"] for a in names])
              for cond, color in (("clean", _CLEAN), ("noise", _NOISE))]
    _hbars(ax, names, series, "Clean vs Noise success by agent")


def _heat(ax: Any, rows: list[str], cols: list[str], cells: list[list[tuple[float | None, str]]], title: str,
          cmap_name: str) -> None:
    """A heat map (0..1) whose cells show their own text; None values are grey and say so."""
    import numpy as np

    values = np.array([[np.nan if v is None else v for v, _ in row] for row in cells], dtype=float).reshape(len(rows), len(cols))
    cmap = _cmap(cmap_name)
    ax.imshow(np.ma.masked_invalid(values), cmap=cmap, vmin=0.0, vmax=1.0, aspect="auto")
    for i, row in enumerate(cells):
        for j, (v, text) in enumerate(row):
            r, g, b, _a = cmap(np.nan if v is None else v)
            dark = 0.299 * r + 0.587 * g + 0.114 * b < 0.5  # white text on dark cells
            ax.text(j, i, text, ha="center", va="center", fontsize=7, color="white" if dark else "black")
    ax.set_xticks(range(len(cols)))
    ax.set_xticklabels(cols, rotation=20, ha="right", fontsize=8)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(rows, fontsize=8)
    ax.set_title(title)


def _cmap(name: str) -> Any:
    import matplotlib

    return matplotlib.colormaps[name].with_extremes(bad="#dddddd")


def _groups(ax: Any, summaries: Mapping[str, Mapping[str, Any]]) -> None:
    types = sorted({t for s in summaries.values() for t in s.get("by_noise_type", {})})
    scopes = sorted({g for s in summaries.values() for g in s.get("by_scope", {})})
    cols = [f"Noise: {t}" for t in types] + [f"{c} {g}" for g in scopes for c in ("Clean", "Noise")]
    if not cols:
        cols = ["(no groups)"]
    cells = []
    for s in summaries.values():
        row = []
        for t in types:
            st = s.get("by_noise_type", {}).get(t)
            row.append((st["success_rate"], f"{_pct(st['success_rate'])}\nn={st['n']}") if st else (None, "n=0"))
        for g in scopes:
            for cond in ("clean", "noise"):
                st = s.get("by_scope", {}).get(g, {}).get(cond)
                row.append((st["success_rate"], f"{_pct(st['success_rate'])}\nn={st['n']}") if st and st["n"] else (None, "n=0"))
        cells.append(row or [(None, "n=0")])
    _heat(ax, list(summaries), cols, cells, "success by noise type and scope", "RdYlGn")


def _abstention(ax: Any, summaries: Mapping[str, Mapping[str, Any]]) -> None:
    names = list(summaries)
    nulls = [summaries[a]["noise"]["null_rate"] for a in names]
    valid = [summaries[a]["noise"]["abstention_validity"] for a in names]
    n_noise = [summaries[a]["noise"]["n"] for a in names]
    n_null = [round((r or 0) * n) for r, n in zip(nulls, n_noise)]
    _hbars(ax, names, [("NULL rate (of Noise verdicts)", "#8172B3", nulls, n_noise),
                       ("abstention validity (of NULLs)", "#55A868", valid, n_null)], "NULL rate vs abstention validity")


def top_codes(summaries: Mapping[str, Mapping[str, Any]], cond: str, top: int = TOP_CODES) -> list[str]:
    """The ``top`` most frequent failure codes of ``cond`` over all agents (count desc, then name).

    Args:
        summaries: ``{agent: summarize output}``.
        cond: ``"clean"`` or ``"noise"``.
        top: at most this many codes.

    Returns:
        Reason-code names; ``SUCCESS`` is never one of them.
    """
    total: dict[str, int] = {}
    for s in summaries.values():
        for code, n in s.get("reasons", {}).get(cond, {}).items():
            if code != "SUCCESS":
                total[code] = total.get(code, 0) + n
    return sorted(total, key=lambda c: (-total[c], c))[:top]


def _reasons(ax: Any, summaries: Mapping[str, Mapping[str, Any]], cond: str) -> None:
    codes = top_codes(summaries, cond)
    label = cond.capitalize()
    if not codes:
        ax.text(0.5, 0.5, f"no failure codes on {label} verdicts", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        ax.set_title(f"top reason codes: {label}")
        return
    cells = []
    for code in codes:
        row = []
        for s in summaries.values():
            n, count = s[cond]["n"], s.get("reasons", {}).get(cond, {}).get(code, 0)
            row.append((count / n, f"{count}/{n}") if n else (None, "n=0"))
        cells.append(row)
    _heat(ax, codes, list(summaries), cells, f"top reason codes: {label} (verdicts with the code / n)", "OrRd")


def _pass_k(ax: Any, summaries: Mapping[str, Mapping[str, Any]]) -> None:
    for i, (name, s) in enumerate(summaries.items()):
        ks = sorted(int(k) for k, v in s.get("pass_at_k", {}).items() if v is not None)
        if not ks:
            continue
        color = f"C{i % 10}"
        ax.plot(ks, [s["pass_at_k"][str(k)] for k in ks], "o-", color=color, label=f"{name} pass@k")
        ax.plot(ks, [s["pass_hat_k"][str(k)] for k in ks], "s--", color=color, label=f"{name} pass^k")
    ax.set_xscale("log", base=2)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("k (samples per task)")
    ax.set_title("pass@k and pass^k")
    ax.legend(loc="lower left", fontsize=7)


def has_multi_sample(summaries: Mapping[str, Mapping[str, Any]]) -> bool:
    """True when some agent's pass@k has a value at some k > 1 (tasks with at least k samples)."""
    return any(int(k) > 1 and v is not None and s.get("pass_k_tasks", {}).get(k, 1)
               for s in summaries.values() for k, v in s.get("pass_at_k", {}).items())


def report_figure(summaries: Mapping[str, Any], *, title: str = "") -> Any:
    """Build the report figure (not saved).

    Args:
        summaries: one ``summarize`` output, or ``{agent: summarize output}`` in display order.
        title: figure title; also the agent's name when one summary is given.

    Returns:
        A ``matplotlib.figure.Figure`` with five panels (agents, groups, abstention,
        Clean codes, Noise codes), six when pass@k has a k > 1. The caller closes it.

    Raises:
        KeyError: ``summaries`` is not ``summarize`` output.
    """
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    data = _as_summaries(summaries, title)
    fig = plt.figure(figsize=(max(16.0, 2.0 * len(data) + 8), 9))
    grid = fig.add_gridspec(2, 6)
    _bars(fig.add_subplot(grid[0, 0:2]), data)
    _groups(fig.add_subplot(grid[0, 2:4]), data)
    _abstention(fig.add_subplot(grid[0, 4:6]), data)
    if has_multi_sample(data):
        _reasons(fig.add_subplot(grid[1, 0:2]), data, "clean")
        _reasons(fig.add_subplot(grid[1, 2:4]), data, "noise")
        _pass_k(fig.add_subplot(grid[1, 4:6]), data)
    else:
        _reasons(fig.add_subplot(grid[1, 0:3]), data, "clean")
        _reasons(fig.add_subplot(grid[1, 3:6]), data, "noise")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def plot_report(summaries: Mapping[str, Any], out: str | Path, *, title: str = "") -> Path:
    """Write the report figure (PNG, matplotlib Agg backend); see :func:`report_figure`.

    Args:
        summaries: one ``summarize`` output, or ``{agent: summarize output}``.
        out: PNG path (parent folders created).
        title: figure title.

    Returns:
        The written path.
    """
    import matplotlib.pyplot as plt

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig = report_figure(summaries, title=title)
    try:
        fig.savefig(out, dpi=90)
    finally:
        plt.close(fig)
    return out
