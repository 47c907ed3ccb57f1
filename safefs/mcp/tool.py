"""What one MCP tool is: its listing (name, title, description, schemas, annotations), the
function that runs it, and the kinds of reply it gives. The table of tools is
:mod:`safefs.mcp.tools`; the functions are :mod:`safefs.mcp.handlers`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from safefs.mcp.directories import Directories

READ_ONLY = {"readOnlyHint": True, "openWorldHint": False}


def writes(*, destructive: bool, idempotent: bool) -> dict[str, bool]:
    return {
        "readOnlyHint": False,
        "destructiveHint": destructive,
        "idempotentHint": idempotent,
        "openWorldHint": False,
    }


@dataclass(frozen=True)
class Media:
    kind: str  # "image", "audio" or "resource"
    data: str
    mime_type: str
    uri: str


Reply = str | Media
Handler = Callable[[Directories, dict[str, Any]], Reply]


TEXT_OUTPUT = {
    "type": "object",
    "properties": {"content": {"type": "string"}},
    "required": ["content"],
    "additionalProperties": False,
}


@dataclass(frozen=True, eq=False, kw_only=True)  # compared and hashed by identity: one object per tool
class McpTool:
    name: str
    title: str
    description: str
    properties: Mapping[str, Mapping[str, Any]]
    required: tuple[str, ...] = ()
    annotations: Mapping[str, bool]
    run: Handler
    path_args: tuple[str, ...] = ()  # argument names holding one path, or a list of paths
    output_schema: Mapping[str, Any] | None = field(default_factory=lambda: TEXT_OUTPUT)  # most give text

    @property
    def read_only(self) -> bool:
        return bool(self.annotations.get("readOnlyHint"))

    def input_schema(self) -> dict[str, Any]:
        return {"type": "object", "properties": dict(self.properties), "required": list(self.required)}

    @classmethod
    def on_path(cls, **fields: Any) -> McpTool:
        """A tool whose one argument is ``path``."""
        return cls(properties={"path": {"type": "string"}}, required=("path",), path_args=("path",), **fields)

    def target_paths(self, args: Mapping[str, Any]) -> list[str]:
        """The paths (as the client gave them) that a call with ``args`` touches."""
        out: list[str] = []
        for name in self.path_args:
            value = args.get(name)
            if isinstance(value, str):
                out.append(value)
            elif isinstance(value, list):
                out.extend(v for v in value if isinstance(v, str))
        return out


_MEDIA_BLOCK = {
    "anyOf": [
        {
            "type": "object",
            "properties": {
                "type": {"type": "string", "enum": ["image", "audio"]},
                "data": {"type": "string"},
                "mimeType": {"type": "string"},
            },
            "required": ["type", "data", "mimeType"],
            "additionalProperties": False,
        },
        {
            "type": "object",
            "properties": {
                "type": {"type": "string", "const": "resource"},
                "resource": {
                    "type": "object",
                    "properties": {
                        "uri": {"type": "string"},
                        "mimeType": {"type": "string"},
                        "blob": {"type": "string"},
                    },
                    "required": ["uri", "blob"],
                    "additionalProperties": False,
                },
            },
            "required": ["type", "resource"],
            "additionalProperties": False,
        },
    ]
}
MEDIA_OUTPUT = {  # the official server's: an image or audio block, or an embedded resource
    "type": "object",
    "properties": {"content": {"type": "array", "items": _MEDIA_BLOCK}},
    "required": ["content"],
    "additionalProperties": False,
}
