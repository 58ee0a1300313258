"""A request body judged by the OpenAPI schema the API serves, as a client checking it would: the
body's schema (its `$ref`) beside the components it points into, under JSON Schema 2020-12. Tests
compare this verdict with the server's answer, body by body."""

from __future__ import annotations

from typing import Any

import jsonschema

from aria_project.api import api


def body_schema(path: str, method: str = "post") -> dict[str, Any]:
    """The JSON body schema of `method path` (e.g. "/api/v1/workorders/{work_order_id}/hold")."""
    schema = api.get_openapi_schema()
    body = schema["paths"][path][method]["requestBody"]["content"]["application/json"]["schema"]
    return {**body, "components": schema["components"]}


def schema_accepts(path: str, body: Any, method: str = "post") -> bool:
    return jsonschema.Draft202012Validator(body_schema(path, method)).is_valid(body)
