"""Bad input never 500s: oversized and over-deep bodies, out-of-range pages, missing credentials,
missing CSRF tokens and unforeseen failures all answer 4xx/5xx JSON, and a refused body writes
nothing. Every request goes through the real middleware stack and the one NinjaAPI."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from django.test import AsyncClient, Client
from pydantic import BaseModel

from aria_project.api import api
from assistant.models import Session
from core.tokens import api_token_create
from sentinel.models import SignalSample
from tests.sentinel.factories import make_signal

pytestmark = pytest.mark.django_db

MB = 1024 * 1024


@pytest.fixture
def token_client(operator) -> Client:
    _, raw = api_token_create(user=operator, name="bad-input")
    return Client(enforce_csrf_checks=True, HTTP_AUTHORIZATION=f"Bearer {raw}")


def ingest_body(signal_id: int, **extra: Any) -> dict[str, Any]:
    return {"samples": [{"signal_id": signal_id, "time": "2026-01-01T00:00:00Z", "value": 1.5}], **extra}


def post_json(client: Client, path: str, body: bytes | str) -> Any:
    return client.generic("POST", path, body, content_type="application/json")


# --- body size -----------------------------------------------------------------------------------


def test_a_25_mb_body_is_413_json_and_stores_nothing(token_client: Client) -> None:
    signal = make_signal()
    body = json.dumps(ingest_body(signal.pk, padding="x" * (25 * MB)))

    response = post_json(token_client, "/api/v1/signals/samples", body)

    assert response.status_code == 413
    assert response["Content-Type"].startswith("application/json")
    assert response.json() == {
        "detail": f"The request body is larger than {2 * MB} bytes.",
        "code": "payload_too_large",
        "limit": 2 * MB,
    }
    assert SignalSample.objects.count() == 0


def test_a_body_under_the_cap_is_read(token_client: Client) -> None:
    signal = make_signal()
    body = json.dumps(ingest_body(signal.pk, padding="x" * MB))

    response = post_json(token_client, "/api/v1/signals/samples", body)

    assert response.status_code == 200, response.content
    assert response.json()["accepted"] == 1
    assert SignalSample.objects.filter(signal=signal).count() == 1


def test_the_cap_is_a_setting(token_client: Client, settings) -> None:
    settings.ARIA_API_MAX_BODY_BYTES = 1000
    response = post_json(token_client, "/api/v1/assistant/sessions", json.dumps({"title": "t" * 2000}))
    assert (response.status_code, response.json()["code"]) == (413, "payload_too_large")
    assert not Session.objects.exists()


# --- nesting depth -------------------------------------------------------------------------------


def test_a_100k_deep_body_is_400_too_deep_and_stores_nothing(token_client: Client) -> None:
    make_signal()
    deep = "[" * 100_000 + "]" * 100_000

    response = post_json(token_client, "/api/v1/signals/samples", '{"samples": ' + deep + "}")

    assert response.status_code == 400
    assert response.json() == {"detail": "The JSON body nests deeper than 64 levels.", "code": "too_deep", "limit": 64}
    assert SignalSample.objects.count() == 0


def test_depth_is_refused_on_schema_routes_too(token_client: Client) -> None:
    deep = '{"title": "x", "extra": ' + '{"a": ' * 65 + "1" + "}" * 65 + "}"
    response = post_json(token_client, "/api/v1/assistant/sessions", deep)
    assert (response.status_code, response.json()["code"]) == (400, "too_deep")
    assert not Session.objects.exists()


def test_brackets_inside_strings_are_not_nesting(token_client: Client) -> None:
    signal = make_signal()
    body = json.dumps(ingest_body(signal.pk, note="[" * 500 + '\\"{' * 100))
    response = post_json(token_client, "/api/v1/signals/samples", body)
    assert response.status_code == 200, response.content


def test_a_body_that_is_not_an_object_is_422_naming_the_body(token_client: Client) -> None:
    for raw in ("[null, null]", "7", '"title"', "null"):
        response = post_json(token_client, "/api/v1/assistant/sessions", raw)
        assert response.status_code == 422, raw
        assert response.json() == {
            "detail": "The request body must be a JSON object.",
            "code": "invalid",
            "field": "body",
        }
    assert not Session.objects.exists()


def test_nul_characters_are_refused_at_the_door(token_client: Client) -> None:
    # PostgreSQL stores NUL in neither text nor jsonb: refused before any write, on every database.
    response = post_json(token_client, "/api/v1/assistant/sessions", '{"title": "a\\u0000b"}')
    assert response.status_code == 422
    assert response.json() == {
        "detail": "title: text must not contain NUL characters (\\u0000).",
        "code": "invalid",
        "field": "title",
    }
    assert not Session.objects.exists()
    # an escaped backslash followed by "u0000" is plain text
    response = post_json(token_client, "/api/v1/assistant/sessions", '{"title": "a\\\\u0000b"}')
    assert response.status_code == 201
    assert Session.objects.get().title == "a\\u0000b"

    signal = make_signal()
    body = json.dumps({"samples": [{"signal_id": signal.pk, "time": "2026-01-01T00:00:00Z\x00", "value": 1}]})
    response = post_json(token_client, "/api/v1/signals/samples", body)
    assert (response.status_code, response.json()["field"]) == (422, "samples.0.time")
    assert SignalSample.objects.count() == 0

    response = token_client.get("/api/v1/alarms?cell=P%0002")
    assert (response.status_code, response.json()["field"]) == (422, "cell")
    response = token_client.get("/api/v1/assistant/prompts/a%00b/versions")
    assert (response.status_code, response.json()["field"]) == (422, "path")


# --- pagination ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "field"),
    [
        ("/api/v1/workorders?offset=" + "9" * 30, "offset"),
        ("/api/v1/workorders?offset=100001", "offset"),
        ("/api/v1/workorders?offset=-1", "offset"),
        ("/api/v1/workorders?limit=-1", "limit"),
        ("/api/v1/workorders?limit=100000", "limit"),
        ("/api/v1/workorders/failures?limit=-1", "limit"),
        ("/api/v1/alarms?limit=-1", "limit"),
        ("/api/v1/aria/plans?limit=0", "limit"),
        ("/api/v1/aria/plans?limit=" + "9" * 30, "limit"),
        ("/api/v1/aria/plans?status=nonsense", "status"),
        ("/api/v1/assistant/drafts?status=nonsense", "status"),
    ],
)
def test_out_of_range_pages_are_422_naming_the_field(token_client: Client, path: str, field: str) -> None:
    response = token_client.get(path)
    assert response.status_code == 422, response.content
    body = response.json()
    assert (body["code"], body["field"]) == ("invalid", field)
    assert body["detail"].startswith(f"{field}: ")


def test_pages_within_bounds_answer(token_client: Client) -> None:
    assert token_client.get("/api/v1/workorders?offset=100000&limit=200").json()["items"] == []
    assert token_client.get("/api/v1/aria/plans?limit=200&status=draft").json() == []


# --- authentication and CSRF ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/api/v1/assistant/sessions"),
        ("PATCH", "/api/v1/assistant/sessions/1"),
        ("DELETE", "/api/v1/assistant/attachments/1"),
        ("PUT", "/api/v1/assistant/prompts/p/aliases/production"),
        ("POST", "/api/v1/signals/samples"),
    ],
)
def test_unauthenticated_unsafe_requests_are_401_json(method: str, path: str) -> None:
    browser = Client(enforce_csrf_checks=True)  # no cookies, no token, no CSRF token: an anonymous caller
    response = browser.generic(method, path, '{"title": "x"}', content_type="application/json")
    assert response.status_code == 401, response.content
    assert response.json() == {"detail": "Authentication required.", "code": "not_authenticated"}

    response = browser.generic(method, path, "{}", content_type="application/json", HTTP_AUTHORIZATION="Bearer aria_x")
    assert (response.status_code, response.json()["code"]) == (401, "not_authenticated")
    assert not Session.objects.exists()


def test_a_session_post_without_csrf_is_403_csrf_failed_and_writes_nothing(operator) -> None:
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(operator)

    response = browser.post("/api/v1/assistant/sessions", {"title": "x"}, content_type="application/json")

    assert response.status_code == 403
    assert response.json()["code"] == "csrf_failed"
    assert not Session.objects.exists()

    browser.get("/login/")  # sets the csrftoken cookie, as the pages do
    csrf = browser.cookies["csrftoken"].value
    response = browser.post(
        "/api/v1/assistant/sessions", {"title": "x"}, content_type="application/json", HTTP_X_CSRFTOKEN=csrf
    )
    assert response.status_code == 201
    assert Session.objects.filter(owner=operator, title="x").count() == 1


# --- unforeseen failures -------------------------------------------------------------------------


def test_an_api_500_is_json_with_an_error_id_even_in_debug(token_client: Client, settings, monkeypatch, caplog) -> None:
    settings.DEBUG = True

    def broken(user: Any) -> set[str]:
        raise RuntimeError("scope store exploded")

    monkeypatch.setattr("core.api.user_scopes", broken)  # a fault inside a real route
    with caplog.at_level(logging.ERROR, logger="aria.api"):
        response = token_client.get("/api/v1/me", HTTP_ACCEPT="text/html")

    assert response.status_code == 500
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert body == {"detail": "Internal error.", "code": "server_error", "error_id": body["error_id"]}
    assert "scope store exploded" not in response.content.decode()
    [record] = [r for r in caplog.records if r.name == "aria.api"]
    assert body["error_id"] in record.getMessage()
    assert record.exc_info and "scope store exploded" in str(record.exc_info[1])


# --- the documented schema matches the server -----------------------------------------------------


def _body_models() -> dict[str, type[BaseModel]]:
    """operationId → the pydantic model the view validates its JSON body with."""
    from ninja.params.models import BodyModel

    models = {}
    for _, router in api._routers:
        for path_view in router.path_operations.values():
            for operation in path_view.operations:
                for param_model in operation.models:
                    if issubclass(param_model, BodyModel):
                        [field] = param_model.model_fields.values()
                        annotation = field.annotation
                        model = next(
                            (a for a in (annotation, *getattr(annotation, "__args__", ())) if isinstance(a, type)),
                            None,
                        )
                        if model is not None and issubclass(model, BaseModel):
                            models[api.get_openapi_operation_id(operation)] = model
    return models


def test_every_request_body_in_the_openapi_schema_is_the_model_the_server_validates_with() -> None:
    schema = api.get_openapi_schema()
    components = schema["components"]["schemas"]
    models = _body_models()
    checked = 0
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            model = models.get(operation["operationId"])
            if model is None:
                continue
            ref = operation["requestBody"]["content"]["application/json"]["schema"]
            ref = ref.get("$ref") or next(r["$ref"] for r in ref.get("anyOf", []) if "$ref" in r)
            name = ref.rsplit("/", 1)[-1]
            assert name == model.__name__, f"{method.upper()} {path}"
            documented = set(components[name].get("properties", {}))
            assert documented == set(model.model_fields), f"{method.upper()} {path} documents {name} wrongly"
            checked += 1
    assert checked >= 20
    names = [m.__name__ for m in {*models.values()}]
    assert len(names) == len(set(names)), "two body models share a schema name"


def test_the_session_message_and_coordinator_turn_bodies_are_told_apart() -> None:
    schema = api.get_openapi_schema()
    components = schema["components"]["schemas"]

    def body_properties(path: str) -> set[str]:
        ref = schema["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        return set(components[ref.rsplit("/", 1)[-1]]["properties"])

    assert body_properties("/api/v1/assistant/sessions/{session_id}/messages") == {"content", "mode"}
    assert body_properties("/api/v1/aria/coordinator/turns") >= {"message", "conversation"}


def test_every_operation_documents_its_error_answers() -> None:
    schema = api.get_openapi_schema()
    assert schema["components"]["schemas"]["Error"]["required"] == ["detail", "code"]
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            codes = {str(code) for code in operation["responses"]}
            assert {"401", "403", "422", "500"} <= codes, f"{method} {path}"
            if method in ("post", "put", "patch", "delete"):
                assert {"400", "413"} <= codes, f"{method} {path}"


# --- the same limits on the ASGI path (daphne in production) ---------------------------------------


async def test_the_body_limits_hold_under_asgi() -> None:
    # Refused in the middleware's async path, before authentication or any database read.
    client = AsyncClient()
    response = await client.post("/api/v1/signals/samples", "x" * (3 * MB), content_type="application/json")
    assert (response.status_code, response.json()["code"]) == (413, "payload_too_large")
    deep = "[" * 100_000 + "]" * 100_000
    response = await client.post("/api/v1/signals/samples", deep, content_type="application/json")
    assert (response.status_code, response.json()["code"]) == (400, "too_deep")
