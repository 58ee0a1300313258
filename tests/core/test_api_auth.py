"""API access: who may call (session with CSRF, bearer token), with which scope, on whose objects.

Scope and CSRF checks are exercised on a small API in this module built exactly like the real
one (same `api_auth`, same domain-error rendering), so the tests do not depend on any app.
"""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.http import HttpRequest, HttpResponse
from django.test import Client
from django.urls import path
from ninja import NinjaAPI

from aria_project.urls import urlpatterns as aria_urlpatterns
from core.access import APPROVER, OPERATOR, get_owned_or_404, require_scopes
from core.auth import api_auth
from core.errors import DomainError
from core.models import ApiToken, AuditRecord, ServiceAccount
from core.tokens import api_token_create, api_token_revoke

probe_api = NinjaAPI(title="probe", auth=api_auth, urls_namespace="probe_api", docs_url=None)


@probe_api.exception_handler(DomainError)
def _domain_error(request: HttpRequest, exc: DomainError) -> HttpResponse:
    return probe_api.create_response(request, exc.as_body(), status=exc.status_code)


@probe_api.post("/notes")
def create_note(request: HttpRequest) -> dict:
    require_scopes(request.user, OPERATOR)
    return {"ok": True, "by": request.user.get_username()}


@probe_api.post("/approvals")
def approve(request: HttpRequest) -> dict:
    require_scopes(request.user, APPROVER)
    return {"ok": True}


@probe_api.get("/tokens/{token_id}")
def get_token(request: HttpRequest, token_id: int) -> dict:
    token = get_owned_or_404(ApiToken.objects.all(), request.user, owner_field="user", pk=token_id)
    return {"id": token.pk, "name": token.name}


urlpatterns = [path("probe/", probe_api.urls), *aria_urlpatterns]
URLS = pytest.mark.urls(__name__)


def bearer(raw: str) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {raw}"}


# --- authentication ---------------------------------------------------------------------------


@pytest.mark.django_db
def test_api_without_auth_is_401_json_with_message(client: Client) -> None:
    response = client.get("/api/v1/me")
    assert response.status_code == 401
    assert response["Content-Type"].startswith("application/json")
    assert response.json()["detail"] == "Authentication required."


@pytest.mark.django_db
def test_bearer_token_works_until_revoked(client: Client, operator) -> None:
    token, raw = api_token_create(user=operator, name="ci")
    assert raw.startswith("aria_") and token.key_hash != raw and raw not in token.key_prefix + token.key_hash

    response = client.get("/api/v1/me", **bearer(raw))
    assert response.status_code == 200
    assert response.json()["auth"] == "token"
    token.refresh_from_db()
    assert token.last_used_at is not None

    assert api_token_revoke(token=token) is True
    assert api_token_revoke(token=token) is False  # already revoked: no second audit record
    response = client.get("/api/v1/me", **bearer(raw))
    assert response.status_code == 401
    assert response.json()["detail"]
    assert list(AuditRecord.objects.values_list("action", flat=True)) == ["api_token.create", "api_token.revoke"]


@pytest.mark.django_db
def test_unknown_or_malformed_bearer_is_401(client: Client) -> None:
    assert client.get("/api/v1/me", **bearer("aria_not-a-real-token")).status_code == 401
    assert client.get("/api/v1/me", HTTP_AUTHORIZATION="Basic Zm9vOmJhcg==").status_code == 401


@pytest.mark.django_db
def test_token_of_inactive_user_is_401(client: Client, operator) -> None:
    _, raw = api_token_create(user=operator, name="ci")
    operator.is_active = False
    operator.save()
    assert client.get("/api/v1/me", **bearer(raw)).status_code == 401


@URLS
@pytest.mark.django_db
def test_session_post_needs_csrf(operator) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(operator)

    response = client.post("/probe/notes")
    assert response.status_code == 403
    assert response.json()["code"] == "csrf_failed"

    client.get("/login/")  # sets the csrftoken cookie
    csrf = client.cookies["csrftoken"].value
    response = client.post("/probe/notes", HTTP_X_CSRFTOKEN=csrf)
    assert response.status_code == 200
    assert response.json() == {"ok": True, "by": "olga"}


