"""``python -m agent``: the same as the ``safefs-agent`` command."""

from agent.extras import agent_main

raise SystemExit(agent_main())
