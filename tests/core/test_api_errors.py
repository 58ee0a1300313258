"""The one NinjaAPI's error shape for what no route decides: bad JSON bodies, unknown paths."""

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


@pytest.mark.parametrize("path", ["/api/v1/no-such-thing", "/api/v1/alarms/1/no-such-action", "/api/v2/", "/api/"])
def test_unknown_api_paths_are_json_404s(client: Client, operator, path: str) -> None:
    client.force_login(operator)
    response = client.get(path, HTTP_ACCEPT="text/html")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert body["code"] == "not_found" and path in body["detail"]


def test_known_paths_still_answer(client: Client, operator) -> None:
    client.force_login(operator)
    assert client.get("/api/v1/me").status_code == 200
    assert client.get("/api/docs").status_code == 302
