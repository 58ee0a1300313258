"""Sockets follow the session: who a WebSocket speaks for, and closing it when that ends.

Every consumer (core.consumers.SessionBoundConsumer) joins the channel-layer group
`user.<id>` of the user it authenticated. When authority ends, a control message goes to that
group and the consumers close within the channel layer's latency:

- logout (Django's `user_logged_out`) → `user.disconnect` for the sockets of that session (4401);
- an API token revoked → `user.disconnect` for the sockets authenticated with it (4401);
- a user saved (deactivated, password changed, superuser flag dropped), deleted, or added to /
  removed from a group → `user.recheck`: each socket re-validates against the database and
  closes with 4401 (no longer signed in) or 4403 (signed in, scope lost).

Consumers also re-validate on every inbound frame and at least every ARIA_SOCKET_RECHECK_SECONDS
(core.consumers.recheck_delay: drawn apart, so sockets opened together do not re-validate together), so a
session that expires or is deleted out of band (clearsessions, a lost control message: the
channel layer is at-most-once) ends the socket too. Control messages are sent after commit.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from dataclasses import dataclass
from importlib import import_module
from typing import Any

from channels.layers import get_channel_layer
from django.conf import settings
from django.contrib.auth import HASH_SESSION_KEY, SESSION_KEY, get_user_model, user_logged_out
from django.contrib.auth.models import AbstractBaseUser, Group
from django.db import transaction
from django.db.models.signals import m2m_changed, post_delete, post_save, pre_delete
from django.utils.crypto import constant_time_compare

from core.access import has_scopes, user_scopes
from core.events.transport import server_loop
from core.loops import daemon_loop
from core.models import ApiToken

logger = logging.getLogger(__name__)

CLOSE_UNAUTHENTICATED = 4401
CLOSE_FORBIDDEN = 4403
DISCONNECT = "user.disconnect"  # handled by SessionBoundConsumer.user_disconnect
RECHECK = "user.recheck"  # handled by SessionBoundConsumer.user_recheck
_pending: set[asyncio.Task] = set()


def user_group(user_id: int) -> str:
    return f"user.{user_id}"


def session_fingerprint(session_key: str) -> str:
    """What a control message carries instead of the session key itself (a bearer secret)."""
    return hashlib.sha256(session_key.encode()).hexdigest()[:32]


@dataclass(frozen=True)
class SocketAuth:
    """How a socket authenticated: a session (fingerprint) or an API token (id)."""

    user_id: int
    session: str = ""
    token_id: int | None = None


def _bearer(scope: dict[str, Any]) -> str:
    for name, value in scope.get("headers", ()):
        if name.lower() == b"authorization":
            kind, _, token = value.decode("latin-1").partition(" ")
            return token.strip() if kind.lower() == "bearer" else ""
    return ""


def socket_authenticate(scope: dict[str, Any]) -> tuple[AbstractBaseUser | None, SocketAuth | None]:
    """The user a WebSocket handshake speaks for: the session cookie, else `Authorization: Bearer`."""

    user = scope.get("user")
    if user is not None and user.is_authenticated:
        session = scope.get("session")
        key = getattr(session, "session_key", None) or ""
        return user, SocketAuth(user_id=user.pk, session=session_fingerprint(key) if key else "")
    raw = _bearer(scope)
    if not raw.startswith(ApiToken.PREFIX):
        return None, None
    token = (
        ApiToken.objects.select_related("user")
        .filter(key_hash=ApiToken.hash_key(raw), revoked_at__isnull=True, user__is_active=True)
        .first()
    )
    if token is None:
        return None, None
    return token.user, SocketAuth(user_id=token.user_id, token_id=token.pk)


def _session_still_signed_in(scope: dict[str, Any], user: AbstractBaseUser) -> bool:
    """The session row still exists, names this user and carries their current auth hash."""
    session = scope.get("session")
    key = getattr(session, "session_key", None)
    if not key:
        return False
    store = import_module(settings.SESSION_ENGINE).SessionStore(session_key=key)
    data = store.load()  # {} when the session was deleted, flushed or has expired
    if str(data.get(SESSION_KEY, "")) != str(user.pk):
        return False
    return constant_time_compare(data.get(HASH_SESSION_KEY, ""), user.get_session_auth_hash())


def socket_refusal(
    scope: dict[str, Any], auth: SocketAuth, scopes: tuple[str, ...], any_of: tuple[str, ...] = ()
) -> int | None:
    """Re-validate a socket from the database: None while it may stay open, else the close code.
    `scopes`: all of them needed; `any_of`: at least one of them (empty: no such rule)."""

    user = get_user_model().objects.filter(pk=auth.user_id, is_active=True).first()
    if user is None:
        return CLOSE_UNAUTHENTICATED
    if auth.token_id is not None:
        if not ApiToken.objects.filter(pk=auth.token_id, user=user, revoked_at__isnull=True).exists():
            return CLOSE_UNAUTHENTICATED
    elif not _session_still_signed_in(scope, user):
        return CLOSE_UNAUTHENTICATED
    if scopes and not has_scopes(user, list(scopes)):
        return CLOSE_FORBIDDEN
    if any_of and not user_scopes(user) & set(any_of):
        return CLOSE_FORBIDDEN
    return None


# --- control messages -------------------------------------------------------------------------


def _group_send_nowait(group: str, message: dict[str, Any]) -> None:
    """Hand a control message to the channel layer without blocking; never raises."""
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is not None:
            task = running.create_task(layer.group_send(group, message))
            _pending.add(task)
            task.add_done_callback(_pending.discard)
            return
        # The server's loop when this process serves sockets (the in-memory layer needs it).
        loop = server_loop() or daemon_loop("socket-control")
        asyncio.run_coroutine_threadsafe(layer.group_send(group, message), loop)
    except Exception:
        logger.exception("Socket control message to %s failed", group)


def user_sockets_close(
    user_id: int, *, code: int = CLOSE_UNAUTHENTICATED, session_key: str = "", token_id: int | None = None
) -> None:
    """After commit, close the user's sockets: those of one session, of one token, or all of them."""
    message = {
        "type": DISCONNECT,
        "code": code,
        "session": session_fingerprint(session_key) if session_key else "",
        "token_id": token_id,
    }
    transaction.on_commit(lambda: _group_send_nowait(user_group(user_id), message))


