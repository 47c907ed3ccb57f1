"""``python -m safefs.mcp``: the same as the ``safefs-mcp`` command."""

from safefs.mcp.cli import entry_point

if __name__ == "__main__":
    entry_point()
