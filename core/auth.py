"""API authentication for django-ninja: a session cookie (CSRF on unsafe methods) or a bearer token."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.http import HttpRequest
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
