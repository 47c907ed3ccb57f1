"""``safefs-bench``: the containment contest. What each way of confining a path costs, and whether
it holds while an attacker in another process swaps directories and files for symlinks.

Two phases. Cost: microseconds per read of a small file at depths 1, 4 and 16 (and the ratio to
``unconfined``), and per 4 KiB write, as the median of interleaved repeats (a quick reading; the
pytest-benchmark suite in this package is the careful one). Attack: for each strategy, operation
and swap kind, ``race_strategy`` for ``--seconds``, counting escapes among attempts.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import shutil
import statistics
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

from safefs import capabilities
from safefs_bench import merge, plots, report
from safefs_bench.machine import machine_facts
from safefs_bench.race import OPS, SWAPS, RaceCounts, race_strategy
from safefs_bench.scaling import DEPTHS as SCALING_DEPTHS
from safefs_bench.scaling import SIZES, build_scaling_tree, content, depth_file, size_file
from safefs_bench.strategies import (
    CONTEST_STRATEGIES,
    DESCRIPTIONS,
    PATHRS,
    SAFEFS_STRATEGIES,
    UNCONFINED,
    Strategy,
    availability,
    open_strategy,
)
from safefs_bench.trees import DEPTH_1, DEPTHS, FILE_CONTENT, WRITE_DATA, build_tree

ATOMIC_WRITERS = (*SAFEFS_STRATEGIES, PATHRS)
# The note of a strategy --only left out: it is not a reason it cannot run here.
NOT_SELECTED = merge.NOT_SELECTED
REPEATS = 11
SAMPLE_SECONDS = 0.02


@dataclass
class Cost:
    read_us: dict[str, float] = field(default_factory=dict)  # shape name -> µs
    read_ratio: dict[str, float] = field(default_factory=dict)  # shape name -> times unconfined's
    write_us: float = 0.0
    write_kind: str = "plain"
    depth_us: dict[int, float] = field(default_factory=dict)  # 4 KiB read, path depth -> µs
    size_us: dict[int, float] = field(default_factory=dict)  # depth-1 read, file size -> µs
    refused: dict[str, str] = field(default_factory=dict)  # a read it would not do -> its error


@dataclass
class Results:
    machine: dict[str, Any]
    seconds: float
    notes: dict[str, str | None]  # strategy -> why it cannot run (None: it runs)
    cost: dict[str, Cost] = field(default_factory=dict)
    attack_ran: bool = False
    attack_note: str | None = None
    races: list[RaceCounts] = field(default_factory=list)

    @property
    def available(self) -> list[str]:
        return [s for s in CONTEST_STRATEGIES if self.notes.get(s) is None]

    def race(self, strategy: str, op: str, swap: str) -> RaceCounts | None:
        for r in self.races:
            if (r.strategy, r.op, r.swap) == (strategy, op, swap):
                return r
        return None

    def escaped_safefs(self) -> list[RaceCounts]:
        return [r for r in self.races if r.strategy in SAFEFS_STRATEGIES and r.escapes]

    def as_json(self) -> dict[str, Any]:
        return {
            "machine": self.machine,
            "attack_seconds_per_run": self.seconds,
            "strategies": {
                s: {
                    "available": self.notes.get(s) is None,
                    "note": self.notes.get(s),
                    "selected": self.notes.get(s) != NOT_SELECTED,
                    "description": DESCRIPTIONS[s],
                }
                for s in CONTEST_STRATEGIES
            },
            "cost": {
                s: {
                    "read_us": c.read_us,
                    "read_ratio_to_unconfined": c.read_ratio,
                    "write_4KiB_us": c.write_us,
                    "write_kind": c.write_kind,
                    "depth_us": {str(d): us for d, us in c.depth_us.items()},
                    "size_us": {str(size): us for size, us in c.size_us.items()},
                    "refused": c.refused,
                }
                for s, c in self.cost.items()
            },
            "attack": {
                "ran": self.attack_ran,
                "note": self.attack_note,
                "runs": [r.as_dict() for r in self.races],
            },
            "safefs_escaped": bool(self.escaped_safefs()),
        }


class Progress:
    """One line per step on stderr; on a terminal the line is rewritten as the step finishes."""

    def __init__(self, stream: TextIO, total: int) -> None:
        self.stream = stream
        self.total = total
        self.done = 0
        self.tty = stream.isatty()

    def start(self, what: str) -> None:
        self._what = what
        if self.tty:
            self.stream.write(f"\r\x1b[K[{self.done + 1:>2}/{self.total}] {what} ...")
            self.stream.flush()

    def finish(self, result: str) -> None:
        self.done += 1
        prefix = "\r\x1b[K" if self.tty else ""
        self.stream.write(f"{prefix}[{self.done:>2}/{self.total}] {self._what}: {result}\n")
        self.stream.flush()

    def say(self, message: str) -> None:
        self.stream.write(message + "\n")
        self.stream.flush()


# -- cost ------------------------------------------------------------------------------------------


Timer = Callable[[int], float]  # n -> seconds that n calls took


def _loops_for(timer: Timer) -> int:
    """How many calls fill about SAMPLE_SECONDS."""
    n = 1
    while True:
        elapsed = timer(n)
        if elapsed >= SAMPLE_SECONDS / 4:
            return max(1, int(n * SAMPLE_SECONDS / elapsed))
        n *= 2


def median_us_side_by_side(timers: dict[str, Timer]) -> dict[str, float]:
    """Median µs per call of each timer, their repeats interleaved so drift hits all alike."""
    for timer in timers.values():  # warm caches (and the CPU clock) before anything counts
        _loops_for(timer)
    loops = {name: _loops_for(timer) for name, timer in timers.items()}
    samples: dict[str, list[float]] = {name: [] for name in timers}
    for _ in range(REPEATS):
        for name, timer in timers.items():
            n = loops[name]
            samples[name].append(timer(n) / n)
    return {name: statistics.median(s) * 1e6 for name, s in samples.items()}


def _reader(s: Strategy, rel: str) -> Timer:
    return lambda n: s.timed("read", n, rel)


def _writer(s: Strategy, rel: str) -> Timer:
    return lambda n: s.timed("write", n, rel, WRITE_DATA)


def _write_name(strategy: str) -> str:
    return f"{DEPTH_1.write_target}-{strategy}"


def cost_phase(results: Results, progress: Progress) -> None:
    base = tempfile.mkdtemp(prefix="safefs-bench-")
    opened: dict[str, Strategy] = {}
    try:
        root = os.path.join(base, "ws")
        os.mkdir(root)
        build_tree(root)
        for name in results.available:
            opened[name] = open_strategy(name, root)
        for s in opened.values():  # every contestant must read right before its time counts
            for shape in DEPTHS:
                if s.read(shape.file) != FILE_CONTENT:
                    raise RuntimeError(f"{s.name} read the wrong content at {shape.name}")
        for name in opened:
            results.cost[name] = Cost(write_kind="atomic" if name in ATOMIC_WRITERS else "plain")
        for shape in DEPTHS:
            progress.start(f"cost: read, {shape.name}")
            us = median_us_side_by_side({n: _reader(s, shape.file) for n, s in opened.items()})
            floor = us.get(UNCONFINED)
            for name, value in us.items():
                results.cost[name].read_us[shape.name] = value
                if floor:
                    results.cost[name].read_ratio[shape.name] = value / floor
            progress.finish(", ".join(f"{n} {v:.1f} µs" for n, v in us.items()))
        progress.start("cost: write 4 KiB, depth-1")
        # Each strategy replaces a file of its own: interleaved writes to one shared file would
        # make each pay for the previous one's writeback.
        for name in opened:
            with open(os.path.join(root, _write_name(name)), "wb") as f:
                f.write(WRITE_DATA)
        us = median_us_side_by_side({n: _writer(s, _write_name(n)) for n, s in opened.items()})
        for name, value in us.items():
            results.cost[name].write_us = value
        progress.finish(", ".join(f"{n} {v:.1f} µs" for n, v in us.items()))
    finally:
        for s in opened.values():
            s.close()
        shutil.rmtree(base, ignore_errors=True)
    scaling_phase(results, progress)


def scaling_phase(results: Results, progress: Progress) -> None:
    """How a read's cost grows with the path's depth (1 to 64) and the file's size (4 KiB to
    64 MiB), each strategy on the same scaling tree, interleaved as in the cost phase."""
    base = tempfile.mkdtemp(prefix="safefs-bench-scaling-")
    opened: dict[str, Strategy] = {}
    try:
        root = os.path.join(base, "ws")
        os.mkdir(root)
        build_scaling_tree(root)
        for name in results.available:
            opened[name] = open_strategy(name, root)
        for depth in SCALING_DEPTHS:
            progress.start(f"scaling: read 4 KiB, depth {depth}")
            rel = depth_file(depth)
            readers = readers_of(opened, rel, len(content(4096)), results)
            us = median_us_side_by_side({n: _reader(s, rel) for n, s in readers.items()})
            for name, value in us.items():
                results.cost[name].depth_us[depth] = value
            progress.finish(", ".join(f"{n} {v:.1f} µs" for n, v in us.items()))
        for size in SIZES:
            progress.start(f"scaling: read {report.size_label(size)}, depth 1")
            rel = size_file(size)
            readers = readers_of(opened, rel, size, results)
            us = median_us_side_by_side({n: _reader(s, rel) for n, s in readers.items()})
            for name, value in us.items():
                results.cost[name].size_us[size] = value
            progress.finish(", ".join(f"{n} {v:.1f} µs" for n, v in us.items()))
    finally:
        for s in opened.values():
            s.close()
        shutil.rmtree(base, ignore_errors=True)


def readers_of(opened: dict[str, Strategy], rel: str, size: int, results: Results) -> dict[str, Strategy]:
    """The contestants that read ``rel`` whole, each checked right before its time counts. One
    that refuses (a tool's own size limit, raised as OSError) is left out of this reading, its
    error kept in its cost's ``refused``; a wrong content is a failure of the contest."""
    readers = {}
    for name, s in opened.items():
        try:
            got = len(s.read(rel))
        except OSError as exc:
            results.cost[name].refused[f"read {report.size_label(size)} at {rel}"] = str(exc)[:200]
            continue
        if got != size:
            raise RuntimeError(f"{s.name} read the wrong content of {rel}")
        readers[name] = s
    return readers


# -- attack ----------------------------------------------------------------------------------------


def attack_phase(results: Results, progress: Progress) -> None:
    for name in results.available:
        for op in OPS:
            for swap in SWAPS:
                progress.start(f"attack: {name} {op}, {swap} swap, {results.seconds:g} s")
                counts = race_strategy(name, op, results.seconds, swap)
                results.races.append(counts)
                progress.finish(
                    f"{counts.escapes} escapes / {counts.attempts} attempts "
                    f"({counts.inside} inside, {counts.refused} refused, "
                    f"{counts.swaps} swaps)"
                )
    results.attack_ran = True


# -- report ----------------------------------------------------------------------------------------

COLUMNS = (
    "strategy",
    "read µs d1",
    "read µs d4",
    "read µs d16",
    "write µs",
    "read esc. dir",
    "read esc. final",
    "write esc. dir",
    "write esc. final",
)


def _row(results: Results, name: str) -> list[str]:
    cost = results.cost.get(name)
    row = [name]
    for shape in DEPTHS:
        if cost is None or shape.name not in cost.read_us:
            row.append("-")
            continue
        ratio = cost.read_ratio.get(shape.name)
        row.append(f"{cost.read_us[shape.name]:.1f}" + (f" ({ratio:.2f}x)" if ratio else ""))
    row.append(f"{cost.write_us:.1f} {cost.write_kind}" if cost else "-")
    for op in OPS:
        for swap in SWAPS:
            r = results.race(name, op, swap)
            row.append(f"{r.escapes}/{r.attempts}" if r else "-")
    return row


def format_table(results: Results) -> str:
    rows = [list(COLUMNS)] + [_row(results, n) for n in results.available]
    widths = [max(len(r[i]) for r in rows) for i in range(len(COLUMNS))]
    lines = [
        "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))
        ).rstrip()
        for r in rows
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    notes = [
        "(x) = read time / unconfined's at the same depth; write = 4 KiB replacing a file, "
        "atomic for safefs, plain open(..., 'wb') for the baselines.",
        "esc. = escapes / attempts while another process swaps d/ with a symlink to the "
        "outside (dir) or the file with a symlink to an outside file (final).",
        "unconfined and realpath are racy baselines, not defences.",
        "landlock: plain open() in a worker process Landlock confines to the workspace; "
        "the worker times its own calls, so the cost excludes the round trip to it.",
    ]
    for name in CONTEST_STRATEGIES:
        why = results.notes.get(name)
        if why is not None and why != NOT_SELECTED:
            notes.append(f"{name}: not run: {why}")
    if results.attack_note:
        notes.append(f"attack phase: {results.attack_note}")
    return "\n".join([*lines, "", *notes])


# -- command ---------------------------------------------------------------------------------------


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 < value <= 3600:
        raise argparse.ArgumentTypeError("must be more than 0 and at most 3600")
    return value


def _strategy_patterns(text: str) -> list[str]:
    """The strategies a ``--only`` value names: each comma-separated item a name or a pattern
    (fnmatch) that must match at least one strategy."""
    chosen: list[str] = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        matched = [s for s in CONTEST_STRATEGIES if fnmatch.fnmatchcase(s, item)]
        if not matched:
            raise argparse.ArgumentTypeError(
                f"no strategy {item!r}; the strategies are: {', '.join(CONTEST_STRATEGIES)}"
            )
        chosen += [s for s in matched if s not in chosen]
    if not chosen:
        raise argparse.ArgumentTypeError("names no strategy")
    return chosen


def selected_strategies(only: list[list[str]] | None) -> tuple[str, ...]:
    """The strategies a run measures: those the ``--only`` options name, in contest order."""
    if not only:
        return CONTEST_STRATEGIES
    named = {s for group in only for s in group}
    return tuple(s for s in CONTEST_STRATEGIES if s in named)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="safefs-bench",
        description="The containment contest: the cost of each way of confining a path to a "
        "workspace, and its escapes while another process swaps names under it.",
    )
    parser.add_argument(
        "--seconds",
        type=_positive_seconds,
        default=3.0,
        metavar="S",
        help="how long each attack runs, per strategy, operation and swap kind (default: 3)",
    )
    parser.add_argument(
        "--only",
        type=_strategy_patterns,
        action="append",
        metavar="NAMES",
        help="run only these strategies, in both phases: names or shell patterns, comma-separated "
        "(e.g. 'unconfined,safefs-*'); may be given more than once",
    )
    parser.add_argument(
        "--json", metavar="FILE", help="also save every number, with the machine's facts, as JSON"
    )
    parser.add_argument(
        "--from",
        dest="saved",
        action="append",
        metavar="FILE",
        help="measure nothing: take the numbers of a run saved with --json (for --plot, --markdown); "
        "given more than once, the runs are merged: each strategy's numbers come from the last run "
        "in which it ran (one run per environment, e.g. one per agent framework)",
    )
    parser.add_argument(
        "--plot",
        metavar="DIR",
        help="draw cost against depth, escapes and cost against size as SVG and PNG into DIR "
        "(needs the plot extra: matplotlib)",
    )
    parser.add_argument(
        "--markdown",
        metavar="FILE",
        help="write the run's numbers, stamped with the commit, kernel, CPU and load, into FILE "
        "(its generated part only, if it has one; e.g. docs/benchmarks.md)",
    )
    args = parser.parse_args(argv)
    for option in ("json", "markdown"):
        value = getattr(args, option)
        if value:
            parent = os.path.dirname(os.path.abspath(value))
            if not os.path.isdir(parent):
                parser.error(f"--{option}: no such directory: {parent}")
    if args.saved and args.json:
        parser.error("--from and --json: the run is saved already")
    if args.saved and args.only:
        parser.error("--from and --only: --only selects what a run measures")
    if args.saved and not (args.plot or args.markdown):
        parser.error("--from needs --plot or --markdown")
    return args


