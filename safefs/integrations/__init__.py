"""Race-free drop-ins for agent frameworks' own file tools, one module per framework.

Each module exports classes with the names, constructor arguments, methods and results of the
framework's originals, so switching is one import. Every file operation goes through a
:class:`safefs.Root`; a command, where the original runs one, runs in :mod:`safefs.sandbox`; an
operation the original lets reach outside its directory is refused with the framework's own
error shape. Each module needs its framework installed (the extra of the same name).

- :mod:`safefs.integrations.pydantic_ai`: ``LocalWorkspaceBackend`` and the ``LocalWorkspace``
  capability (extra ``pydantic-ai``).
- :mod:`safefs.integrations.langchain`: ``FileManagementToolkit`` and its seven tools (extra
  ``langchain``).
- :mod:`safefs.integrations.google_adk`: ``LocalEnvironment`` (extra ``google-adk``).
- :mod:`safefs.integrations.crewai`: ``FileReadTool``, ``FileWriterTool`` and
  ``DirectoryReadTool`` (extra ``crewai``).
- :mod:`safefs.integrations.agno`: ``FileTools`` (extra ``agno``).
- :mod:`safefs.integrations.deepagents`: ``FilesystemBackend`` (extra ``deepagents``).
- :mod:`safefs.integrations.claude_agent_sdk`: Claude Code's ``Read``, ``Write``, ``Edit``,
  ``Glob``, ``Grep`` and ``Bash`` as an in-process SDK MCP server, and the ``ClaudeAgentOptions``
  that serve them in place of the built-in ones (extra ``claude-agent-sdk``).
- :mod:`safefs.integrations.strands`: the ``file_read``, ``file_write`` and ``editor`` tools of
  strands-agents-tools (extra ``strands``).

docs/integrations.md has the one-line switch for each, and every difference from the original.
"""
