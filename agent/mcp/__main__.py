"""``python -m agent.mcp``: the same as the ``safefs-mcp`` command."""

from agent.mcp.cli import entry_point

if __name__ == "__main__":
    entry_point()
