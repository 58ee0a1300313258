"""A lone surrogate escape in a JSON body is a 422 naming its field, never a 500.

JSON may spell a character outside the Basic Multilingual Plane as two escapes, a surrogate pair
(`"\\ud83d\\ude00"`, as ASCII-only encoders write an emoji); one of them alone (`"\\ud800"`) is
valid JSON but no character. Python decodes it into a string that cannot be encoded to UTF-8, and
PostgreSQL refuses it in jsonb and text: a body reaching a free-form JSON field — a KB patch, a
plan's constraints — failed deep inside the write, a 500 (`invalid input syntax for type json`).
pydantic refused it only in a field typed `str`. Now core.json_body refuses it with the other
checks that parse (after authentication), naming the field, and a pair still reads as its one
character.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from core.tokens import api_token_create
from orchestrator.models import Plan
from tests.workorders import factories as f
from workorders.models import EquipmentKB

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(operator) -> Client:
    _, raw = api_token_create(user=operator, name="surrogates")
    return Client(HTTP_AUTHORIZATION=f"Bearer {raw}")


def send(client: Client, method: str, path: str, body: bytes) -> Any:
    return client.generic(method, path, body, content_type="application/json")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (b'{"patch": {"spec": "rated \\ud800 kW"}}', "patch.spec"),
        (b'{"patch": {"modes": ["ok", {"name": "\\uDFFF"}]}}', "patch.modes.1.name"),
        (b'{"patch": {"\\udbff": 1}}', "patch.\\udbff"),
        (b'{"patch": {"spec": "\\ude00\\ud83d"}}', "patch.spec"),  # a pair the wrong way round
    ],
    ids=["value", "nested", "key", "reversed-pair"],
)
def test_a_lone_surrogate_in_a_kb_patch_is_a_422_naming_it_and_nothing_is_written(api, body, field):
    cell = f.make_cell("P-02")

    response = send(api, "PATCH", f"/api/v1/workorders/kb/{cell.pk}", body)

    assert response.status_code == 422, response.content
    assert response.json()["code"] == "invalid"
    assert response.json()["field"] == field
    assert response.json()["detail"].startswith(f"{field}: text must be Unicode characters")
    assert not EquipmentKB.objects.filter(cell=cell).exclude(data={}).exists()


def test_a_lone_surrogate_in_a_plans_constraints_is_a_422_and_no_plan_is_made(api):
    response = send(api, "POST", "/api/v1/aria/plans", b'{"goal": "check P-02", "constraints": {"note": "\\ud800"}}')

    assert (response.status_code, response.json()["field"]) == (422, "constraints.note"), response.content
    assert not Plan.objects.exists()


def test_an_escaped_backslash_before_u_is_text_not_an_escape(api):
    """`"\\\\ud800"` is a backslash and the letters ud800: ordinary text, stored as sent."""
    cell = f.make_cell("P-02")

    response = send(api, "PATCH", f"/api/v1/workorders/kb/{cell.pk}", b'{"patch": {"spec": "C:\\\\ud800"}}')

    assert response.status_code == 200, response.content
    assert EquipmentKB.objects.get(cell=cell).data["spec"] == "C:\\ud800"


def test_a_surrogate_pair_is_its_one_character(api):
    cell = f.make_cell("P-02")

    response = send(api, "PATCH", f"/api/v1/workorders/kb/{cell.pk}", b'{"patch": {"spec": "ok \\ud83d\\ude00"}}')

    assert response.status_code == 200, response.content
    assert EquipmentKB.objects.get(cell=cell).data["spec"] == "ok \U0001f600"


def test_a_lone_surrogate_is_a_422_before_the_routes_own_checks(approver):
    """As every body check: it answers before the route's scope check and lookups."""
    _, raw = api_token_create(user=approver, name="surrogates")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {raw}")

    response = send(client, "PATCH", "/api/v1/workorders/kb/987654", b'{"patch": {"spec": "\\ud800"}}')

    assert (response.status_code, response.json()["field"]) == (422, "patch.spec"), response.content
