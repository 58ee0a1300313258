"""API authentication for django-ninja: a session cookie (CSRF on unsafe methods) or a bearer token."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from django.contrib.auth.models import User
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from ninja.security import APIKeyCookie, HttpBearer
from ninja.utils import check_csrf

from core.errors import Forbidden
from core.models import ApiToken


def note_auth_method(request: HttpRequest, method: str) -> None:
    """Remember how the request authenticated ("session" or "token"), for /api/v1/me."""
    request.aria_auth = method  # type: ignore[attr-defined]  # ARIA's own attribute on the request


def auth_method(request: HttpRequest) -> str:
    return getattr(request, "aria_auth", "session")


def user_for_token(raw: str) -> User | None:
    """The active user behind a raw bearer token, or None."""
    if not raw or not raw.startswith(ApiToken.PREFIX):
        return None
    token = (
        ApiToken.objects.select_related("user")
        .filter(key_hash=ApiToken.hash_key(raw), revoked_at__isnull=True, user__is_active=True)
        .first()
    )
    if token is None:
        return None
    ApiToken.objects.filter(pk=token.pk).update(last_used_at=timezone.now())
    return token.user


class BearerTokenAuth(HttpBearer):
    def authenticate(self, request: HttpRequest, token: str) -> Any:
        user = user_for_token(token)
        if user is not None:
            request.user = user
            note_auth_method(request, "token")
        return user


class SessionCookieAuth(APIKeyCookie):
    """Django session login, with Django's CSRF check on unsafe methods.

    The CSRF check guards a signed-in session only: a request with no session behind it has no
    authority to protect, so it falls through to 401 `not_authenticated` rather than a CSRF 403.
    """

    param_name = "sessionid"

    def _get_key(self, request: HttpRequest) -> str | None:
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated:
            return None
        if not getattr(request, "_ninja_csrf_exempt", False) and check_csrf(request) is not None:
            raise Forbidden("CSRF check failed: send the csrftoken cookie's value in X-CSRFToken.", code="csrf_failed")
        return request.COOKIES.get(self.param_name)

    def authenticate(self, request: HttpRequest, key: str | None) -> Any:
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            note_auth_method(request, "session")
            return user
        return None


api_auth = [BearerTokenAuth(), SessionCookieAuth()]


def bearer_token(request: HttpRequest) -> str:
    """The raw token of an `Authorization: Bearer …` header, or ""."""
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def session_or_token_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """For the API schema and docs: a signed-in session or a valid bearer token. Anyone else gets
    401 JSON (an API client, or any request with a bad token) or the login redirect (a browser)."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated:
            token = bearer_token(request)
            token_user = user_for_token(token) if token else None
            if token_user is not None:
                request.user = token_user
                note_auth_method(request, "token")
            elif token or "text/html" not in request.headers.get("Accept", ""):
                body = {"detail": "Authentication required.", "code": "not_authenticated"}
                return JsonResponse(body, status=401, headers={"WWW-Authenticate": "Bearer"})
            else:
                return redirect_to_login(request.get_full_path())
        return view(request, *args, **kwargs)

    return wrapper
