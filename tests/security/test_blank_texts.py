"""A text the server strips and refuses when blank says so in the schema (core.json_types.NOT_BLANK):
what the schema calls valid has a character Python's str.strip() keeps. CI's fuzzer (40 examples)
sent POST /aria/plans the goal "\\x1e", valid to a schema of `minLength: 1` and refused with 422
"A plan needs a goal." — U+001C..U+001F and U+0085 are whitespace to Python, not to `\\s` in JSON Schema."""

from __future__ import annotations

import re
import sys

import pytest

from aria_project.api import api
from assistant.models import Session

pytestmark = pytest.mark.django_db

WHITESPACE = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]
STRIPPED_TEXTS = [
    ("POST", "/api/v1/aria/plans", "PlanCreateIn", "goal"),
    ("POST", "/api/v1/aria/coordinator/turns", "TurnIn", "message"),
    ("POST", "/api/v1/assistant/sessions/{session_id}/messages", "SessionTurnIn", "content"),
    ("POST", "/api/v1/workorders", "WorkOrderRaiseIn", "title"),
]


def _property(path: str, method: str, name: str, field: str) -> dict:
    schema = api.get_openapi_schema()
    body = schema["paths"][path][method.lower()]["requestBody"]["content"]["application/json"]["schema"]
    assert body["$ref"].endswith(f"/{name}")
    return schema["components"]["schemas"][name]["properties"][field]


@pytest.mark.parametrize(("method", "path", "name", "field"), STRIPPED_TEXTS)
def test_the_schema_calls_a_text_of_whitespace_invalid(method, path, name, field):
    pattern = re.compile(_property(path, method, name, field)["pattern"])
    assert [repr(c) for c in WHITESPACE if pattern.search(c * 3)] == []
    assert pattern.search("\x1e\x85 a \u3000") and pattern.search("\ufeff")  # str.strip() keeps U+FEFF


@pytest.mark.parametrize("blank", ["\x1e", "\x1c\x1d\x1f", " \x85\u2028 "])
def test_a_blank_goal_is_refused_naming_it(client, operator, blank):
    client.force_login(operator)
    response = client.post("/api/v1/aria/plans", {"goal": blank}, content_type="application/json")
    assert response.status_code == 422 and response.json()["field"] == "goal"


@pytest.mark.parametrize("blank", ["\x1e", " \x85\u2028 "])
def test_a_blank_session_message_is_refused_naming_it(client, operator, blank):
    client.force_login(operator)
    session = Session.objects.create(owner=operator, title="blank")
    url = f"/api/v1/assistant/sessions/{session.pk}/messages"
    response = client.post(url, {"content": blank}, content_type="application/json")
    assert response.status_code == 422 and response.json()["field"] == "content"
