"""/ws/events?batch=1: several events per WebSocket message (a JSON array), filtered per socket
before they are joined, so a private event never rides in another user's array; and the group
joins/leaves that 500 sockets make at once stay bounded and never leave a dead socket subscribed."""

import asyncio
import json

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.db import transaction

from aria_project.asgi import application
from core import socket_auth
from core.events import private_scope, publish, stream
from core.events.fanout import EventFanout
from core.events.stream import parse_batch
from tests.conftest import session_cookie

pytestmark = pytest.mark.django_db(transaction=True)
ORIGIN = (b"origin", b"http://testserver")


def _headers(user) -> list[tuple[bytes, bytes]]:
    return [(b"cookie", session_cookie(user).encode()), ORIGIN]


def _publish(owners: list[int | None]) -> list[int]:
    """One committed agent_start per entry: public (None) or private to that user id."""
    ids = []
    for n, owner in enumerate(owners):
        with transaction.atomic(), private_scope(owner):
            ids.append(publish("agent_start", {"agent": "operator_qa", "turn_id": f"t{n}"}).pk)
    return ids


async def _open(user, query: str) -> WebsocketCommunicator:
    comm = WebsocketCommunicator(application, f"/ws/events{query}", headers=await sync_to_async(_headers)(user))
    connected, _ = await comm.connect()
    assert connected
    return comm


async def _messages(comm: WebsocketCommunicator, events: int, timeout: float = 3.0) -> list:
    """Messages until `events` events arrived (an array counts each of its events)."""
    messages, count = [], 0
    while count < events:
        message = json.loads(await comm.receive_from(timeout=timeout))
        messages.append(message)
        count += len(message) if isinstance(message, list) else 1
    return messages


def _flat(messages: list) -> list[dict]:
    return [frame for m in messages for frame in (m if isinstance(m, list) else [m])]


@pytest.mark.parametrize("raw,expected", [(b"", False), (b"batch=0", False), (b"after=3&batch=1", True)])
def test_parse_batch_accepts(raw, expected):
    assert parse_batch(raw) is expected


@pytest.mark.parametrize("raw", [b"batch=", b"batch=2", b"batch=true", b"batch=after"])
def test_parse_batch_rejects(raw):
    with pytest.raises(ValueError):
        parse_batch(raw)


async def test_invalid_batch_is_refused_with_4400(operator):
    comm = await _open(operator, "?batch=yes")
    error = await comm.receive_json_from(timeout=2)
    assert error["type"] == "error" and error["code"] == "invalid_batch"
    assert await comm.receive_output(timeout=2) == {"type": "websocket.close", "code": 4400}


async def test_a_replay_comes_as_one_array_in_id_order(operator):
    ids = await sync_to_async(_publish)([None] * 5)
    comm = await _open(operator, f"?after={ids[0] - 1}&batch=1")
    message = json.loads(await comm.receive_from(timeout=3))
    assert isinstance(message, list) and [f["id"] for f in message] == ids
    assert await comm.receive_nothing(timeout=0.3)
    await comm.disconnect()


async def test_without_batch_each_event_is_its_own_message(operator):
    ids = await sync_to_async(_publish)([None] * 3)
    comm = await _open(operator, f"?after={ids[0] - 1}")
    frames = [await comm.receive_json_from(timeout=3) for _ in ids]
    assert [f["id"] for f in frames] == ids  # objects, not arrays
    assert await comm.receive_nothing(timeout=0.3)
    await comm.disconnect()


async def test_a_large_replay_is_split_into_bounded_messages(operator, monkeypatch):
    monkeypatch.setattr(stream, "MESSAGE_CHARS", 400)  # ~2 frames per message
    ids = await sync_to_async(_publish)([None] * 6)
    comm = await _open(operator, f"?after={ids[0] - 1}&batch=1")
    messages = await _messages(comm, len(ids))
    assert len(messages) > 1
    assert all(len(json.dumps(m, separators=(",", ":"))) <= 400 or not isinstance(m, list) for m in messages)
    assert [f["id"] for f in _flat(messages)] == ids
    await comm.disconnect()


