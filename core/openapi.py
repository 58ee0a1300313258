"""The OpenAPI schema says what every route may answer, not only its success.

The one NinjaAPI renders errors centrally (authentication, scopes, validation, body limits, domain
errors, throttles, unforeseen failures), so every operation can answer with them: they are added
here to each operation once, with the one JSON error shape, instead of being repeated per route.
"""

from __future__ import annotations

from typing import Any

ERROR_SCHEMA_NAME = "Error"
ERROR_SCHEMA: dict[str, Any] = {
    "title": ERROR_SCHEMA_NAME,
    "type": "object",
    "required": ["detail", "code"],
    "properties": {
        "detail": {"type": "string", "description": "What went wrong, for a person."},
        "code": {"type": "string", "description": "What went wrong, for a program (e.g. `invalid`, `not_found`)."},
        "field": {"type": ["string", "null"], "description": "The input at fault, when there is one."},
        "error_id": {"type": "string", "description": "On a 500: the id the server logged the failure under."},
    },
    "additionalProperties": True,
}

_ANY_OPERATION = {
    401: "Not authenticated (no session and no valid bearer token).",
    403: "Authenticated but not allowed (missing scope, or a session request without its CSRF token).",
    404: "What the request names (in the path, query or body) does not exist or is not yours.",
    422: "A parameter or body field is invalid (text with a NUL character included); `field` names it.",
    429: "Rate limited; `Retry-After` says when to try again.",
    500: "Internal error, logged under `error_id`.",
}
_WITH_BODY = {
    400: "The body is not JSON, nests too deep, names a key twice in one object, or is otherwise malformed.",
    409: "The object's state does not allow this now.",
    413: "The body is larger than the API reads.",
}
BODY_METHODS = ("post", "put", "patch", "delete")


def error_responses_for(method: str, operation: dict[str, Any]) -> dict[int, str]:
    """The status codes (and their meaning) an operation can answer besides its own."""
    codes = dict(_ANY_OPERATION)
    if method in BODY_METHODS:
        codes |= _WITH_BODY
    return dict(sorted(codes.items()))


def _optional_body_is_left_out(operation: dict[str, Any]) -> None:
    """An optional body (`payload: X | None = None`) is sent as an object or not at all: the API
    refuses a `null` body (aria_project.api.JsonObjectParser), so the schema does not offer it."""
    body = operation.get("requestBody")
    if not body or body.get("required"):
        return
    for media in body.get("content", {}).values():
        branches = media.get("schema", {}).get("anyOf")
        if branches and {"type": "null"} in branches:
            rest = [b for b in branches if b != {"type": "null"}]
            media["schema"] = rest[0] if len(rest) == 1 else {"anyOf": rest}


def document_error_responses(schema: dict[str, Any]) -> dict[str, Any]:
    """Add the shared error responses to every operation of an OpenAPI schema (in place)."""
    schema.setdefault("components", {}).setdefault("schemas", {})[ERROR_SCHEMA_NAME] = ERROR_SCHEMA
    content = {"application/json": {"schema": {"$ref": f"#/components/schemas/{ERROR_SCHEMA_NAME}"}}}
    for operations in schema.get("paths", {}).values():
        for method, operation in operations.items():
            _optional_body_is_left_out(operation)
            responses = operation.setdefault("responses", {})
            declared = {str(status) for status in responses}  # ninja keys them by int
            for status, description in error_responses_for(method, operation).items():
                if str(status) not in declared:
                    responses[status] = {"description": description, "content": content}
    return schema
