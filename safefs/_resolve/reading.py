"""Reading a whole regular file beneath the root, the one way every resolver offers.

Threat model: docs/threat-model.md.

With the native extension it is one C call (:func:`safefs._fastpath.read_file`): resolve, fstat,
read, close, with the GIL released. Without it: the resolver's ``open_read``, then ``fstat`` and
``read`` here. Either way the fd is opened ``O_NONBLOCK`` (a FIFO never hangs the open), anything
but a regular file is refused after ``fstat``, and the fd is closed exactly once.
"""

from __future__ import annotations

import errno
import os
import stat

from safefs.errors import NotRegularFileError, error


def read_opened(fd: int) -> bytes:
    """The whole content of the file ``fd`` holds (regular files only); closes ``fd``."""
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise error(errno.EISDIR) if stat.S_ISDIR(st.st_mode) else NotRegularFileError()
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
