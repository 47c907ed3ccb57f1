"""``safefs-bench --markdown``: a saved run's numbers as Markdown, stamped with the commit, kernel,
CPU and load average it was measured with.

Written into a file's generated part (between the BEGIN and END markers) when it has one, so the
prose around it stays; a file without the markers gets the generated part alone.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

from safefs_bench.plots import escapes_by_strategy

BEGIN = "<!-- BEGIN safefs-bench --markdown: generated from a saved run, do not edit by hand -->"
END = "<!-- END safefs-bench --markdown -->"
_SOURCE_DIR = Path(__file__).resolve().parent


def source_commit() -> str:
    """The commit of the safefs source this runs from ("" outside a git checkout)."""
    try:
        done = subprocess.run(
            ["git", "-C", str(_SOURCE_DIR), "rev-parse", "--short=12", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def size_label(size: int) -> str:
    return f"{size // (1024 * 1024)} MiB" if size >= 1024 * 1024 else f"{size // 1024} KiB"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    return [
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---" for _ in header) + "|",
        *("| " + " | ".join(r) + " |" for r in rows),
    ]


def _by_key(run: dict[str, Any], key: str) -> tuple[list[int], dict[str, dict[int, float]]]:
    values = {
        s: {int(x): float(us) for x, us in cost.get(key, {}).items()}
        for s, cost in run.get("cost", {}).items()
    }
    xs = sorted({x for v in values.values() for x in v})
    return xs, values


def _cells(xs: list[int], values: dict[int, float], floor: dict[int, float] | None) -> list[str]:
    out = []
    for x in xs:
        if x not in values:
            out.append("-")
            continue
        ratio = f" ({values[x] / floor[x]:.2f}x)" if floor and floor.get(x) else ""
        out.append(f"{values[x]:.1f}{ratio}")
    return out


def stamp_line(run: dict[str, Any]) -> str:
    m = run.get("machine", {})
    load = m.get("load_average") or []
    load_text = " / ".join(f"{x:.2f}" for x in load) if load else "unknown"
    commit = m.get("commit") or "unknown"
    return (
        f"Measured at commit `{commit}` on {m.get('system', '?')} {m.get('kernel', '?')} "
        f"{m.get('machine', '')}, {m.get('cpu_model') or 'unknown CPU'} ({m.get('cpu_count', '?')} CPUs), "
        f"{m.get('python', '')}, resolver `{m.get('default_resolver', '?')}`, temp files on "
        f"{m.get('tempdir_filesystem') or 'an unknown filesystem'}; load average (1, 5, 15 min) at "
        f"the start: {load_text}."
    )


def merged_line(run: dict[str, Any]) -> str | None:
    """Where a merged run's numbers come from (None for a single run)."""
    parts = run.get("merged_from") or []
    if len(parts) < 2:
        return None
    each = "; ".join(
        f"{', '.join(f'`{s}`' for s in p['strategies'])} from `{p['run']}` "
        f"({p.get('python') or 'unknown Python'})"
        for p in parts
        if p["strategies"]
    )
    commits = sorted({p.get("commit") or "unknown" for p in parts})
    commit_note = "" if len(commits) == 1 else f" They were measured at commits {', '.join(commits)}."
    return (
        f"The numbers come from {len(parts)} runs, one per environment (each agent framework is "
        f"installed only in an environment of its own): {each}. A ratio between rows of different "
        f"runs carries the drift between those runs too.{commit_note}"
    )


def markdown(run: dict[str, Any], image_dir: str | None) -> str:
    """The generated part, markers included. ``image_dir``: where the plots are, relative to
    the Markdown file (None: no images)."""
    lines = [
        BEGIN,
        "",
        stamp_line(run),
        "",
        *([merged, ""] if (merged := merged_line(run)) else []),
        "Regenerate: `make contest` (every framework, each in its own environment), or "
        "`safefs-bench --seconds 3 --json run.json`, then "
        "`safefs-bench --from run.json --plot docs/benchmarks --markdown docs/benchmarks.md`.",
        "Medians of interleaved repeats; (x) is the time relative to `unconfined`.",
        "",
    ]
    depths, by_depth = _by_key(run, "depth_us")
    floor_depth = by_depth.get("unconfined")
    if depths:
        lines += ["### Reading a 4 KiB file: µs against path depth", ""]
        lines += _table(
            ["strategy", *(f"depth {d}" for d in depths)],
            [[s, *_cells(depths, v, floor_depth)] for s, v in by_depth.items() if v],
        )
        if image_dir is not None:
            lines += ["", f"![cost against depth]({image_dir}/cost-vs-depth.png)"]
        lines.append("")
    sizes, by_size = _by_key(run, "size_us")
    floor_size = by_size.get("unconfined")
    if sizes:
        lines += ["### Reading a whole file at depth 1: µs against size", ""]
        lines += _table(
            ["strategy", *(size_label(x) for x in sizes)],
            [[s, *_cells(sizes, v, floor_size)] for s, v in by_size.items() if v],
        )
        if image_dir is not None:
            lines += ["", f"![cost against file size]({image_dir}/cost-vs-size.png)"]
        lines.append("")
    runs = run.get("attack", {}).get("runs", [])
    if runs:
        attempts: dict[str, int] = {}
        for r in runs:
            attempts[r["strategy"]] = attempts.get(r["strategy"], 0) + int(r["attempts"])
        escapes = escapes_by_strategy(run)
        seconds = run.get("attack_seconds_per_run", 0)
        lines += [
            f"### Escapes under a swapping attacker ({seconds:g} s per operation and swap kind)",
            "",
        ]
        lines += _table(
            ["strategy", "escapes / attempts"], [[s, f"{escapes[s]:,} / {attempts[s]:,}"] for s in escapes]
        )
        if image_dir is not None:
            lines += ["", f"![escapes per strategy]({image_dir}/escapes.png)"]
        lines.append("")
    elif run.get("attack", {}).get("note"):
        lines += [f"Attack phase: {run['attack']['note']}.", ""]
    skipped = [
        f"`{s}`: {info['note']}"
        for s, info in run.get("strategies", {}).items()
        if info.get("note") and info.get("selected", True) is not False
    ]
    if skipped:
        lines += ["Not run here: " + "; ".join(skipped) + ".", ""]
    refused = [
        f"`{s}` refused to {what} ({why})"
        for s, cost in run.get("cost", {}).items()
        for what, why in cost.get("refused", {}).items()
    ]
    if refused:
        lines += ["Not measured: " + "; ".join(refused) + ".", ""]
    lines.append(END)
    return "\n".join(lines) + "\n"


def write_markdown(run: dict[str, Any], path: str, *, plot_dir: str | None) -> None:
    """Replace the generated part of ``path`` (or write the file, if it has none)."""
    image_dir = None
    if plot_dir is not None:
        image_dir = os.path.relpath(plot_dir, os.path.dirname(os.path.abspath(path)) or ".")
    generated = markdown(run, image_dir)
    try:
        old = Path(path).read_text()
    except FileNotFoundError:
        old = ""
    start, end = old.find(BEGIN), old.find(END)
    if start >= 0 and end > start:
        text = old[:start] + generated.rstrip("\n") + old[end + len(END) :]
    else:
        text = generated
    Path(path).write_text(text)
