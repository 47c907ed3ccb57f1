"""What the integration tests share: twin work trees, the differential verdict, and the race of
an original against its drop-in."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from safefs.testing import RaceCounts, Victim, race

DOCS = Path(__file__).parents[2] / "docs" / "integrations.md"
REFUSED = "refused"  # a difference that is the drop-in refusing what the original let out


def twin(tmp_path: Path, name: str) -> Path:
    """``<tmp>/<name>/work`` beside ``<tmp>/<name>/secret.txt``, which no tool may read."""
    base = tmp_path / name
    (base / "work").mkdir(parents=True)
    (base / "secret.txt").write_text("outside the workdir\n")
    return base / "work"


def documented(text: str) -> bool:
    return text in " ".join(DOCS.read_text().split())


def assert_as_listed(
    original: Any, drop_in: Any, expected: str | None, refusal: Callable[[Any, Any], None] | None = None
) -> None:
    """Equal results when ``expected`` is None; else the listed difference: ``REFUSED`` (checked
    by ``refusal(original, drop_in)``) or a phrase docs/integrations.md must hold."""
    if expected is None:
        assert drop_in == original
    elif expected == REFUSED:
        assert refusal is not None
        refusal(original, drop_in)
    else:
        assert drop_in != original
        assert documented(expected), f"docs/integrations.md must list: {expected}"


def race_each(
    victim: Callable[..., Victim], implementations: Iterable[str], op: str, swap: str, seconds: float
) -> dict[str, RaceCounts]:
    """``race`` of ``victim(workspace, implementation=name)`` for each name; the counts printed."""
    counts = {
        name: race(partial(victim, implementation=name), op, seconds, swap, name=name)
        for name in implementations
    }
    for name, c in counts.items():
        print(
            f"{op}/{swap}: {name}: {c.escapes} escapes / {c.attempts} attempts "
            f"({c.inside} inside, {c.refused} refused, {c.swaps} swaps)"
        )
    return counts


class ClosingVictim:
    """A race victim holding an original's or a drop-in's objects: on exit each one's ``close()``
    runs where it has one (the drop-ins keep their root open until then)."""

    def closables(self) -> Iterable[Any]:
        return ()

    def __enter__(self) -> ClosingVictim:
        return self

    def __exit__(self, *exc: object) -> None:
        for held in self.closables():
            close = getattr(held, "close", None)
            if close is not None:
                close()


def assert_race(counts: dict[str, RaceCounts], original: str, *, original_escapes: bool) -> None:
    """The drop-in (``"safefs"``) let nothing out and still worked while attacked; the original
    escaped when ``original_escapes`` (skipped when the attacker made no swap in time)."""
    assert counts["safefs"].escapes == 0
    assert counts["safefs"].inside > 0, "the drop-in must also work while attacked"
    if counts[original].swaps == 0:
        pytest.skip("the attacker made no swap in time on this machine")
    if original_escapes:
        assert counts[original].escapes > 0, "the original's check-then-open was expected to escape"
