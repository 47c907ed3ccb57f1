"""``safefs-mcp``: the workspace operations served to any MCP client, as a drop-in replacement
for the official MCP filesystem server (same tool names, parameters and result shapes), with
every path resolved beneath a directory fd by safefs.

Modules: ``cli`` (command line, no SDK import), ``directories`` (which paths a call may name),
``tools`` (the tool table, an adapter over :mod:`safefs.workspace`), ``server`` (the SDK wiring
and stdio), ``http_transport`` (streamable HTTP behind a bearer token and an Origin check).
"""