@URLS
@pytest.mark.django_db
def test_a_post_without_any_credentials_is_401_not_a_csrf_403(operator) -> None:
    anonymous = Client(enforce_csrf_checks=True)
    response = anonymous.post("/probe/notes")
    assert response.status_code == 401  # (the real API's body: tests/security/test_bad_input.py)

    # A session cookie that no longer names a session is no credential either.
    anonymous.cookies["sessionid"] = "expired-or-forged"
    assert anonymous.post("/probe/notes").status_code == 401


@URLS
@pytest.mark.django_db
def test_bearer_post_needs_no_csrf(operator) -> None:
    _, raw = api_token_create(user=operator, name="ci")
    response = Client(enforce_csrf_checks=True).post("/probe/notes", **bearer(raw))
    assert response.status_code == 200


# --- scopes and owner scoping -------------------------------------------------------------------


@URLS
@pytest.mark.django_db
def test_wrong_scope_is_403_json(client: Client, operator) -> None:
    client.force_login(operator)
    response = client.post("/probe/approvals")
    assert response.status_code == 403
    body = response.json()
    assert body["code"] == "missing_scope"
    assert "approver" in body["detail"]


@URLS
@pytest.mark.django_db
def test_another_owners_object_is_404_and_admin_bypasses(client: Client, operator, approver, admin_user) -> None:
    mine, _ = api_token_create(user=operator, name="mine")
    theirs, _ = api_token_create(user=approver, name="theirs")

    client.force_login(operator)
    assert client.get(f"/probe/tokens/{mine.pk}").json() == {"id": mine.pk, "name": "mine"}
    response = client.get(f"/probe/tokens/{theirs.pk}")
    assert response.status_code == 404
    assert response.json() == {"detail": "Api token not found.", "code": "not_found"}
    # the same answer as a row that does not exist at all
    assert client.get("/probe/tokens/999999").json() == response.json()

    client.force_login(admin_user)
    assert client.get(f"/probe/tokens/{theirs.pk}").status_code == 200


# --- /api/v1/me ---------------------------------------------------------------------------------


@pytest.mark.django_db
def test_me_for_session_token_and_service_account(client: Client, operator, make_user) -> None:
    client.force_login(operator)
    body = client.get("/api/v1/me").json()
    assert body | {"id": 0} == {
        "id": 0,
        "username": "olga",
        "display_name": "olga",
        "scopes": ["operator"],
        "is_service_account": False,
        "auth": "session",
    }

    _, raw = api_token_create(user=operator, name="ci")
    body = Client().get("/api/v1/me", **bearer(raw)).json()
    assert (body["username"], body["auth"]) == ("olga", "token")

    system = make_user("system-bot", OPERATOR)
    ServiceAccount.objects.create(user=system, role=ServiceAccount.Role.SYSTEM)
    _, raw = api_token_create(user=system, name="svc")
    body = Client().get("/api/v1/me", **bearer(raw)).json()
    assert body["is_service_account"] is True
    assert body["scopes"] == ["operator"]


# --- pages ------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_login_and_post_logout(client: Client, make_user) -> None:
    make_user("lena", OPERATOR)
    assert client.get("/login/").status_code == 200
    response = client.post("/login/", {"username": "lena", "password": "pw-lena"})
    assert response.status_code == 302
    assert client.get("/api/v1/me").json()["username"] == "lena"

    assert client.get("/logout/").status_code == 405  # logout is POST only
    response = client.post("/logout/")
    assert response.status_code == 302 and response["Location"].endswith("/login/")
    assert client.get("/api/v1/me").status_code == 401


@pytest.mark.django_db
def test_wrong_password_stays_on_login_page(client: Client, make_user) -> None:
    make_user("lena", OPERATOR)
    response = client.post("/login/", {"username": "lena", "password": "nope"})
    assert response.status_code == 200
    assert client.get("/api/v1/me").status_code == 401


# --- management commands ------------------------------------------------------------------------


