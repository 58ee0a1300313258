"""The /ws/events handshake: few thread hops, none on the thread-sensitive thread, still strict.

bench/event_bus.py: 50 sockets reconnecting at once stalled the server's loop, each handshake
taking 4 thread hops (the session's user on the one thread-sensitive thread — behind every other
handshake and any chat turn running there —, the authentication, the check after the group
join, the outbox read). Now the user is looked up in a worker thread, a signed-in session is
authenticated without a hop, and the check after the join reads the start of the stream in the
same hop. A refused socket still gets nothing: not the outbox, not a live frame.
"""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.sessions.models import Session as SessionRow
from django.db import transaction
from django.test import Client

from aria_project.asgi import application
from core import consumers
from core.events import fanout, publish
from core.events.fanout import EventFanout
from core.tokens import api_token_create

pytestmark = pytest.mark.django_db(transaction=True)

ORIGIN = (b"origin", b"http://testserver")


def _cookie(user) -> tuple[bytes, bytes]:
    client = Client()
    client.force_login(user)
    return (b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode())


def _publish_committed(n: int) -> list[int]:
    ids = []
    for i in range(n):
        with transaction.atomic():
            ids.append(publish("work_order_ready", {"work_order_id": i}).pk)
    return ids


async def _connect(path: str, *headers: tuple[bytes, bytes]) -> WebsocketCommunicator:
    comm = WebsocketCommunicator(application, path, headers=[ORIGIN, *headers])
    connected, _ = await comm.connect(timeout=5)
    assert connected  # accepted, then (when refused) closed with the application's code
    return comm


def _count_calls(monkeypatch, name: str) -> list[int]:
    calls: list[int] = []
    original = getattr(consumers, name)

    async def counted(*args):
        calls.append(1)
        return await original(*args)

    monkeypatch.setattr(consumers, name, counted)
    return calls


async def test_a_replay_that_fits_one_batch_is_read_in_the_checks_thread_hop(operator, monkeypatch, settings):
    settings.ARIA_EVENTS_TAIL_SECONDS = 0
    ids = await sync_to_async(_publish_committed)(3)
    cookie = await sync_to_async(_cookie)(operator)
    checks = _count_calls(monkeypatch, "_check_then")
    authentications = _count_calls(monkeypatch, "_authenticate_in_thread")
    reads = _count_calls(monkeypatch, "events_after")
    comm = await _connect(f"/ws/events?after={ids[0] - 1}", cookie)
    frames = [await comm.receive_json_from(timeout=3) for _ in ids]
    assert [f["id"] for f in frames] == ids
    # One hop after the group join (check + first batch); a session needs no hop of its own to
    # authenticate (the auth middleware resolved the user); no second outbox read.
    assert (len(checks), len(authentications), len(reads)) == (1, 0, 0)
    await comm.disconnect()


async def test_a_live_only_socket_starts_at_the_end_of_the_outbox(operator, settings):
    settings.ARIA_EVENTS_TAIL_SECONDS = 0
    await sync_to_async(_publish_committed)(2)  # before connect: not replayed without ?after
    comm = await _connect("/ws/events", await sync_to_async(_cookie)(operator))
    (live,) = await sync_to_async(_publish_committed)(1)
    assert (await comm.receive_json_from(timeout=3))["id"] == live
    assert await comm.receive_nothing(timeout=0.3)
    await comm.disconnect()


async def test_a_refused_socket_reads_nothing_and_is_not_subscribed(operator, monkeypatch):
    """The check fails (here: the session is deleted between the auth middleware and the check):
    4401, the outbox is never read for it (no replay), no event frame, and it leaves the fan-out."""
    await sync_to_async(_publish_committed)(3)
    cookie = await sync_to_async(_cookie)(operator)
    reads: list[tuple] = []
    monkeypatch.setattr(fanout, "stored_events_after", lambda *a: reads.append(a) or [])
    original = consumers.socket_refusal

    def session_gone_then_check(scope, auth, scopes):
        SessionRow.objects.all().delete()  # a logout landing after the auth, before the check
        return original(scope, auth, scopes)

    monkeypatch.setattr(consumers, "socket_refusal", session_gone_then_check)
    comm = WebsocketCommunicator(application, "/ws/events?after=0", headers=[ORIGIN, cookie])
    connected, _ = await comm.connect(timeout=5)
    assert connected
    assert await comm.receive_output(timeout=2) == {"type": "websocket.close", "code": 4401}
    assert reads == []
    assert all(type(sink) is not consumers.EventsConsumer or sink.socket_auth for sink in _sinks())
    await sync_to_async(_publish_committed)(1)
    assert await comm.receive_nothing(timeout=0.3)
    await comm.wait()


def _sinks() -> set:
    loop = asyncio.get_running_loop()
    current = EventFanout._by_loop.get(loop)
    return set(current.sinks) if current is not None else set()


async def test_an_inactive_user_and_a_bad_token_are_refused_with_4401(operator, make_user):
    gone = await sync_to_async(make_user)("gone")
    cookie = await sync_to_async(_cookie)(gone)
    gone.is_active = False
    await sync_to_async(gone.save)()
    for headers in ((cookie,), ((b"authorization", b"Bearer aria_not-a-token"),)):
        comm = WebsocketCommunicator(application, "/ws/events?after=0", headers=[ORIGIN, *headers])
        connected, _ = await comm.connect(timeout=5)
        assert connected
        assert await comm.receive_output(timeout=2) == {"type": "websocket.close", "code": 4401}
        await comm.wait()


async def test_a_token_socket_authenticates_in_one_hop_and_gets_events(operator, monkeypatch, settings):
    settings.ARIA_EVENTS_TAIL_SECONDS = 0
    _, raw = await sync_to_async(api_token_create)(user=operator, name="bench")
    authentications = _count_calls(monkeypatch, "_authenticate_in_thread")
    ids = await sync_to_async(_publish_committed)(2)
    comm = await _connect(f"/ws/events?after={ids[0] - 1}", (b"authorization", f"Bearer {raw}".encode()))
    assert [(await comm.receive_json_from(timeout=3))["id"] for _ in ids] == ids
    assert len(authentications) == 1
    await comm.disconnect()


async def test_the_handshake_does_not_wait_for_the_thread_sensitive_thread(operator):
    """A long chat turn holds Django's one thread-sensitive thread; a socket still opens."""
    cookie = await sync_to_async(_cookie)(operator)
    release = threading.Event()
    busy = asyncio.ensure_future(sync_to_async(release.wait, thread_sensitive=True)(10))
    await asyncio.sleep(0.1)
    try:
        started = time.monotonic()
        comm = await _connect("/ws/events", cookie)
        assert time.monotonic() - started < 3
        assert await comm.receive_nothing(timeout=0.1)  # open, not closed
        await comm.disconnect()
    finally:
        release.set()
        await busy
