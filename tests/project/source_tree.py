"""The checkout as a build sees it: a copy of its sources without what building or testing left
in it (build directories and built extensions would be reused, environments are large), and the
words pip prints when the package index cannot be reached."""

from __future__ import annotations

import shutil
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]

NETWORK_TROUBLE = (
    "Could not find a version",
    "ConnectionError",
    "Max retries exceeded",
    "Temporary failure in name resolution",
    "No matching distribution",
)

_LEFT_BY_BUILDS_AND_TESTS = shutil.ignore_patterns(
    ".git",
    ".venv",
    ".venv-*",
    ".contest-runs",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    ".*_cache",
    ".hypothesis",
    ".benchmarks",
    "bench-results",
    "node_modules",
    ".bench-node",
    ".bench-downloads",
    "*.so",
)


def copy_sources(destination: Path) -> Path:
    """Copy the checkout's sources to ``destination`` (which must not exist) and return it."""
    shutil.copytree(PROJECT, destination, ignore=_LEFT_BY_BUILDS_AND_TESTS)
    return destination
