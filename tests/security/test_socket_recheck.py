"""Sockets re-validate on their own, and not all at once (core.consumers).

A session can end with no signal and no frame from the client: `clearsessions`, a cache eviction,
a row deleted or a user deactivated by a bulk update. The periodic re-validation
(ARIA_SOCKET_RECHECK_SECONDS) is then what closes the socket. Sockets opened together — 500
dashboards reconnecting after a restart — drew the same period and re-validated in the same
moment every minute, a thread hop and a query each, stalling every socket's deliveries
(bench/event_bus.py: the p95 of the tenth of the run where it fell rose 3–4 ×); each wait is now
drawn from the upper half of the setting, so the setting still bounds how long a revoked session
keeps its socket.
"""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User
from django.contrib.sessions.models import Session as SessionRow
from django.test import Client

from aria_project.asgi import application
from core.consumers import RECHECK_SPREAD, recheck_delay

pytestmark = pytest.mark.django_db(transaction=True)

ORIGIN = (b"origin", b"http://testserver")
RECHECK = 0.2  # seconds, for these tests
WAIT = 10.0  # seconds a test waits for the close at most (a liveness bound, not a timing goal)


def _session_cookie(user) -> tuple[bytes, bytes]:
    client = Client()
    client.force_login(user)
    return (b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode())


async def _open(path: str, cookie: tuple[bytes, bytes]) -> WebsocketCommunicator:
    comm = WebsocketCommunicator(application, path, headers=[ORIGIN, cookie])
    connected, _ = await comm.connect(timeout=5)
    assert connected
    return comm


async def _close_code(comm: WebsocketCommunicator) -> int | None:
    """The code the socket closes with (event frames before it are skipped), None if it stays open."""
    try:
        while (message := await comm.receive_output(timeout=WAIT))["type"] == "websocket.send":
            pass
    except TimeoutError:
        return None
    return message["code"]


@pytest.mark.parametrize("path", ["/ws/events", "/ws/agent/chat"])
async def test_a_session_deleted_out_of_band_closes_its_idle_socket(operator, settings, path):
    settings.ARIA_SOCKET_RECHECK_SECONDS = RECHECK
    cookie = await sync_to_async(_session_cookie)(operator)
    comm = await _open(path, cookie)
    session_key = cookie[1].decode().split("=", 1)[1]
    await sync_to_async(SessionRow.objects.filter(session_key=session_key).delete)()  # no signal

    assert await _close_code(comm) == 4401


async def test_a_user_deactivated_by_a_bulk_update_loses_the_socket(operator, settings):
    settings.ARIA_SOCKET_RECHECK_SECONDS = RECHECK
    comm = await _open("/ws/events", await sync_to_async(_session_cookie)(operator))
    await sync_to_async(User.objects.filter(pk=operator.pk).update)(is_active=False)  # no signal

    assert await _close_code(comm) == 4401


async def test_without_periodic_rechecks_a_silently_revoked_socket_stays_open(operator, settings):
    """The control the tests above rely on: with the setting at 0 nothing re-validates an idle
    socket, so its close came from the periodic check."""
    settings.ARIA_SOCKET_RECHECK_SECONDS = 0
    cookie = await sync_to_async(_session_cookie)(operator)
    comm = await _open("/ws/events", cookie)
    session_key = cookie[1].decode().split("=", 1)[1]
    await sync_to_async(SessionRow.objects.filter(session_key=session_key).delete)()

    try:
        assert await comm.receive_nothing(timeout=4 * RECHECK)
    finally:
        await comm.disconnect()


def test_each_wait_stays_within_the_setting_and_sockets_opened_together_draw_apart():
    interval = 60.0
    waits = [recheck_delay(interval) for _ in range(500)]
    assert all(RECHECK_SPREAD * interval <= wait <= interval for wait in waits)
    # 500 sockets opened in the same second re-validate spread over (most of) half a minute.
    assert max(waits) - min(waits) > 0.8 * (1 - RECHECK_SPREAD) * interval
    assert len({round(wait, 3) for wait in waits}) > 400
