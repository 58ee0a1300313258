"""POST /plans with values no JSON column can hold, or no id can be: a 422 naming the field, never a 500.

The walkthrough's defects: Python's JSON reader takes `NaN`/`Infinity`, which are not JSON, so
`{"constraints": {"x": NaN}}` reached the INSERT and failed on the JSON column (SQLite's JSON_VALID
check, PostgreSQL's jsonb): a 500. A context ref whose id is a string of thousands of digits made
`int()` raise, and so did a superscript digit ("²" passes str.isdigit()): a 500. Nothing is written in either case.
"""

import json

import jsonschema
import pytest

from aria_project.api import api
from core.json_types import ROW_ID_MAX
from core.models import AuditRecord
from orchestrator.models import Plan

pytestmark = pytest.mark.django_db
API = "/api/v1/aria"
GOAL = "read the backlog template:none"


def raw_create(client, user, body: str):
    client.force_login(user)
    return client.post(f"{API}/plans", body, content_type="application/json")


@pytest.mark.parametrize(
    ("body", "field", "says"),
    [
        # refused once the caller is known, as on every /api/ route (core.json_body), naming the number
        (f'{{"goal": "{GOAL}", "constraints": {{"x": NaN}}}}', "constraints.x", "NaN is not a JSON number"),
        (f'{{"goal": "{GOAL}", "constraints": {{"note": [1, Infinity]}}}}', "constraints.note.1", "Infinity is not"),
        (f'{{"goal": "{GOAL}", "constraints": {{"cells": ["P-02"], "why": -1e999}}}}', "constraints.why", "-1e999"),
        (f'{{"goal": "{GOAL}", "context_refs": [{{"type": "cell", "id": "{"1" * 5000}"}}]}}', "context_refs.0", "id"),
        (f'{{"goal": "{GOAL}", "context_refs": ["cell:2", "cell:{"9" * 30}"]}}', "context_refs.1", "id"),
    ],
)
def test_a_value_that_cannot_be_stored_is_a_422_naming_the_field(client, operator, body, field, says):
    audits = AuditRecord.objects.count()
    response = raw_create(client, operator, body)
    assert response.status_code == 422, response.content
    assert response.json()["field"] == field and says in response.json()["detail"], response.json()
    assert not Plan.objects.exists() and AuditRecord.objects.count() == audits


def test_a_long_but_storable_id_and_a_non_numeric_one_are_still_accepted(client, operator):
    # "²" counts as a digit for str.isdigit() but not for int(): it was a 500 too; it is a name, as "abc" is
    refs = f'["work_order:{"9" * 18}", {{"type": "cell", "id": "\u00b2"}}, {{"type": "cell", "id": "abc"}}]'
    response = raw_create(client, operator, f'{{"goal": "{GOAL}", "context_refs": {refs}}}')
    assert response.status_code == 201, response.content
    assert Plan.objects.get().context_refs == [
        {"type": "work_order", "id": int("9" * 18)},
        {"type": "cell", "id": "\u00b2"},
        {"type": "cell", "id": "abc"},
    ]


def _context_ref_schema() -> dict:
    components = api.get_openapi_schema()["components"]["schemas"]
    return components["PlanCreateIn"]["properties"]["context_refs"]["items"]


@pytest.mark.parametrize(
    "ref",
    [
        {"type": "cell", "id": ROW_ID_MAX},
        {"type": "cell", "id": ROW_ID_MAX + 1},
        {"type": "cell", "id": -ROW_ID_MAX - 1},
        {"type": "cell", "id": "1" * 18},
        {"type": "cell", "id": "1" * 19},  # the CI fuzzer's find: the schema took any string, the server 422'd
        {"type": "cell", "id": ""},
        {"type": "cell", "id": "12a"},
        {"type": "cell", "id": "\u00b2"},
        {"type": "cell", "id": True},
        {"type": "cell", "id": -19495228679.0},  # the fuzzer's second find: an integer to JSON Schema
        {"type": "cell", "id": 7.5},
        {"type": "cell", "id": 1e300},
        f"cell:{'9' * 18}",
        f"cell:{'9' * 19}",
        "cell:x",
    ],
)
def test_the_schema_calls_a_context_ref_valid_exactly_when_the_server_accepts_it(client, operator, ref):
    valid_by_schema = jsonschema.Draft202012Validator(_context_ref_schema()).is_valid(ref)
    response = raw_create(client, operator, json.dumps({"goal": GOAL, "context_refs": [ref]}))
    assert response.status_code in (201, 422), response.content
    assert (response.status_code == 201) == valid_by_schema, (ref, response.json())
