"""Drop-in safefs backends for the Anthropic SDK's own file tools (extra ``anthropic``).

- :mod:`safefs.anthropic.agent_toolset`: ``agent_toolset_20260401`` (bash, read, write, edit,
  glob, grep), the names of ``anthropic.lib.tools.agent_toolset``.
- :class:`BetaLocalFilesystemMemoryTool`, :class:`BetaAsyncLocalFilesystemMemoryTool`: the memory
  tool (``memory_20250818``), the names of ``anthropic.tools``.
- :class:`TextEditorTool` (``text_editor_20250728``, ``str_replace_based_edit_tool``) and
  :class:`BashTool` (``bash_20250124``): handlers for Anthropic's schema-less client tools.

Every path is resolved beneath a directory fd (:class:`safefs.Root`); shell commands run in the
kernel sandbox (:mod:`safefs.sandbox`). docs/anthropic.md lists each difference from the SDK.
"""

from safefs.anthropic.bash_tool import BashTool
from safefs.anthropic.memory import BetaAsyncLocalFilesystemMemoryTool, BetaLocalFilesystemMemoryTool
from safefs.anthropic.text_editor import TextEditor, TextEditorTool

__all__ = [
    "BashTool",
    "BetaAsyncLocalFilesystemMemoryTool",
    "BetaLocalFilesystemMemoryTool",
    "TextEditor",
    "TextEditorTool",
]
