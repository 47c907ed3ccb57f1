"""The contest's pictures, drawn from a saved run (``safefs-bench --json``): cost against depth per
strategy, escapes per strategy (a bar chart on a log scale), and cost against file size. Each is
written as SVG and PNG. Needs the ``plot`` extra (matplotlib); without it, PlotUnavailable says
which extra to install.
"""

from __future__ import annotations

import os
from typing import Any

CHARTS = ("cost-vs-depth", "escapes", "cost-vs-size")
FORMATS = ("svg", "png")
INSTALL_HINT = "plots need matplotlib: install the plot extra (pip install './safefs_bench[plot]')"


class PlotUnavailable(Exception):
    """matplotlib is not installed."""


def available() -> bool:
    """Whether matplotlib can be imported here."""
    try:
        _pyplot()
    except PlotUnavailable:
        return False
    return True


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise PlotUnavailable(INSTALL_HINT) from None
    matplotlib.use("Agg")  # files only, never a window
    import matplotlib.pyplot as plt

    return plt


def escapes_by_strategy(run: dict[str, Any]) -> dict[str, int]:
    """Escapes per strategy, summed over every operation and swap kind of the attack phase."""
    out: dict[str, int] = {}
    for r in run.get("attack", {}).get("runs", []):
        out[r["strategy"]] = out.get(r["strategy"], 0) + int(r["escapes"])
    return out


def _series(run: dict[str, Any], key: str) -> dict[str, list[tuple[int, float]]]:
    out = {}
    for strategy, cost in run.get("cost", {}).items():
        points = sorted((int(x), float(us)) for x, us in cost.get(key, {}).items())
        if points:
            out[strategy] = points
    return out


def _stamp(run: dict[str, Any]) -> str:
    m = run.get("machine", {})
    text = f"{m.get('cpu_model', '')}, {m.get('system', '')} {m.get('kernel', '')}".strip(", ")
    merged = len(run.get("merged_from") or [])
    return f"{text}; {merged} runs, one per environment" if merged > 1 else text


def _save(plt: Any, fig: Any, directory: str, name: str) -> list[str]:
    written = []
    for fmt in FORMATS:
        path = os.path.join(directory, f"{name}.{fmt}")
        fig.savefig(path, format=fmt, dpi=110, bbox_inches="tight")
        written.append(path)
    plt.close(fig)
    return written


def _line_chart(
    plt: Any,
    series: dict[str, list[tuple[int, float]]],
    title: str,
    xlabel: str,
    ticks: dict[int, str],
    stamp: str,
) -> Any:
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    for strategy, points in series.items():
        xs, ys = zip(*points, strict=True)
        ax.plot(xs, ys, marker="o", label=strategy)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(list(ticks), [ticks[t] for t in ticks])
    ax.minorticks_off()
    ax.set_xlabel(xlabel)
    ax.set_ylabel("µs per read (median)")
    ax.set_title(title)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    fig.text(0.99, -0.04, stamp, ha="right", va="top", fontsize=7, color="grey")
    return fig


def _size_label(size: int) -> str:
    return f"{size // (1024 * 1024)} MiB" if size >= 1024 * 1024 else f"{size // 1024} KiB"


def draw(run: dict[str, Any], directory: str) -> list[str]:
    """Write every chart the run has data for into ``directory``; returns the files written."""
    plt = _pyplot()
    os.makedirs(directory, exist_ok=True)
    stamp = _stamp(run)
    written: list[str] = []
    depth = _series(run, "depth_us")
    if depth:
        ticks = {d: str(d) for d in sorted({x for pts in depth.values() for x, _ in pts})}
        fig = _line_chart(
            plt, depth, "Reading a 4 KiB file: cost against path depth", "path components", ticks, stamp
        )
        written += _save(plt, fig, directory, "cost-vs-depth")
    escapes = escapes_by_strategy(run)
    if escapes:
        names = list(escapes)
        fig, ax = plt.subplots(figsize=(max(7.5, 0.5 * len(names)), 4.5))
        bars = ax.bar(
            names,
            [escapes[n] for n in names],
            color=["tab:red" if escapes[n] else "tab:green" for n in names],
        )
        ax.bar_label(bars, [str(escapes[n]) for n in names], fontsize=8)
        ax.set_yscale("symlog", linthresh=1)  # a log scale on which 0 escapes still shows, as 0
        ax.set_ylim(0, max(10, max(escapes.values()) * 3))
        ax.set_ylabel("escapes (log scale)")
        seconds = run.get("attack_seconds_per_run")
        ax.set_title(
            f"Escapes under a swapping attacker ({seconds:g} s per operation and swap)"
            if seconds
            else "Escapes"
        )
        # Names end at their bar; the stamp goes under the lowest of them, however long they are
        # (a merged run's framework rows have the longest names).
        ax.tick_params(axis="x", labelsize=8)
        plt.setp(ax.get_xticklabels(), rotation=30, ha="right", rotation_mode="anchor")
        fig.canvas.draw()
        below = ax.get_tightbbox(fig.canvas.get_renderer()).transformed(fig.transFigure.inverted()).y0
        fig.text(0.01, below - 0.01, stamp, ha="left", va="top", fontsize=7, color="grey")
        written += _save(plt, fig, directory, "escapes")
    size = _series(run, "size_us")
    if size:
        ticks = {s: _size_label(s) for s in sorted({x for pts in size.values() for x, _ in pts})}
        fig = _line_chart(
            plt, size, "Reading a whole file at depth 1: cost against size", "file size", ticks, stamp
        )
        written += _save(plt, fig, directory, "cost-vs-size")
    return written
