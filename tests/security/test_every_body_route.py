"""Every API route that takes a body gets every body check, found by walking the API's own URLs.

The hand-picked routes of test_json_checks_after_auth show each check works; this walks every
operation the one NinjaAPI serves (its URL patterns, so a route left out of the OpenAPI schema is
walked too) with an unsafe method, and sends each hostile body both as an anonymous caller (401,
nothing parsed) and as a signed-in admin (every scope): a repeated key, NaN, Infinity, 1e999, a NUL or
a lone surrogate escape inside a string, deep nesting, invalid UTF-8 and a non-object top level each get a 4xx JSON answer
naming the field or the body, never a 500 (a lone surrogate escape too), and nothing is written. A new route, whatever it
reads, is walked too: one that skipped the checks (its own view reading `request.body`, a decorator
bypassing the parser) fails here.

Every page (a Django view outside /api/ and the admin) is walked too: anonymous and signed in, a
hostile JSON body is never parsed there and never a 500 — a JSON body belongs to an API route.

The ids in the paths name no row, so a check that ran after the route's own lookup would answer 404
instead and fail the test: the checks come first. A path parameter of a pattern the default does not
match gets its own value in PATH_VALUES (a 422 naming the parameter says which).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client
from django.urls import get_resolver
from ninja.operation import PathView
from ninja.params.models import BodyModel, FileModel, FormModel, PathModel

from aria_project.api import api
from core.models import AuditRecord
from core.request_limits import BODY_METHODS
from core.tokens import api_token_create

pytestmark = pytest.mark.django_db

# Values for path parameters: an id no row has, a name no row has.
DEFAULT_INT = "987654"
DEFAULT_STR = "nosuchname"
PATH_VALUES: dict[str, str] = {}

FIELD = "zz"
HOSTILE: dict[str, tuple[bytes, int, str, str]] = {
    # name: (body, status, code, field)
    "repeat": (b'{"zz": 1, "zz": 2}', 400, "duplicate_key", FIELD),
    "nested_repeat": (b'{"a": [{"b": 1}, {"b": 2, "b": 3}]}', 400, "duplicate_key", "a.1.b"),
    "nan": (b'{"zz": NaN}', 422, "invalid", FIELD),
    "infinity": (b'{"zz": [1, -Infinity]}', 422, "invalid", "zz.1"),
    "1e999": (b'{"zz": 1e999}', 422, "invalid", FIELD),
    "nul": (b'{"zz": "a\\u0000b"}', 422, "invalid", FIELD),
    "nul_key": (b'{"a": {"k\\u0000": 1}}', 422, "invalid", "a.k\\u0000"),
    "lone_surrogate": (b'{"zz": "a\\ud800b"}', 422, "invalid", FIELD),
    "lone_surrogate_key": (b'{"a": {"\\uDC00": 1}}', 422, "invalid", "a.\\udc00"),
    "deep": (b'{"zz": ' + b"[" * 200 + b"]" * 200 + b"}", 400, "too_deep", ""),
    "bad_utf8": (b'{"zz": "\xff\xfe"}', 400, "invalid_json", ""),
    "utf16": ('{"zz": 1}'.encode("utf-16"), 400, "invalid_json", ""),
}


def _path_view(callback: Any) -> PathView | None:
    for cell in getattr(callback, "__closure__", None) or ():
        if isinstance(cell.cell_contents, PathView):
            return cell.cell_contents
    return None


def _fields(model: type) -> Iterator[tuple[str, Any]]:
    """A path model's fields, its own or those of the one schema it wraps (`Path[Model]`)."""
    for name, field in model.model_fields.items():
        inner = getattr(field.annotation, "model_fields", None)
        yield from inner.items() if inner else [(name, field)]


def body_routes() -> Iterator[tuple[str, str, str]]:
    """(method, concrete path, what it reads: "json", "files" or "none") of every unsafe operation
    the API serves."""
    patterns, _, _ = api.urls
    for pattern in patterns:
        path_view = _path_view(pattern.callback)
        if path_view is None:
            continue
        route = str(pattern.pattern)
        for operation in path_view.operations:
            ints = {
                name
                for model in operation.models
                if issubclass(model, PathModel)
                for name, field in _fields(model)
                if field.annotation is int or "int" in str(field.annotation).lower()
            }

            def value(match: re.Match[str], ints: set[str] = ints) -> str:
                name = match.group(1)
                return PATH_VALUES.get(name, DEFAULT_INT if name in ints else DEFAULT_STR)

            path = "/api/v1/" + re.sub(r"<(?:\w+:)?(\w+)>", value, route)
            takes_body = any(issubclass(model, BodyModel) for model in operation.models)
            takes_files = any(issubclass(model, (FileModel, FormModel)) for model in operation.models)
            for method in operation.methods:
                if method in BODY_METHODS:
                    yield method, path, "files" if takes_files else "json" if takes_body else "none"


