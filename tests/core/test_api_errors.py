"""The one NinjaAPI's error shape for what no route decides: bad JSON bodies, unknown paths, body limits."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from hypothesis import given
from hypothesis import strategies as st

from core.request_limits import json_nesting_depth

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


@pytest.mark.parametrize("method", ["post", "put", "patch", "delete"])
def test_an_unsafe_request_to_an_unknown_api_path_is_a_json_404_not_a_csrf_page(method: str) -> None:
    # A bearer-token client (no CSRF token) writing to a path that does not exist.
    client = Client(enforce_csrf_checks=True)
    response = getattr(client, method)("/api/v1/plans", data="{}", content_type="application/json")
    assert response.status_code == 404, response.content[:200]
    assert response["Content-Type"].startswith("application/json")
    assert response.json()["code"] == "not_found"


def test_known_paths_still_answer(client: Client, operator) -> None:
    client.force_login(operator)
    assert client.get("/api/v1/me").status_code == 200
    assert client.get("/api/docs").status_code == 302


@pytest.mark.parametrize(
    ("body", "depth"),
    [
        (b"1", 0),
        (b'"[[["', 0),
        (b"[]", 1),
        (b'{"a": [1, {"b": "]]]{{"}]}', 3),
        (b'["\\"", [[]]]', 3),  # an escaped backslash ends the string before the brackets
        (b'["\\"[[["]', 1),  # an escaped quote keeps the brackets inside the string
        (b"[" * 100_000 + b"]" * 100_000, 100_000),
        (b"]]][", 0),  # malformed: a best-effort figure, never negative
        (b'[{"k": "[[", "v": "]]"}, [[1]]]', 3),  # no backslash at all: the fast split
        (b'[["[[[[[[', 2),  # an unterminated string: its brackets are inside it, for the parser too
    ],
)
def test_json_nesting_depth_is_measured_without_parsing(body: bytes, depth: int) -> None:
    assert json_nesting_depth(body) == depth


def _depth(value: object) -> int:
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    return 0


_TEXT = st.text(alphabet='[]{}"\\ab', max_size=6)
_JSON = st.recursive(
    st.none() | st.integers() | _TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=20,
)


@given(_JSON)
def test_json_nesting_depth_matches_the_parsed_depth(value: object) -> None:
    # Strings full of brackets, quotes and backslashes: both the escape-aware and the split path.
    assert json_nesting_depth(json.dumps(value).encode()) == _depth(value)


def test_a_multipart_upload_has_its_own_larger_cap(client: Client, operator, settings) -> None:
    client.force_login(operator)
    settings.ARIA_API_MAX_UPLOAD_BYTES = 10_000
    big = SimpleUploadedFile("big.txt", b"x" * 20_000, content_type="text/plain")
    response = client.post("/api/v1/assistant/sessions/1/attachments/upload", {"file": big})
    assert (response.status_code, response.json()["code"]) == (413, "payload_too_large")
    assert response.json()["limit"] == 10_000


def test_a_content_length_that_is_not_a_number_is_400(client: Client, operator) -> None:
    client.force_login(operator)
    response = client.generic(
        "POST", "/api/v1/assistant/sessions", b"{}", content_type="application/json", CONTENT_LENGTH="many"
    )
    assert response.status_code == 400
    assert response.json()["field"] == "Content-Length"


def test_pages_outside_the_api_keep_djangos_behaviour(client: Client) -> None:
    # The limits guard /api/ only: the login form still reads its own body.
    response = client.post("/login/", {"username": "x" * 10, "password": "y"})
    assert response.status_code == 200


def test_a_request_with_no_body_names_the_bodys_required_fields(client: Client, operator) -> None:
    client.force_login(operator)
    # Any route with a required body: the fields are checked before the order is looked up.
    response = client.generic("POST", "/api/v1/workorders/1/complete", b"", content_type="application/json")
    assert response.status_code == 422, response.content
    body = response.json()
    assert (body["field"], body["detail"]) == ("work_done", "work_done: Field required")
    missing = {e["loc"][-1] for e in body["errors"]}
    assert missing == {"work_done", "problem_code", "cause_code", "remedy_code", "rca_verdict", "labour_hours"}
    # A route whose body is optional still runs without one.
    assert client.generic("POST", "/api/v1/workorders/999999/start", b"").status_code == 404


def test_no_body_where_every_field_has_a_default_names_the_body(client: Client, operator) -> None:
    """PATCH /aria/plans/{id} and the like take a body whose fields all have defaults: no body at all
    was a 422 naming nothing ("Field required", field null). Now it names `body`; `{}` still works."""
    client.force_login(operator)
    response = client.generic("POST", "/api/v1/assistant/sessions", b"", content_type="application/json")
    assert response.status_code == 422, response.content
    body = response.json()
    assert body["field"] == "body" and body["detail"] == "body: send a JSON object ({} for the defaults)."
    assert client.post("/api/v1/assistant/sessions", {}, content_type="application/json").status_code == 201
