"""What each user's /ws/events socket receives: shared by the tests of private events."""

from collections.abc import Callable
from typing import Any

from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.db import transaction

from aria_project.asgi import application
from core.events import publish
from tests.conftest import session_cookie


def socket_headers(user) -> list[tuple[bytes, bytes]]:
    return [(b"cookie", session_cookie(user).encode()), (b"origin", b"http://testserver")]


def public_marker() -> int:
    with transaction.atomic():
        return publish("work_order_ready", {"work_order_id": 0}).pk


async def frames_by_user(users: dict[str, Any], act: Callable[[], Any] | None, *, after: int | None) -> dict:
    """Open a /ws/events socket per user (with `?after=` when given), run `act`, then publish a
    public marker; what each socket received before the marker, by user name."""
    path = "/ws/events" if after is None else f"/ws/events?after={after}"
    sockets = {}
    for name, user in users.items():
        socket = WebsocketCommunicator(application, path, headers=await sync_to_async(socket_headers)(user))
        connected, _ = await socket.connect()
        assert connected
        sockets[name] = socket
    if act is not None:
        await sync_to_async(act)()
    marker = await sync_to_async(public_marker)()
    seen: dict[str, list[dict]] = {}
    for name, socket in sockets.items():
        frames = []
        while (frame := await socket.receive_json_from(timeout=5)).get("id") != marker:
            frames.append(frame)
        seen[name] = frames
        await socket.disconnect()
    return seen