def stamp() -> dict[str, Any]:
    """When and where a run was made, beyond machine_facts(): the commit and the load average."""
    try:
        load: list[float] = list(os.getloadavg())
    except OSError:
        load = []
    return {"commit": report.source_commit(), "load_average": load}


def run(args: argparse.Namespace, *, stdout: TextIO, stderr: TextIO, attack_possible: bool) -> int:
    """The whole contest. ``attack_possible`` is whether this platform has renameat2, which the
    attacker needs (a parameter so the refusal can be exercised where the attack does run)."""
    chosen = selected_strategies(getattr(args, "only", None))
    notes: dict[str, str | None] = {s: NOT_SELECTED for s in CONTEST_STRATEGIES if s not in chosen}
    notes.update(availability(names=chosen))
    results = Results(machine={**machine_facts(), **stamp()}, seconds=args.seconds, notes=notes)
    runs = len(results.available) * len(OPS) * len(SWAPS) if attack_possible else 0
    progress = Progress(stderr, len(DEPTHS) + 1 + len(SCALING_DEPTHS) + len(SIZES) + runs)
    progress.say(
        f"safefs-bench: strategies {', '.join(results.available)}; "
        f"attack {args.seconds:g} s per run, {runs} runs"
    )
    cost_phase(results, progress)
    if attack_possible:
        attack_phase(results, progress)
    else:
        results.attack_note = (
            "skipped: this platform lacks renameat2(RENAME_EXCHANGE), which "
            "the attacker needs; the cost phase ran"
        )
        progress.say(f"safefs-bench: attack phase {results.attack_note}")
    stdout.write(format_table(results) + "\n")
    saved = results.as_json()
    if args.json:
        try:
            with open(args.json, "w") as f:
                json.dump(saved, f, indent=2)
                f.write("\n")
        except OSError as exc:
            stderr.write(f"safefs-bench: cannot write {args.json}: {exc.strerror}\n")
            return 2
    status = outputs(args, saved, stdout=stdout, stderr=stderr)
    if status:
        return status
    escaped = results.escaped_safefs()
    if escaped:
        for r in escaped:
            stderr.write(
                f"safefs-bench: FAIL: {r.strategy} escaped {r.escapes} times ({r.op}, {r.swap} swap)\n"
            )
        return 1
    return 0


