"""``json.dumps(value, indent=2, ensure_ascii=False)`` without recursion.

The standard encoder recurses once per level of nesting (several frames per level with
``indent``), so a directory tree a few hundred levels deep raises RecursionError before any
size cap applies. Here the nesting is an explicit stack: the depth costs memory, not frames.
"""

from __future__ import annotations

import json
from typing import Any


def dumps_indented(value: Any, indent: int = 2) -> str:
    """The text ``json.dumps(value, indent=indent, ensure_ascii=False)`` gives, for values made
    of dicts, lists, strings, numbers, booleans and None."""
    out: list[str] = []
    work: list[tuple[Any, int] | str] = [(value, 0)]
    while work:
        item = work.pop()
        if isinstance(item, str):
            out.append(item)
            continue
        node, level = item
        if isinstance(node, dict | list) and node:
            inner = "\n" + " " * (indent * (level + 1))
            closing = "\n" + " " * (indent * level) + ("}" if isinstance(node, dict) else "]")
            parts: list[tuple[Any, int] | str] = []
            if isinstance(node, dict):
                for i, (key, child) in enumerate(node.items()):
                    parts.append(("," if i else "") + inner + json.dumps(str(key), ensure_ascii=False) + ": ")
                    parts.append((child, level + 1))
            else:
                for i, child in enumerate(node):
                    parts.append(("," if i else "") + inner)
                    parts.append((child, level + 1))
            out.append("{" if isinstance(node, dict) else "[")
            work.append(closing)
            work.extend(reversed(parts))
        else:
            out.append(json.dumps(node, ensure_ascii=False))
    return "".join(out)
