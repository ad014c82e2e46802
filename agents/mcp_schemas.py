"""The tool schemas Quire lists, made compact: an agent pays for every character of tools/list
on every turn, so the list says each thing once.

pydantic's schemas of the tools' arguments and results repeat each property's name as its
title, declare a `null` default for every optional field and spell out every nested object.
The input schema keeps the types, constraints and one short description per argument; the
output schema keeps the result's top-level properties, their JSON types and which are always
present (`required`): enough for a client to build a typed result (fastmcp's `.data`, the mcp
SDK's validation of `structuredContent`), while what each field means is said once, in the
tool's description.
"""

from __future__ import annotations

from typing import Any

NULL = {"type": "null"}
# Schema keywords that only repeat what the names and the description already say.
_NOISE = ("title", "default")


def compact_input(schema: dict[str, Any]) -> dict[str, Any]:
    """An argument schema without titles and null defaults; an optional argument is listed as
    its own type (leaving it out is how an agent passes nothing)."""
    return _without_noise(schema)


def _without_noise(schema: Any) -> Any:
    if isinstance(schema, list):
        return [_without_noise(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    kept: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _NOISE and not isinstance(value, dict):
            continue
        if key in ("properties", "$defs"):
            kept[key] = {name: _without_noise(sub) for name, sub in value.items()}
        else:
            kept[key] = _without_noise(value)
    options = kept.get("anyOf")
    if options and NULL in options and len(options) == 2:
        (other,) = (option for option in options if option != NULL)
        del kept["anyOf"]
        kept = {**other, **kept}
    return kept


def compact_output(schema: dict[str, Any]) -> dict[str, Any]:
    """A result schema of its top-level properties with their JSON types; nested objects are
    `object` (the description says what they hold)."""
    defs = schema.get("$defs", {})
    return {
        "type": "object",
        "properties": {
            name: _shallow(field, defs) for name, field in schema.get("properties", {}).items()
        },
        "required": list(schema.get("required", [])),
    }


def _shallow(field: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in field:
        return _shallow(defs[field["$ref"].rsplit("/", 1)[-1]], defs)
    if "anyOf" in field:
        options = [_shallow(option, defs) for option in field["anyOf"] if option != NULL]
        nullable = len(options) < len(field["anyOf"])
        if len(options) == 1 and isinstance(options[0].get("type"), str):
            shown = dict(options[0])
            if nullable:
                shown["type"] = [shown["type"], "null"]
            return shown
        return {"anyOf": options + ([NULL] if nullable else [])}
    kind = field.get("type", "object")
    if kind == "array":
        items = _shallow(field["items"], defs) if "items" in field else {}
        if items.get("type") == "object":
            return {"type": "array"}
        return {"type": "array", "items": items}
    if kind == "object":
        return {"type": "object"}
    return {key: field[key] for key in ("type", "enum") if key in field}
