"""Drop-ins for strands-agents-tools' ``file_read``, ``file_write`` and ``editor`` (extra
``strands``): switch one import::

    from safefs.integrations.strands import editor, file_read, file_write

Each is a module shaped as the original's (the installed version's ``TOOL_SPEC``, or the same
``@tool`` signature and docstring), so ``Agent(tools=[file_read, file_write, editor])`` gives the
model the same tools. The originals open any path they are given; here every path goes through a
:class:`safefs.Root` on the working directory: the directory named by ``SAFEFS_STRANDS_ROOT``,
else the process's current directory at the time of the call, the directory the originals resolve
a relative path against. A path or a symlink leading outside gets the tool's own error result.
Every difference from the originals is listed in docs/integrations.md.
"""

from safefs.integrations.strands._workspace import ROOT_VARIABLE, close

__all__ = ["ROOT_VARIABLE", "close"]