ROUTES = sorted(set(body_routes()))


def test_the_walk_finds_the_routes_it_should() -> None:
    """A guard on the walk itself: it sees routes of every app, with and without a body parameter."""
    paths = {(method, path) for method, path, _ in ROUTES}
    assert ("POST", "/api/v1/signals/samples") in paths
    assert ("POST", f"/api/v1/workorders/{DEFAULT_INT}/transition") in paths
    assert ("POST", f"/api/v1/aria/plans/{DEFAULT_INT}/steps/{DEFAULT_INT}/stop") in paths
    assert ("PATCH", "/api/v1/assistant/config") in paths
    assert {reads for *_, reads in ROUTES} == {"json", "files", "none"}
    assert len(ROUTES) >= 50


@pytest.fixture
def admin_client(admin_user) -> Client:
    _, raw = api_token_create(user=admin_user, name="every-body-route")
    return Client(HTTP_AUTHORIZATION=f"Bearer {raw}")


def _send(client: Client, method: str, path: str, body: bytes) -> Any:
    return client.generic(method, path, body, content_type="application/json")


def _ids(route: tuple[str, str, bool]) -> str:
    return f"{route[0]} {route[1]}"


@pytest.mark.parametrize("route", ROUTES, ids=[_ids(r) for r in ROUTES])
def test_every_hostile_body_is_a_named_4xx_and_writes_nothing(admin_client: Client, route) -> None:
    method, path, reads = route
    audit_before = AuditRecord.objects.count()
    for name, (body, status, code, field) in HOSTILE.items():
        response = _send(admin_client, method, path, body)

        assert response["Content-Type"].startswith("application/json"), (name, response.content)
        answer = response.json()
        if reads == "files" and code in ("duplicate_key", "invalid"):
            # An upload reads a multipart form, never a JSON body: the file it lacks is named.
            assert (response.status_code, answer.get("code")) == (422, "invalid"), (name, answer)
            assert str(answer.get("field")).startswith("file"), (name, answer)
            continue
        assert (response.status_code, answer.get("code")) == (status, code), (name, answer)
        if field:
            assert answer.get("field") == field, (name, answer)
            assert answer["detail"].startswith(f"{field}: "), (name, answer)
    if reads == "json":  # a body the route parses must be an object
        for top in (b"[1, 2]", b"7", b'"text"', b"null", b"true"):
            response = _send(admin_client, method, path, top)
            assert response.status_code in (400, 415, 422), (top, response.content)
            assert response.json().get("field") == "body", (top, response.json())
    assert AuditRecord.objects.count() == audit_before


@pytest.mark.parametrize("route", ROUTES, ids=[_ids(r) for r in ROUTES])
def test_every_body_route_is_401_for_an_anonymous_caller(route) -> None:
    method, path, _ = route
    for body, *_ in HOSTILE.values():
        if body.startswith(b'{"zz": ['):  # the door's own refusals (depth) come before authentication
            continue
        response = _send(Client(), method, path, body)
        if response.status_code == 400:  # the door: invalid UTF-8, too deep — no parse, no walk
            assert response.json()["code"] in ("invalid_json", "too_deep"), response.content
            continue
        assert (response.status_code, response.json()["code"]) == (401, "not_authenticated"), (body, response.content)


# --- the pages: routes outside /api/ never read a JSON body -------------------------------------------

PAGE_BODY = b'{"zz": 1, "zz": [NaN, "\\u0000", "\\ud800"]}'


def _page_routes(patterns: list[Any], prefix: str = "") -> Iterator[str]:
    for pattern in patterns:
        route = prefix + str(pattern.pattern)
        if route.startswith(("api/", "^api/", "admin/")):
            continue  # the API is walked above; the admin takes Django forms
        if hasattr(pattern, "url_patterns"):
            yield from _page_routes(pattern.url_patterns, route)
        else:
            yield "/" + re.sub(r"<(?:\w+:)?\w+>", DEFAULT_INT, route).lstrip("^").rstrip("$")


PAGES = sorted(set(_page_routes(get_resolver().url_patterns)))


def test_the_page_walk_finds_the_pages() -> None:
    assert {"/", "/login/", "/metrics", "/events/"} <= set(PAGES)


@pytest.mark.parametrize("path", PAGES)
def test_no_page_reads_a_json_body(parsed, admin_user, path) -> None:
    """The body checks live where the API reads a body (core.json_body). A page (a Django view
    outside /api/) that parsed a JSON body itself would get none of them: one that needs a JSON
    body belongs in an app's api.py, where the walk above checks it."""
    signed_in = Client()
    signed_in.force_login(admin_user)
    audit_before = AuditRecord.objects.count()
    for client in (Client(), signed_in):
        response = client.generic("POST", path, PAGE_BODY, content_type="application/json")

        assert response.status_code < 500, (path, response.status_code)
    assert PAGE_BODY not in parsed
    assert AuditRecord.objects.count() == audit_before
