"""API token services: issue (the raw secret is returned once, only its hash is kept) and revoke
(which also closes the WebSockets opened with the token)."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.db import transaction
from django.utils import timezone

from core.audit import audit_record
from core.models import ApiToken
from core.sockets import user_sockets_close


@transaction.atomic
def api_token_create(
    *, user: User, name: str, actor: AbstractBaseUser | AnonymousUser | None = None
) -> tuple[ApiToken, str]:
    """A new token for `user`; returns (token, raw secret). The raw secret is never stored."""
    raw = ApiToken.generate_key()
    token = ApiToken.objects.create(user=user, name=name, key_prefix=raw[:12], key_hash=ApiToken.hash_key(raw))
    audit_record(
        actor=actor,
        action="api_token.create",
        target_type="api_token",
        target_id=token.pk,
        details={"user": user.get_username(), "name": name},
    )
    return token, raw


@transaction.atomic
def api_token_revoke(*, token: ApiToken, actor: AbstractBaseUser | AnonymousUser | None = None) -> bool:
    """Revoke a token; False when it was already revoked (the guard is in the query)."""
    changed = ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
    if changed:
        token.refresh_from_db(fields=["revoked_at"])
        audit_record(
            actor=actor,
            action="api_token.revoke",
            target_type="api_token",
            target_id=token.pk,
            details={"user": token.user.get_username(), "name": token.name},
        )
        user_sockets_close(token.user_id, token_id=token.pk)  # on commit: its WebSockets close (4401)
    return bool(changed)
