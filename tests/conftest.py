"""What every run of the suite shares: nothing may be left in ``/``, ``$HOME``, the checkout or
(named ``safefs-*``) the temporary directory (``tests/leftovers.py``).

Libraries the tests drive keep caches and data under the user's home (matplotlib's font cache,
a framework's storage under ``~/.local/share``); a machine that never ran them has no such
directory yet, and a run must leave it as it found it. Their XDG directories, and matplotlib's,
are a temporary directory of the session's, unless the caller chose others.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

import pytest

pytest.register_assert_rewrite("tests.leftovers")  # imported here before pytest loads it as a plugin

from tests.leftovers import SESSION_STATE_PREFIX, SESSION_STATE_VARIABLE  # noqa: E402

pytest_plugins = ["tests.leftovers"]

# Made once, by the first process of a run (pytest-xdist's workers inherit it and end without
# running atexit), and removed by that process.
_HOME_STATE = os.environ.get(SESSION_STATE_VARIABLE, "")
if not _HOME_STATE:
    _HOME_STATE = os.environ[SESSION_STATE_VARIABLE] = tempfile.mkdtemp(prefix=SESSION_STATE_PREFIX)
    # As /tmp is: the tests that drop to an ordinary user make their directories here too.
    os.chmod(_HOME_STATE, 0o1777)
    atexit.register(shutil.rmtree, _HOME_STATE, ignore_errors=True)
for _variable in ("XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "MPLCONFIGDIR"):
    if _variable not in os.environ:
        os.environ[_variable] = os.path.join(_HOME_STATE, _variable.lower())
