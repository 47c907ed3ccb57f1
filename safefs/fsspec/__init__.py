"""An fsspec filesystem that cannot leave its root: ``SafeFileSystem``, registered with fsspec
as the protocol ``safefs`` (the ``fsspec.specs`` entry point), so pandas, pyarrow, dask and
anything else that opens files through fsspec can be given a directory they stay inside.

Install with ``pip install './[fsspec]'`` in a clone of safefs. docs/fsspec.md.
"""

from __future__ import annotations

from .filesystem import SafeFileSystem

__all__ = ["SafeFileSystem"]