@pytest.mark.django_db
def test_create_and_revoke_api_token_commands(client: Client, operator) -> None:
    out = io.StringIO()
    call_command("create_api_token", "olga", "--name", "laptop", stdout=out, stderr=io.StringIO())
    raw = out.getvalue().strip()
    assert raw.startswith("aria_")
    token = ApiToken.objects.get(name="laptop")
    assert token.key_hash == ApiToken.hash_key(raw)
    assert client.get("/api/v1/me", **bearer(raw)).status_code == 200

    call_command("revoke_api_token", str(token.pk), stdout=io.StringIO())
    assert client.get("/api/v1/me", **bearer(raw)).status_code == 401

    with pytest.raises(CommandError):
        call_command("create_api_token", "nobody", stdout=io.StringIO(), stderr=io.StringIO())
    with pytest.raises(CommandError):
        call_command("revoke_api_token", "999999", stdout=io.StringIO())


# --- admin ------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_admin_creates_token_shows_raw_once_and_never_the_hash(client: Client, admin_user, operator) -> None:
    admin_user.is_staff = True
    admin_user.is_superuser = True
    admin_user.save()
    client.force_login(admin_user)

    response = client.post("/admin/core/apitoken/add/", {"user": operator.pk, "name": "from-admin"}, follow=True)
    assert response.status_code == 200
    token = ApiToken.objects.get(name="from-admin")
    shown = [str(m) for m in response.context["messages"]]
    raw = next(word for m in shown for word in m.split() if word.startswith("aria_"))
    assert ApiToken.hash_key(raw) == token.key_hash
    assert Client().get("/api/v1/me", **bearer(raw)).json()["username"] == "olga"

    page = client.get(f"/admin/core/apitoken/{token.pk}/change/").content.decode()
    assert token.key_hash not in page and raw not in page
    assert raw not in client.get("/admin/core/apitoken/").content.decode()  # shown once only

    client.post("/admin/core/apitoken/", {"action": "revoke_tokens", "_selected_action": [token.pk]}, follow=True)
    token.refresh_from_db()
    assert token.revoked_at is not None
    assert Client().get("/api/v1/me", **bearer(raw)).status_code == 401
    assert AuditRecord.objects.filter(action="api_token.revoke", actor=admin_user).exists()


# --- API docs -----------------------------------------------------------------------------------


@pytest.mark.django_db
def test_openapi_schema_and_docs_for_signed_in_users(client: Client, operator) -> None:
    # Anonymous: a browser goes to the login page, an API client gets 401 JSON.
    response = client.get("/api/v1/openapi.json", HTTP_ACCEPT="text/html,application/xhtml+xml")
    assert response.status_code == 302 and response["Location"].startswith("/login/")
    response = client.get("/api/v1/openapi.json", HTTP_ACCEPT="application/json")
    assert (response.status_code, response.json()["code"]) == (401, "not_authenticated")

    client.force_login(operator)
    response = client.get("/api/v1/openapi.json")
    assert response.status_code == 200
    schema = response.json()
    assert schema["info"]["title"] == "ARIA API"
    assert "/api/v1/me" in schema["paths"]
    assert {"BearerTokenAuth", "SessionCookieAuth"} <= set(schema["components"]["securitySchemes"])

    response = client.get("/api/docs", follow=True)
    assert response.redirect_chain[-1][0] == "/api/v1/docs"
    page = response.content.decode()
    assert "swagger-ui-bundle.js" in page and "cdn." not in page  # served locally, CSP-friendly


@pytest.mark.django_db
def test_openapi_schema_and_docs_accept_a_bearer_token(client: Client, operator) -> None:
    _, raw = api_token_create(user=operator, name="schema-reader")
    response = client.get("/api/v1/openapi.json", **bearer(raw))
    assert response.status_code == 200 and response.json()["info"]["title"] == "ARIA API"
    response = client.get("/api/docs", follow=True, **bearer(raw))
    assert response.status_code == 200 and response.redirect_chain[-1][0] == "/api/v1/docs"
    # A bad token is refused as such, even from a browser.
    response = client.get("/api/v1/openapi.json", HTTP_ACCEPT="text/html", **bearer("aria_not-a-real-token"))
    assert response.status_code == 401
