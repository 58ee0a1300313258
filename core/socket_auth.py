"""The WebSocket handshake's authentication, off Django's one thread-sensitive thread.

A session socket's handshake makes two thread hops, both in worker threads (docs/EVENTS.md, "The
handshake"): the auth middleware resolves the session's user (`SocketAuthMiddleware`), and after
the user's control group is joined one hop re-validates the socket and reads whatever the consumer
needs next (`check_then`). A signed-in session authenticates without a hop of its own
(`authenticate`); a bearer token costs one more. None of them runs on the thread-sensitive thread,
where a long chat turn may be running and where every handshake of a reconnect burst would queue
behind the others.

The checks themselves are core.sockets' (`socket_authenticate`, `socket_refusal`); this module
only decides where and in how many hops they run. core.consumers.SessionBoundConsumer uses it.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable
from typing import Any

from channels.auth import AuthMiddleware
from django.contrib.auth import get_user
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from core.events.fanout import off_thread
from core.sockets import SocketAuth, socket_authenticate, socket_refusal

# Group joins and leaves in flight per process: each holds a Redis connection, and 500 sockets
# closing at once asked channels-redis for 500 ("Too many connections").
GROUP_OPS_IN_FLIGHT = 32
_group_ops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = weakref.WeakKeyDictionary()


def group_op_slot() -> asyncio.Semaphore:
    """The bound on this event loop's control-group joins and leaves (GROUP_OPS_IN_FLIGHT)."""
    loop = asyncio.get_running_loop()
    slot = _group_ops.get(loop)
    if slot is None:
        slot = _group_ops[loop] = asyncio.Semaphore(GROUP_OPS_IN_FLIGHT)
    return slot


class _SessionHolder:
    """What django.contrib.auth.get_user reads of a request: only its `session`."""

    __slots__ = ("session",)

    def __init__(self, session: Any) -> None:
        self.session = session


def session_user(scope: dict[str, Any]) -> AbstractBaseUser | AnonymousUser:
    """The user the scope's session is signed in as, else AnonymousUser (sync: call it in a thread).

    Django's public `get_user`, handed the scope's session: the session's user id and backend,
    and the session's auth hash checked against the user's (a password change signs the other
    sessions out: the session is flushed and the user is anonymous); an inactive user is refused
    by the backend. The same steps as Channels' `channels.auth.get_user`, whose undecorated
    function is not public API."""
    if "session" not in scope:
        raise ValueError("Cannot find session in scope. You should wrap your consumer in SessionMiddleware.")
    return get_user(_SessionHolder(scope["session"]))  # type: ignore[arg-type]  # reads only .session


def _refusal_then(
    scope: dict[str, Any],
    auth: SocketAuth,
    scopes: tuple[str, ...],
    then: Callable[[], Any] | None,
    any_of: tuple[str, ...] = (),
) -> tuple[int | None, Any]:
    """The socket check and, when it passes, `then()` — in one thread hop (the handshake's
    last database visit: a burst of reconnects makes one hop each, not several)."""
    refusal = socket_refusal(scope, auth, scopes, any_of)
    return refusal, (then() if refusal is None and then is not None else None)


# Socket checks run off the one thread-sensitive thread, where a long chat turn may be running.
_authenticate_in_thread = off_thread(socket_authenticate)
refusal = off_thread(socket_refusal)  # async: None while the socket may stay open, else the close code
check_then = off_thread(_refusal_then)  # async: (refusal, then() or None), one hop
# The session-to-user lookup, likewise off the thread-sensitive thread.
_get_user = off_thread(session_user)


async def authenticate(scope: dict[str, Any]) -> tuple[AbstractBaseUser | None, SocketAuth | None]:
    """socket_authenticate; without a thread hop when the auth middleware already resolved a
    signed-in user from the session (then no database is read: the check after the group join
    re-reads user and session)."""
    user = scope.get("user")
    if user is not None and user.is_authenticated:
        return socket_authenticate(scope)
    return await _authenticate_in_thread(scope)  # an API token: one query


class SocketAuthMiddleware(AuthMiddleware):
    """Channels' AuthMiddleware (scope["user"] from the session cookie), resolving the user in a
    worker thread instead of the one thread-sensitive thread: a handshake neither waits behind a
    long chat turn nor queues behind every other handshake of a reconnect burst."""

    async def resolve_scope(self, scope: dict[str, Any]) -> None:
        scope["user"]._wrapped = await _get_user(scope)