def outputs(args: argparse.Namespace, saved: dict[str, Any], *, stdout: TextIO, stderr: TextIO) -> int:
    """--plot and --markdown, from a run's saved numbers: 0, or 2 with one line on stderr."""
    plot_dir, markdown_file = getattr(args, "plot", None), getattr(args, "markdown", None)
    if plot_dir:
        try:
            written = plots.draw(saved, plot_dir)
        except plots.PlotUnavailable as exc:
            stderr.write(f"safefs-bench: {exc}\n")
            return 2
        except OSError as exc:
            stderr.write(f"safefs-bench: cannot write the plots into {plot_dir}: {exc.strerror}\n")
            return 2
        stdout.write(f"plots: {', '.join(os.path.basename(p) for p in written) or 'none (no data)'}\n")
    if markdown_file:
        try:
            report.write_markdown(saved, markdown_file, plot_dir=plot_dir)
        except OSError as exc:
            stderr.write(f"safefs-bench: cannot write {markdown_file}: {exc.strerror}\n")
            return 2
        stdout.write(f"markdown: {markdown_file}\n")
    return 0


def from_saved(args: argparse.Namespace, *, stdout: TextIO, stderr: TextIO) -> int:
    runs: list[tuple[str, dict[str, Any]]] = []
    for path in args.saved:
        try:
            with open(path) as f:
                saved = json.load(f)
        except (OSError, ValueError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else "not a saved run (invalid JSON)"
            stderr.write(f"safefs-bench: cannot read {path}: {reason}\n")
            return 2
        if not isinstance(saved, dict) or "cost" not in saved:
            stderr.write(f"safefs-bench: {path} is not a run saved with --json\n")
            return 2
        runs.append((path, saved))
    if len(runs) > 1:
        try:
            combined = merge.merge_runs(runs)
        except merge.MergeError as exc:
            stderr.write(f"safefs-bench: {exc}\n")
            return 2
        stdout.write(merge.summary(combined) + "\n")
    else:
        combined = runs[0][1]
    return outputs(args, combined, stdout=stdout, stderr=stderr)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.plot and not plots.available():  # said before minutes of measuring, not after
        sys.stderr.write(f"safefs-bench: {plots.INSTALL_HINT}\n")
        return 2
    if args.saved:
        return from_saved(args, stdout=sys.stdout, stderr=sys.stderr)
    try:
        return run(args, stdout=sys.stdout, stderr=sys.stderr, attack_possible=capabilities().renameat2)
    except KeyboardInterrupt:
        sys.stderr.write("\nsafefs-bench: interrupted\n")
        return 130


if __name__ == "__main__":
    sys.exit(main())
