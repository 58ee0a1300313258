"""The base of every ARIA WebSocket consumer: a socket that lives only as long as the authority it
was opened with (SessionBoundConsumer; core.sockets, core.socket_auth). It closes 4401/4403 when its
session, token or scope ends. The event bus's stream, /ws/events, is core/events/stream.py; the chat
socket is the assistant's.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable
from typing import Any

from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser

from core import socket_auth
from core.events.transport import bind_server_loop
from core.metrics import websocket_clients
from core.sockets import CLOSE_FORBIDDEN, CLOSE_UNAUTHENTICATED, SocketAuth, user_group

logger = logging.getLogger(__name__)
__all__ = ["CLOSE_FORBIDDEN", "CLOSE_UNAUTHENTICATED", "SessionBoundConsumer", "recheck_delay"]

# A periodic re-validation waits between this share of ARIA_SOCKET_RECHECK_SECONDS and all of it.
RECHECK_SPREAD = 0.5


def recheck_delay(interval: float) -> float:
    """Seconds until a socket's next periodic re-validation: at most `interval` (the setting is a
    bound on how long a silently revoked session keeps a socket), drawn at random from its upper
    half. Sockets opened together (a reconnect burst after a restart, 500 dashboards) otherwise
    re-validate together every interval — a thread hop and a query each, all in the same
    moment, stalling every socket's deliveries; drawn apart, they spread over half the interval
    and drift further apart each round."""
    return interval * random.uniform(RECHECK_SPREAD, 1.0)


class SessionBoundConsumer(AsyncJsonWebsocketConsumer):
    """A socket that lives only as long as the authority it was opened with (core.sockets).

    `admit()` authenticates (session cookie, else `Authorization: Bearer`), checks
    `required_scopes` and joins the user's control group. The socket then closes on a
    `user.disconnect` naming its session or token, and on a failed re-validation (a
    `user.recheck`, every inbound frame via `socket_still_valid()`, and every
    ARIA_SOCKET_RECHECK_SECONDS). Once refused or closed, `socket_auth` is None and every later
    frame or message is ignored.
    """

    required_scopes: tuple[str, ...] = ()  # every one of them
    any_scope: tuple[str, ...] = ()  # at least one of them (empty: no such rule)
    # Class defaults: a frame that arrives after a refused connect finds them, never an AttributeError.
    socket_auth: SocketAuth | None = None
    user: AbstractBaseUser | None = None
    admitted_with: Any = None  # what admit()'s `then` returned
    _recheck_task: asyncio.Task | None = None

    async def admit(self, then: Callable[[], Any] | None = None) -> int | None:
        """None when the socket may open (and it has joined its user's group), else the close code.

        `then` (sync, no arguments) runs in the same thread hop as the check after the group
        join, only when the check passes; its result is in `self.admitted_with`."""
        bind_server_loop(asyncio.get_running_loop())  # control messages from sync code come here
        user, auth = await socket_auth.authenticate(self.scope)
        if user is None or auth is None:
            return CLOSE_UNAUTHENTICATED
        # Join first, then validate: a logout that lands between the two is either seen by the
        # check or delivered to the group, never lost.
        async with socket_auth.group_op_slot():
            await self.channel_layer.group_add(user_group(auth.user_id), self.channel_name)
        refusal, self.admitted_with = await socket_auth.check_then(
            self.scope, auth, self.required_scopes, then, self.any_scope
        )
        if refusal is not None:
            await self._leave_user_group(auth)
            return refusal
        self.user, self.socket_auth = user, auth
        websocket_clients(type(self).__name__).inc()
        if settings.ARIA_SOCKET_RECHECK_SECONDS > 0:
            self._recheck_task = asyncio.create_task(self._recheck_periodically())
        return None

    async def socket_still_valid(self) -> bool:
        """Re-validate against the database; closes the socket (4401/4403) when it is not."""
        auth = self.socket_auth
        if auth is None:
            return False
        code = await socket_auth.refusal(self.scope, auth, self.required_scopes, self.any_scope)
        if code is None:
            return True
        if self.socket_auth is auth:
            await self.end_socket(code)
        return False

    async def end_socket(self, code: int) -> None:
        """Close for good: leave the user's group, stop background work, send the close."""
        auth, self.socket_auth = self.socket_auth, None
        await self.release_socket(auth)
        await self.close(code=code)

    async def release_socket(self, auth: SocketAuth | None = None) -> None:
        """Leave the user's group and stop the periodic check (on close and on disconnect)."""
        auth = auth or self.socket_auth
        task, self._recheck_task = self._recheck_task, None
        if task is not None and task is not asyncio.current_task():
            task.cancel()
        try:
            if auth is not None:
                websocket_clients(type(self).__name__).dec()
                await self._leave_user_group(auth)
        finally:
            await self.stop_streams()  # even when Redis fails: a dead socket must not stay subscribed

    async def _leave_user_group(self, auth: SocketAuth) -> None:
        """Leave the control group; a failure is logged (the membership expires with the layer's
        group_expiry, and a control message to a closed channel is dropped)."""
        try:
            async with socket_auth.group_op_slot():
                await self.channel_layer.group_discard(user_group(auth.user_id), self.channel_name)
        except Exception as exc:
            logger.warning("Leaving %s failed (%r)", user_group(auth.user_id), exc)

    async def stop_streams(self) -> None:
        """Hook: stop whatever the socket streams (called once it closes)."""

    async def disconnect(self, code: int) -> None:
        auth, self.socket_auth = self.socket_auth, None
        await self.release_socket(auth)

    async def _recheck_periodically(self) -> None:
        while self.socket_auth is not None:
            await asyncio.sleep(recheck_delay(settings.ARIA_SOCKET_RECHECK_SECONDS))
            await self.socket_still_valid()

    # -- control messages (core.sockets) ------------------------------------------------------
    async def user_disconnect(self, message: dict[str, Any]) -> None:
        auth = self.socket_auth
        if auth is None:
            return
        if message.get("token_id") is not None:
            if auth.token_id != message["token_id"]:
                return  # another token of the same user
        elif message.get("session") and auth.session != message["session"]:
            return  # another session (or a token socket) of the same user
        await self.end_socket(int(message.get("code") or CLOSE_UNAUTHENTICATED))

    async def user_recheck(self, message: dict[str, Any]) -> None:
        await self.socket_still_valid()
