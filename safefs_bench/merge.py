"""Several saved runs (``safefs-bench --json``) as one set of numbers, for ``--plot`` and
``--markdown``.

Each agent framework is installed only in an environment of its own, so no single run holds every
contestant: one run per environment measures the strategies it has (``--only``), and the merge
takes each strategy's cost and races from the last run in which it ran. The machine's facts and the
commit are the first run's; ``merged_from`` says which strategies came from which run. Runs whose
attacks lasted different times are refused: their escape counts would not be comparable.
"""

from __future__ import annotations

import os
from typing import Any

# The note of a strategy a run's --only left out: it did not run, for no reason of its own.
NOT_SELECTED = "not selected (--only)"


class MergeError(ValueError):
    """The runs cannot be merged; ``str()`` says why, for the user."""


def _ran(run: dict[str, Any], strategy: str) -> bool:
    return bool(run.get("strategies", {}).get(strategy, {}).get("available"))


def _was_selected(info: dict[str, Any]) -> bool:
    return info.get("selected", True) is not False and info.get("note") != NOT_SELECTED


def merge_runs(runs: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """One run, in the format of a saved run, from ``runs`` ((label, saved run), first to last)."""
    if not runs:
        raise MergeError("no runs to merge")
    seconds = {run.get("attack_seconds_per_run") for _, run in runs if run.get("attack", {}).get("ran")}
    if len(seconds) > 1:
        shown = " and ".join(f"{s:g}" for s in sorted(s for s in seconds if s is not None))
        raise MergeError(
            f"the runs attacked for different times ({shown} s per run): merge runs of one --seconds"
        )
    names: list[str] = []
    for _, run in runs:
        names += [s for s in run.get("strategies", {}) if s not in names]
    strategies: dict[str, Any] = {}
    cost: dict[str, Any] = {}
    races: list[dict[str, Any]] = []
    taken: list[list[str]] = [[] for _ in runs]
    for name in names:
        sources = [i for i, (_, run) in enumerate(runs) if _ran(run, name)]
        if sources:
            i = sources[-1]
            run = runs[i][1]
            strategies[name] = run["strategies"][name]
            if name in run.get("cost", {}):
                cost[name] = run["cost"][name]
            races += [r for r in run.get("attack", {}).get("runs", []) if r.get("strategy") == name]
            taken[i].append(name)
            continue
        # Ran nowhere: the last reason of its own (not merely "--only left it out"), if any.
        infos = [run["strategies"][name] for _, run in runs if name in run.get("strategies", {})]
        reasons = [info for info in infos if _was_selected(info)]
        strategies[name] = (reasons or infos)[-1]
    first = runs[0][1]
    attacks = [run.get("attack", {}) for _, run in runs]
    notes = [a["note"] for a in attacks if a.get("note")]
    return {
        "machine": first.get("machine", {}),
        "attack_seconds_per_run": next(iter(seconds), first.get("attack_seconds_per_run")),
        "strategies": strategies,
        "cost": cost,
        "attack": {
            "ran": any(a.get("ran") for a in attacks),
            "note": notes[0] if notes else None,
            "runs": races,
        },
        "safefs_escaped": any(run.get("safefs_escaped") for _, run in runs),
        "merged_from": [
            {
                "run": os.path.basename(label),
                "python": run.get("machine", {}).get("python", ""),
                "commit": run.get("machine", {}).get("commit", ""),
                "strategies": taken[i],
            }
            for i, (label, run) in enumerate(runs)
        ],
    }


def summary(merged: dict[str, Any]) -> str:
    """One line per merged run: which strategies' numbers came from it."""
    lines = [f"merged {len(merged['merged_from'])} runs:"]
    for part in merged["merged_from"]:
        names = ", ".join(part["strategies"]) or "nothing (later runs replace it all)"
        lines.append(f"  {part['run']}: {names}")
    return "\n".join(lines)
