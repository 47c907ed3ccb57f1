"""Tool-call arguments checked against the JSON Schema the caller was shown.

One validator for every front end (the agent's tools and ``safefs-mcp``): JSON Schema draft 7
(``jsonschema``), except that ``integer`` means a Python ``int`` and not a ``bool``, so a field
declared integer reaches a tool as an ``int`` (``2.0`` in JSON reads back as a float and is
refused, as draft 4 defines it). A problem is a value, never an exception: the front end turns it
into an error result the caller can act on.

When several things are wrong, the one nearest the top of the arguments is reported (the first of
them in schema order): a non-object, then a missing field, then an unexpected one, then a field's
own value.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ArgumentProblem:
    """The first thing wrong with a call's arguments.

    ``where`` is the ``/``-joined path to the value at fault ("" for the arguments themselves);
    ``message`` is jsonschema's own sentence, the wording MCP SDKs report.
    """

    where: str
    keyword: str  # the schema keyword the value fails: "type", "required", "enum"...
    message: str
    field: str = ""  # "required", "additionalProperties": the field missing or unexpected
    expected: str = ""  # "type": the type the schema declares

    def __str__(self) -> str:
        """The problem in one plain line, naming the field as the caller spelled it."""
        if self.keyword == "required":
            return f"missing required field {self.field!r}"
        if self.keyword == "additionalProperties":
            return f"unexpected field {self.field!r}"
        if self.keyword == "type":
            if not self.where:
                return (
                    "input must be a JSON object"
                    if self.expected == "object"
                    else f"input must be of type {self.expected}"
                )
            return f"field {self.where!r} must be of type {self.expected}"
        return f"field {self.where!r}: {self.message}" if self.where else self.message


def argument_problem(schema: dict[str, Any], args: Any) -> ArgumentProblem | None:
    """What is wrong with ``args`` against ``schema``, or None when they conform."""
    errors = list(_validator_class()(schema).iter_errors(args))
    if not errors:
        return None
    error = min(errors, key=lambda e: len(e.absolute_path))  # min keeps the first of equals
    where = "/".join(str(part) for part in error.absolute_path)
    keyword, value = str(error.validator), error.validator_value
    if keyword == "type":
        expected = value if isinstance(value, str) else " or ".join(value)
        return ArgumentProblem(where, keyword, error.message, expected=expected)
    return ArgumentProblem(
        where, keyword, error.message, field=_named_field(keyword, value, error.instance, error.schema, where)
    )


def _named_field(keyword: str, value: Any, instance: Any, schema: dict[str, Any], where: str) -> str:
    if keyword == "required":
        names: Iterable[str] = (n for n in value if n not in instance)
    elif keyword == "additionalProperties":
        # The schemas here declare no patternProperties: a field is expected iff it is listed.
        names = (n for n in instance if n not in schema.get("properties", {}))
    else:
        return ""
    name = next(iter(names), "")
    return f"{where}/{name}" if where else name


@functools.cache
def _validator_class() -> Any:
    # Imported on first use: jsonschema takes about 0.2 s to import, which commands that
    # never validate (``--help``, ``audit verify``) need not pay.
    import jsonschema  # type: ignore[import-untyped]

    def is_int(checker: Any, instance: Any) -> bool:
        return isinstance(instance, int) and not isinstance(instance, bool)

    draft7 = jsonschema.Draft7Validator
    return jsonschema.validators.extend(draft7, type_checker=draft7.TYPE_CHECKER.redefine("integer", is_int))
