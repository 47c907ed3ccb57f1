"""Drop-in safefs backends for the Anthropic SDK's own file tools (extra ``anthropic``).

- :mod:`safefs.anthropic.agent_toolset`: ``agent_toolset_20260401`` (bash, read, write, edit,
  glob, grep), the names of ``anthropic.lib.tools.agent_toolset``.
"""
