"""``safefs-mcp``: the workspace operations served to any MCP client, as a drop-in replacement
for the official MCP filesystem server (same tool names, parameters and result shapes), with
every path resolved beneath a directory fd by safefs.

Modules: ``cli`` (command line; imports what the chosen transport needs, nothing more),
``directories`` (which paths a call may name), ``roots`` (what a session serves, given the DIRs
and the client's roots), ``in_use`` (directories closed once replaced and unused), ``tool``
(what a tool is), ``tools`` (the tool table), ``handlers`` (each tool's function, an adapter over
:mod:`safefs.workspace`), ``node_format`` (texts written as the official server writes them),
``calls`` (definitions, results and the run of one call, as plain JSON), ``cancelling`` (a
call's cancel event), ``jsonrpc`` (messages and ids), ``outbox`` (answers written in order,
bounded), ``stdio_server`` (JSON-RPC over stdio in the standard library alone), ``server`` (the
MCP SDK wiring for HTTP), ``http_transport`` (streamable HTTP behind a bearer token and an Origin
check) and ``http_connections`` (its connection cap and deadlines).
"""
