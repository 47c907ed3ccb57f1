"""``python -m agent``: the same as the ``safefs-agent`` command."""

from agent.cli import main

raise SystemExit(main())
