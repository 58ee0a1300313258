"""JSON Schemas that authors write (a tool's input_schema, an MCP server's declared tools) or that an
MCP server serves, applied in ARIA's own process — outside the sandbox.

Two things such a schema could make the server do are taken away:

- **fetch**: jsonschema retrieves a remote `$ref` by default (deprecated behaviour): a `$ref` to
  `http://10.0.0.5/…` or `file:///…` made the server GET internal URLs or read local files while it
  checked a test input. Instances are checked with an empty `referencing.Registry`, so only the
  schema's own `#…` references resolve; any other `$ref` is left out of the check.
- **hang**: `pattern` / `patternProperties` are Python regexes matched against text an author or a
  model chooses. A catastrophic one (`^(a+)+$` against 28 characters) ran for seconds per extra
  character while holding the GIL: every request of the process waited (a draft test froze
  /healthz for 12 s; 35 characters would be hours). ARIA checks the shape (types, required, enums,
  bounds); formats are the tool's own code (sandboxed) or the MCP server's to check.

An authored schema using either fails validation (`schema_problems`), so its author knows; a served
schema (an MCP server's, an artifact published before) is checked without them (`instance_checker`).
"""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry

REGEX_KEYWORDS = ("pattern", "patternProperties")
REF_KEYWORDS = ("$ref", "$dynamicRef")
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_SCHEMAS = (
    "items",
    "additionalItems",
    "additionalProperties",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
)


def _children(schema: dict[str, Any]) -> list[tuple[str, Any]]:
    """(where, subschema) of every subschema directly inside `schema` (keywords, not data)."""
    found: list[tuple[str, Any]] = []
    for key in _SCHEMA_MAPS:
        if isinstance(schema.get(key), dict):
            found += [(f"{key}.{name}", sub) for name, sub in schema[key].items()]
    for key in _SCHEMA_LISTS:
        if isinstance(schema.get(key), list):
            found += [(f"{key}.{i}", sub) for i, sub in enumerate(schema[key])]
    for key in _SCHEMAS:
        value = schema.get(key)
        if isinstance(value, list):  # draft-04 style tuple `items`
            found += [(f"{key}.{i}", sub) for i, sub in enumerate(value)]
        elif value is not None:
            found.append((key, value))
    return found


def _remote(ref: Any) -> bool:
    return not (isinstance(ref, str) and ref.startswith("#"))


def schema_problems(schema: Any, field: str) -> list[str]:
    """Why an authored schema cannot be used: a regex keyword or a reference outside the schema."""
    problems: list[str] = []

    def walk(node: Any, where: str) -> None:
        if not isinstance(node, dict):
            return
        for key in REGEX_KEYWORDS:
            if key in node:
                problems.append(
                    f"{where}.{key}: regular expressions are not checked by ARIA (a hostile one can stall the "
                    "server); check the format in the tool's code."
                )
        for key in REF_KEYWORDS:
            if key in node and _remote(node[key]):
                problems.append(f"{where}.{key}: only references inside the schema ('#/$defs/…') are allowed.")
        for path, child in _children(node):
            walk(child, f"{where}.{path}")

    walk(schema, field)
    return problems[:5]


def _without_hazards(node: Any) -> Any:
    if not isinstance(node, dict):
        return node
    out = {key: value for key, value in node.items() if key not in REGEX_KEYWORDS}
    for key in REF_KEYWORDS:
        if key in out and _remote(out[key]):
            del out[key]
    if "patternProperties" in node:  # the names it matched would now count as additional
        out.pop("additionalProperties", None)
        out.pop("unevaluatedProperties", None)
    for key in _SCHEMA_MAPS:
        if isinstance(out.get(key), dict):
            out[key] = {name: _without_hazards(sub) for name, sub in out[key].items()}
    for key in (*_SCHEMA_LISTS, *_SCHEMAS):
        value = out.get(key)
        if isinstance(value, list):
            out[key] = [_without_hazards(sub) for sub in value]
        elif isinstance(value, dict):
            out[key] = _without_hazards(value)
    return out


def instance_checker(schema: Any) -> Draft202012Validator:
    """A validator for instances of `schema` that fetches nothing and matches no regex."""
    return Draft202012Validator(_without_hazards(schema), registry=Registry())


def instance_problems(checker: Draft202012Validator, instance: Any) -> list[str]:
    """The messages of `instance`'s errors; a schema that cannot be applied is one problem, not a crash."""
    try:
        return [error.message for error in checker.iter_errors(instance)]
    except Exception as exc:  # an unresolvable local reference, a malformed served schema
        return [f"the input schema could not be applied: {type(exc).__name__}: {exc}"[:300]]
