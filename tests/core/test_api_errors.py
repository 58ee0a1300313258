"""The one NinjaAPI's error shape for what no route decides: bad JSON bodies."""

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def test_a_body_that_is_not_json_is_400_invalid_json(client: Client, operator) -> None:
    client.force_login(operator)
    for raw in (b"{not json", b"\xff\xfe"):
        # Any route with a body schema; the CSRF check passes for force_login's test client.
        response = client.post("/api/v1/alarms/1/acknowledge", data=raw, content_type="application/json")
        assert response.status_code == 400, response.content
        assert response.json() == {"detail": "The request body is not valid JSON.", "code": "invalid_json"}


def test_the_hand_parsed_ingest_body_answers_the_same(client: Client, operator) -> None:
    client.force_login(operator)
    response = client.post("/api/v1/signals/samples", data=b"{not json", content_type="application/json")
    assert response.status_code == 400
    assert response.json() == {"detail": "The request body is not valid JSON.", "code": "invalid_json"}
