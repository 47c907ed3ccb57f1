"""Reading a whole regular file beneath the root, the one way every resolver offers.

Threat model: docs/threat-model.md.

With the native extension it is one C call (:func:`safefs._fastpath.read_file`): resolve, fstat,
read, close, with the GIL released. Without it: the resolver's ``open_read``, then ``fstat`` and
``read`` here. Either way the fd is opened ``O_NONBLOCK`` (a FIFO never hangs the open), anything
but a regular file is refused after ``fstat``, and the fd is closed exactly once.

``read_head`` is the same read bounded by a size: at most that many bytes are read and held,
whatever the file's size (:func:`read_head_opened` without the extension).
"""

from __future__ import annotations

import os
from collections.abc import Callable

from safefs._fastpath import read_up_to, require_regular


def read_opened(fd: int) -> bytes:
    """The whole content of the file ``fd`` holds (regular files only); closes ``fd``."""
    try:
        st = os.fstat(fd)
        require_regular(st)
        size = st.st_size
        data = os.read(fd, size + 1)  # one byte more notices a file that grew meanwhile
        if len(data) == size:
            return data  # exactly the size fstat saw: end of file
        chunks = [data]
        while chunks[-1]:
            chunks.append(os.read(fd, max(size, 65536)))
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_head_opened(fd: int, size: int) -> bytes:
    """At most the first ``size`` bytes of the file ``fd`` holds (regular files only), memory
    bounded by ``size`` whatever the file's size; closes ``fd``."""
    try:
        st = os.fstat(fd)
        require_regular(st)
        return read_up_to(fd, size, st.st_size)
    finally:
        os.close(fd)


def read_heads_each(
    read_head: Callable[[int, bytes, int], bytes], root_fd: int, rels: list[bytes], size: int
) -> list[bytes | OSError]:
    """``read_head`` of each of ``rels`` in turn: its bytes, or the OSError it raised."""
    results: list[bytes | OSError] = []
    for rel in rels:
        try:
            results.append(read_head(root_fd, rel, size))
        except OSError as exc:
            results.append(exc)
    return results
