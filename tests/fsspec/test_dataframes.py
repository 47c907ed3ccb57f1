"""pandas and pyarrow through SafeFileSystem: what they write lands inside the root, what they
read comes from it, and a planted link out is refused, as pandas reports errors. Skipped where
pandas or pyarrow is not installed."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("fsspec")
pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pafs = pytest.importorskip("pyarrow.fs")

from safefs import PathEscapeError  # noqa: E402
from safefs.fsspec import SafeFileSystem  # noqa: E402


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "data").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "x.csv").write_text("secret\n1\n")
    (ws / "evil").symlink_to(tmp_path / "outside")
    return ws


def test_pandas_csv_and_parquet_by_url(ws: Path) -> None:
    frame = pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "z"]})
    options = {"root": str(ws)}
    frame.to_csv("safefs://data/x.csv", index=False, storage_options=options)
    assert (ws / "data" / "x.csv").read_text().startswith("a,b\n1,x")
    pd.testing.assert_frame_equal(pd.read_csv("safefs://data/x.csv", storage_options=options), frame)
    frame.to_parquet(f"safefs://data/x.parquet::{ws}")
    assert (ws / "data" / "x.parquet").read_bytes()[:4] == b"PAR1"
    pd.testing.assert_frame_equal(pd.read_parquet(f"safefs://data/x.parquet::{ws}"), frame)


def test_pandas_cannot_follow_a_planted_link_out(ws: Path, tmp_path: Path) -> None:
    with pytest.raises(PathEscapeError):
        pd.read_csv("safefs://evil/x.csv", storage_options={"root": str(ws)})
    with pytest.raises(PathEscapeError):
        pd.DataFrame({"a": [1]}).to_csv("safefs://evil/y.csv", storage_options={"root": str(ws)})
    assert sorted(p.name for p in (tmp_path / "outside").iterdir()) == ["x.csv"]


def test_pyarrow_dataset_through_the_filesystem(ws: Path) -> None:
    fs = SafeFileSystem(str(ws))
    arrow_fs = pafs.PyFileSystem(pafs.FSSpecHandler(fs))
    table = pa.table({"n": list(range(100))})
    pq.write_table(table, "data/t.parquet", filesystem=arrow_fs)
    assert pq.read_table("data/t.parquet", filesystem=arrow_fs).equals(table)
    assert (ws / "data" / "t.parquet").stat().st_size > 0
    with pytest.raises(PathEscapeError):
        pq.write_table(table, "evil/t.parquet", filesystem=arrow_fs)
    fs.close()
