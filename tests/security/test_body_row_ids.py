"""Every row id a JSON body names (`session_id`, `plan_id`, `cell_id`, …) is JSON Schema's integer in
the database's id range (core.json_types.BodyRowId), and the schema says so: 7.0 is the id 7, as JSON
Schema counts it; "7", true, 0 and 2**63 are 422s naming the field. CI's fuzzer found POST
/assistant/plans answering 422 "session_id: Input should be a valid integer" to a schema-valid 7.0."""

from __future__ import annotations

from typing import Any

import pytest

from aria_project.api import api
from assistant.models import Draft, Operation, Session
from core.json_types import ROW_ID_MAX

pytestmark = pytest.mark.django_db
API = "/api/v1/assistant"


def _integer_ids(node: Any, components: dict[str, Any], path: str, seen: frozenset[str]) -> list[tuple[str, dict]]:
    """(where, schema) of every integer property named `*_id` in a request body's schema."""
    if isinstance(node, list):
        return [found for item in node for found in _integer_ids(item, components, path, seen)]
    if not isinstance(node, dict):
        return []
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        return [] if name in seen else _integer_ids(components[name], components, path, seen | {name})
    found = []
    for key, value in node.items():
        if key == "properties":
            for prop, sub in value.items():
                for option in sub.get("anyOf", [sub]):
                    if prop.endswith("_id") and option.get("type") == "integer":
                        found.append((f"{path}.{prop}", option))
                found += _integer_ids(sub, components, f"{path}.{prop}", seen)
        elif isinstance(value, dict | list):
            found += _integer_ids(value, components, path, seen)
    return found


def _body_ids() -> list[tuple[str, dict]]:
    schema = api.get_openapi_schema()
    components = schema["components"]["schemas"]
    found = []
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            for media in operation.get("requestBody", {}).get("content", {}).values():
                found += _integer_ids(media["schema"], components, f"{method.upper()} {path}", frozenset())
    return found


# The samples ingest reads its body itself (sentinel.ingest); its signal ids must name existing signals,
# a rule the fuzzer is told the schema cannot state (tests/security/test_schemathesis.py).
_OWN_READERS = {"POST /api/v1/signals/samples.samples.signal_id"}


def test_the_schema_bounds_every_id_a_body_names():
    ids = {where: option for where, option in _body_ids() if where not in _OWN_READERS}
    assert "POST /api/v1/assistant/plans.session_id" in ids and len(ids) >= 6
    unbounded = [
        where for where, option in ids.items() if (option.get("minimum"), option.get("maximum")) != (1, ROW_ID_MAX)
    ]
    assert unbounded == []


def _session(owner) -> Session:
    return Session.objects.create(owner=owner, title="fuzz")


def test_an_integral_float_session_id_plans_in_that_session(client, operator):
    client.force_login(operator)
    session = _session(operator)
    body = {"intent": "create_skill", "slots": {"name": "tidy"}, "session_id": float(session.pk)}
    response = client.post(f"{API}/plans", body, content_type="application/json")
    assert response.status_code == 201, response.content
    assert response.json()["session_id"] == session.pk
    assert Operation.objects.get().session_id == session.pk


def test_an_integral_float_plan_id_executes_the_plan(client, operator):
    client.force_login(operator)
    planned = client.post(f"{API}/plans", {"intent": "create_skill", "slots": {"name": "tidy"}}, "application/json")
    body = {"plan_id": float(planned.json()["id"]), "confirm": True}
    done = client.post(f"{API}/plans/execute", body, content_type="application/json")
    assert done.status_code == 200, done.content
    assert done.json()["status"] == "executed"


def test_an_integral_float_session_id_files_the_draft_in_that_session(client, operator):
    client.force_login(operator)
    session = _session(operator)
    body = {"type": "skill", "name": "tidy", "spec": {}, "session_id": float(session.pk)}
    response = client.post(f"{API}/drafts", body, content_type="application/json")
    assert response.status_code == 201, response.content
    assert Draft.objects.get().session_id == session.pk


def test_an_integral_float_session_id_continues_that_chat(client, operator):
    client.force_login(operator)
    session = _session(operator)
    body = {"messages": [{"role": "user", "content": "hi"}], "session_id": float(session.pk)}
    response = client.post("/api/v1/agent/chat", body, content_type="application/json")
    assert response.status_code == 200, response.content
    assert response.json()["session_id"] == session.pk


@pytest.mark.parametrize("bad", ["SESSION", True, 0, -1, 2.5, ROW_ID_MAX + 1])
@pytest.mark.parametrize(
    ("url", "body"),
    [
        (f"{API}/plans", {"intent": "create_skill", "slots": {"name": "tidy"}}),
        (f"{API}/drafts", {"type": "skill", "name": "tidy", "spec": {}}),
        ("/api/v1/agent/chat", {"messages": [{"role": "user", "content": "hi"}]}),
    ],
)
def test_anything_but_a_row_id_is_a_422_naming_session_id(client, operator, url, body, bad):
    """A digit string and true are not ids in JSON (the chat took both); 0 was taken as "no session"."""
    client.force_login(operator)
    session = _session(operator)
    value = str(session.pk) if bad == "SESSION" else bad
    response = client.post(url, {**body, "session_id": value}, content_type="application/json")
    assert response.status_code == 422, response.content
    assert response.json()["field"] == "session_id"
    assert not Operation.objects.exists() and not Draft.objects.exists()
