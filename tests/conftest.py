"""What every run of the suite shares: nothing may be left in ``/``, ``$HOME`` or the checkout
(``tests/leftovers.py``)."""

from __future__ import annotations

pytest_plugins = ["tests.leftovers"]