def user_sockets_recheck(user_id: int) -> None:
    """After commit, make every socket of the user re-validate its session/token and scopes."""
    transaction.on_commit(lambda: _group_send_nowait(user_group(user_id), {"type": RECHECK}))


# --- signal receivers (connected in CoreConfig.ready) -------------------------------------------


def _on_logout(sender: Any, request: Any = None, user: AbstractBaseUser | None = None, **kwargs: Any) -> None:
    if user is None or not getattr(user, "pk", None):
        return
    session_key = getattr(getattr(request, "session", None), "session_key", None) or ""
    # Without a session key (a logout outside a request) every socket of the user closes.
    user_sockets_close(user.pk, session_key=session_key)


def _on_user_saved(sender: Any, instance: AbstractBaseUser, created: bool = False, **kwargs: Any) -> None:
    update_fields = kwargs.get("update_fields")
    if created or (update_fields is not None and set(update_fields) <= {"last_login"}):
        return  # a new user has no sockets; a login only stamps last_login
    user_sockets_recheck(instance.pk)


def _on_user_deleted(sender: Any, instance: AbstractBaseUser, **kwargs: Any) -> None:
    user_sockets_recheck(instance.pk)


def _on_groups_changed(sender: Any, instance: Any, action: str, reverse: bool, pk_set: Any, **kwargs: Any) -> None:
    if action not in ("post_add", "post_remove", "pre_clear", "post_clear"):
        return
    if not reverse:  # user.groups.…: instance is the user
        if action != "pre_clear":
            user_sockets_recheck(instance.pk)
        return
    # group.user_set.…: instance is the group; on clear the members are known only before it
    if action == "pre_clear":
        instance._aria_cleared_users = list(instance.user_set.values_list("pk", flat=True))
        return
    user_ids = pk_set if action != "post_clear" else getattr(instance, "_aria_cleared_users", [])
    for user_id in user_ids or ():
        user_sockets_recheck(user_id)


def _on_group_deleting(sender: Any, instance: Group, **kwargs: Any) -> None:
    for user_id in instance.user_set.values_list("pk", flat=True):
        user_sockets_recheck(user_id)  # sent after commit, when the membership is gone


def connect_socket_receivers() -> None:
    user_model = get_user_model()
    user_logged_out.connect(_on_logout, dispatch_uid="core.sockets.logout")
    post_save.connect(_on_user_saved, sender=user_model, dispatch_uid="core.sockets.user_saved")
    post_delete.connect(_on_user_deleted, sender=user_model, dispatch_uid="core.sockets.user_deleted")
    m2m_changed.connect(_on_groups_changed, sender=user_model.groups.through, dispatch_uid="core.sockets.groups")
    pre_delete.connect(_on_group_deleting, sender=Group, dispatch_uid="core.sockets.group_deleting")
