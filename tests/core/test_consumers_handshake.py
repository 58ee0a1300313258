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
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY
from django.contrib.auth import get_user as django_get_user
from django.contrib.auth.models import AnonymousUser
from django.contrib.sessions.backends.db import SessionStore
from django.contrib.sessions.models import Session as SessionRow
from django.db import transaction
from django.test import Client

from aria_project.asgi import application
from core import socket_auth
from core.events import fanout, publish, stream
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


def _count_calls(monkeypatch, name: str, module=socket_auth) -> list[int]:
    calls: list[int] = []
    original = getattr(module, name)

    async def counted(*args):
        calls.append(1)
        return await original(*args)

    monkeypatch.setattr(module, name, counted)
    return calls


async def test_a_replay_that_fits_one_batch_is_read_in_the_checks_thread_hop(operator, monkeypatch, settings):
    settings.ARIA_EVENTS_TAIL_SECONDS = 0
    ids = await sync_to_async(_publish_committed)(3)
    cookie = await sync_to_async(_cookie)(operator)
    lookups = _count_calls(monkeypatch, "_get_user")
    checks = _count_calls(monkeypatch, "check_then")
    authentications = _count_calls(monkeypatch, "_authenticate_in_thread")
    reads = _count_calls(monkeypatch, "events_after", stream)
    comm = await _connect(f"/ws/events?after={ids[0] - 1}", cookie)
    frames = [await comm.receive_json_from(timeout=3) for _ in ids]
    assert [f["id"] for f in frames] == ids
    # Two hops: the auth middleware's session lookup, and one after the group join (check + first
    # batch); a session needs no hop of its own to authenticate; no second outbox read.
    assert (len(lookups), len(checks), len(authentications), len(reads)) == (1, 1, 0, 0)
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
    original = socket_auth.socket_refusal

    def session_gone_then_check(scope, auth, scopes, any_of=()):
        SessionRow.objects.all().delete()  # a logout landing after the auth, before the check
        return original(scope, auth, scopes, any_of)

    monkeypatch.setattr(socket_auth, "socket_refusal", session_gone_then_check)
    comm = WebsocketCommunicator(application, "/ws/events?after=0", headers=[ORIGIN, cookie])
    connected, _ = await comm.connect(timeout=5)
    assert connected
    assert await comm.receive_output(timeout=2) == {"type": "websocket.close", "code": 4401}
    assert reads == []
    assert all(type(sink) is not stream.EventsConsumer or sink.socket_auth for sink in _sinks())
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


# --- the session's user: Django's public get_user, handed the scope's session ----------------------


def _session_scope(cookie: tuple[bytes, bytes]) -> dict:
    key = cookie[1].decode().partition("=")[2]
    return {"session": SessionStore(session_key=key)}


async def _refused_with_4401(cookie: tuple[bytes, bytes]) -> None:
    comm = WebsocketCommunicator(application, "/ws/events?after=0", headers=[ORIGIN, cookie])
    connected, _ = await comm.connect(timeout=5)
    assert connected
    assert await comm.receive_output(timeout=2) == {"type": "websocket.close", "code": 4401}
    await comm.wait()


async def test_a_session_from_before_a_password_change_is_refused_with_4401(operator, settings):
    """Another session of a user who changed their password: the middleware finds the session's
    hash stale, flushes the session (its row is gone) and leaves the user anonymous."""
    settings.ARIA_EVENTS_TAIL_SECONDS = 0
    cookie = await sync_to_async(_cookie)(operator)
    operator.set_password("a-new-password")
    await sync_to_async(operator.save)()
    await _refused_with_4401(cookie)
    assert not await SessionRow.objects.filter(session_key=_session_scope(cookie)["session"].session_key).aexists()


async def test_the_session_that_changed_the_password_keeps_its_socket_and_gets_events(operator, settings):
    """Valid: the session carries the user's current hash (update_session_auth_hash) — events flow."""
    settings.ARIA_EVENTS_TAIL_SECONDS = 0
    cookie = await sync_to_async(_cookie)(operator)

    def change_password_in_this_session() -> None:
        operator.set_password("a-new-password")
        operator.save()
        store = _session_scope(cookie)["session"]
        store[HASH_SESSION_KEY] = operator.get_session_auth_hash()
        store.save()

    await sync_to_async(change_password_in_this_session)()
    comm = await _connect("/ws/events", cookie)
    (live,) = await sync_to_async(_publish_committed)(1)
    assert (await comm.receive_json_from(timeout=3))["id"] == live
    await comm.disconnect()


async def test_a_session_of_a_deleted_user_is_refused_with_4401(make_user):
    gone = await sync_to_async(make_user)("deleted")
    cookie = await sync_to_async(_cookie)(gone)
    await sync_to_async(gone.delete)()
    await _refused_with_4401(cookie)


async def test_the_session_user_is_django_s_get_user_off_the_thread_sensitive_thread(operator, monkeypatch):
    cookie = await sync_to_async(_cookie)(operator)
    sensitive = await sync_to_async(threading.get_ident, thread_sensitive=True)()
    seen: list[tuple[int, object]] = []
    public_get_user = socket_auth.get_user
    assert public_get_user is django_get_user

    def recorded(request):
        seen.append((threading.get_ident(), request.session.session_key))
        return public_get_user(request)

    monkeypatch.setattr(socket_auth, "get_user", recorded)
    comm = await _connect("/ws/events", cookie)
    assert await comm.receive_nothing(timeout=0.1)  # open, not closed
    await comm.disconnect()
    assert seen == [(seen[0][0], _session_scope(cookie)["session"].session_key)]
    assert seen[0][0] != sensitive


def test_session_user_resolves_only_a_current_session_of_an_active_user(operator, make_user):
    cookie = _cookie(operator)
    assert socket_auth.session_user(_session_scope(cookie)) == operator

    # A session naming a backend that is not configured, and one without a hash: anonymous.
    for key, value in ((BACKEND_SESSION_KEY, "some.other.Backend"), (HASH_SESSION_KEY, "")):
        scope = _session_scope(_cookie(operator))
        scope["session"][key] = value
        assert isinstance(socket_auth.session_user(scope), AnonymousUser)

    # Password changed: the old session's hash no longer matches; it is flushed, as Channels did.
    stale = _session_scope(cookie)
    operator.set_password("a-new-password")
    operator.save()
    assert isinstance(socket_auth.session_user(stale), AnonymousUser)
    assert not SessionRow.objects.filter(session_key=cookie[1].decode().partition("=")[2]).exists()

    # Inactive and deleted users: anonymous.
    inactive = make_user("inactive")
    inactive_scope = _session_scope(_cookie(inactive))
    inactive.is_active = False
    inactive.save()
    assert isinstance(socket_auth.session_user(inactive_scope), AnonymousUser)
    deleted = make_user("deleted")
    deleted_scope = _session_scope(_cookie(deleted))
    deleted.delete()
    assert isinstance(socket_auth.session_user(deleted_scope), AnonymousUser)

    # An empty session (no cookie): anonymous.
    assert isinstance(socket_auth.session_user({"session": SessionStore()}), AnonymousUser)


async def test_without_a_session_in_the_scope_it_raises_as_channels_does():
    with pytest.raises(ValueError, match="Cannot find session in scope"):
        socket_auth.session_user({"type": "websocket"})
    reached: list[dict] = []

    async def inner(scope, receive, send):
        reached.append(scope)

    with pytest.raises(ValueError, match="cannot find session in scope"):
        await socket_auth.SocketAuthMiddleware(inner)({"type": "websocket"}, None, None)
    assert reached == []
