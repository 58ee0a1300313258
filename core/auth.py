"""API authentication for django-ninja: a session cookie (CSRF on unsafe methods) or a bearer token."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from ninja.security import APIKeyCookie, HttpBearer

from core.models import ApiToken


def user_for_token(raw: str) -> AbstractBaseUser | None:
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
            request.aria_auth = "token"
        return user


class SessionCookieAuth(APIKeyCookie):
    """Django session login; ninja's APIKeyCookie enforces CSRF on unsafe methods."""

    param_name = "sessionid"

    def authenticate(self, request: HttpRequest, key: str | None) -> Any:
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            request.aria_auth = "session"
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
                request.aria_auth = "token"
            elif token or "text/html" not in request.headers.get("Accept", ""):
                body = {"detail": "Authentication required.", "code": "not_authenticated"}
                return JsonResponse(body, status=401, headers={"WWW-Authenticate": "Bearer"})
            else:
                return redirect_to_login(request.get_full_path())
        return view(request, *args, **kwargs)

    return wrapper