async def test_private_events_never_ride_in_another_users_batch(operator, make_user):
    """Hostile case: public and private events interleaved, replayed and live, to batch sockets
    of the owner and of another user: the other user's arrays hold only the public ones."""
    other = await sync_to_async(make_user)("mallory", "operator")
    owners = [None, operator.pk, None, operator.pk, operator.pk, None]
    replayed = await sync_to_async(_publish)(owners)
    mine = await _open(operator, f"?after={replayed[0] - 1}&batch=1")
    theirs = await _open(other, f"?after={replayed[0] - 1}&batch=1")
    public = [i for i, o in zip(replayed, owners, strict=True) if o is None]
    assert [f["id"] for f in _flat(await _messages(mine, len(replayed)))] == replayed
    assert [f["id"] for f in _flat(await _messages(theirs, len(public)))] == public
    await asyncio.sleep(0.1)
    live = await sync_to_async(_publish)(owners)  # back to back: rounds may carry several
    live_public = [i for i, o in zip(live, owners, strict=True) if o is None]
    mine_live = _flat(await _messages(mine, len(live)))
    theirs_live = _flat(await _messages(theirs, len(live_public)))
    assert sorted(f["id"] for f in mine_live) == live
    assert sorted(f["id"] for f in theirs_live) == live_public
    assert all("owner_id" not in f for f in theirs_live)
    assert await theirs.receive_nothing(timeout=0.5)  # the tail re-reads them all: still nothing private
    await mine.disconnect()
    await theirs.disconnect()


async def test_live_events_arrive_once_in_order_on_a_batch_socket(operator):
    comm = await _open(operator, "?batch=1")
    await asyncio.sleep(0.1)
    ids = await sync_to_async(_publish)([None] * 8)
    frames = _flat(await _messages(comm, len(ids)))
    assert [f["id"] for f in frames] == ids
    assert await comm.receive_nothing(timeout=0.5)
    await comm.disconnect()


async def test_a_failed_group_leave_still_unsubscribes_the_socket(operator, monkeypatch):
    """Redis refusing group_discard (e.g. "Too many connections") must not leave a closed socket
    subscribed to the fan-out, where every later event would still be queued for it."""
    from channels.layers import get_channel_layer

    layer = get_channel_layer()

    async def refuse(group: str, channel: str) -> None:
        raise ConnectionError("Too many connections")

    comm = await _open(operator, "")
    fanout = EventFanout.current()
    assert len(fanout.sinks) == 1
    monkeypatch.setattr(layer, "group_discard", refuse)
    await comm.disconnect()
    assert fanout.sinks == set()


async def test_group_joins_and_leaves_in_flight_are_bounded(operator, monkeypatch):
    from channels.layers import get_channel_layer

    monkeypatch.setattr(socket_auth, "GROUP_OPS_IN_FLIGHT", 3)
    layer = get_channel_layer()
    in_flight, most = 0, 0
    original = layer.group_discard

    async def slow_discard(group: str, channel: str) -> None:
        nonlocal in_flight, most
        if not group.startswith("user."):
            return await original(group, channel)  # the fan-out's own leave, once
        in_flight += 1
        most = max(most, in_flight)
        await asyncio.sleep(0.02)
        in_flight -= 1
        await original(group, channel)

    socks = [await _open(operator, "") for _ in range(10)]
    monkeypatch.setattr(layer, "group_discard", slow_discard)
    await asyncio.gather(*(s.disconnect() for s in socks))
    assert 1 <= most <= 3
    assert EventFanout.current().sinks == set()


async def test_after_a_heavy_round_the_fanout_reads_what_piled_up_in_the_outbox(operator, settings, monkeypatch):
    """Behind the fast path (one message per loop turn) events wait in the outbox already: after
    a round that took long the fan-out reads them in one query, without waiting for the tail."""
    from core.events import fanout as fanout_module

    settings.ARIA_EVENTS_TAIL_SECONDS = 0  # no tail: only the fast path and the post-round read
    monkeypatch.setattr(fanout_module, "ROUND_QUIET", -1.0)  # every round counts as heavy
    comm = await _open(operator, "?batch=1")
    await asyncio.sleep(0.1)
    from core.models import Event

    # Written without a broadcast (as by a process whose fast path is lost), then one broadcast.
    quiet = await sync_to_async(Event.objects.create)(type="work_order_ready", payload={"work_order_id": 1})
    (loud,) = await sync_to_async(_publish)([None])
    frames = _flat(await _messages(comm, 2))
    assert sorted(f["id"] for f in frames) == [quiet.pk, loud]
    assert await comm.receive_nothing(timeout=0.3)
    await comm.disconnect()


async def test_without_a_heavy_round_or_tail_an_unbroadcast_event_waits_for_replay(operator, settings, monkeypatch):
    """The control for the test above: the same quiet row is not delivered live by a cheap round."""
    from core.events import fanout as fanout_module

    settings.ARIA_EVENTS_TAIL_SECONDS = 0
    monkeypatch.setattr(fanout_module, "ROUND_QUIET", 60.0)  # no round counts as heavy
    comm = await _open(operator, "?batch=1")
    await asyncio.sleep(0.1)
    from core.models import Event

    await sync_to_async(Event.objects.create)(type="work_order_ready", payload={"work_order_id": 1})
    (loud,) = await sync_to_async(_publish)([None])
    assert [f["id"] for f in _flat(await _messages(comm, 1))] == [loud]
    assert await comm.receive_nothing(timeout=0.3)
    await comm.disconnect()
