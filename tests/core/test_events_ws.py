"""/ws/events over the real ASGI application: auth, origin, ?after= replay and the seam."""

import asyncio

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.db import transaction
from django.test import Client

from aria_project.asgi import application
from core.events import publish
from core.events.stream import parse_after
from core.models import Event

pytestmark = pytest.mark.django_db(transaction=True)

ORIGIN = (b"origin", b"http://testserver")


def _session_headers(user) -> list[tuple[bytes, bytes]]:
    client = Client()
    client.force_login(user)
    cookie = f"sessionid={client.cookies['sessionid'].value}".encode()
    return [(b"cookie", cookie), ORIGIN]


def _publish_committed(n: int, start: int = 0) -> list[int]:
    ids = []
    for i in range(start, start + n):
        with transaction.atomic():
            ids.append(publish("work_order_ready", {"work_order_id": i}).pk)
    return ids


async def _receive_frames(comm: WebsocketCommunicator, count: int, timeout: float = 3.0) -> list[dict]:
    return [await comm.receive_json_from(timeout=timeout) for _ in range(count)]


async def test_anonymous_is_closed_with_4401():
    comm = WebsocketCommunicator(application, "/ws/events", headers=[ORIGIN])
    connected, _ = await comm.connect()
    assert connected  # accepted first, then closed with the application code
    closed = await comm.receive_output(timeout=2)
    assert closed == {"type": "websocket.close", "code": 4401}
    await comm.wait()


async def test_foreign_origin_is_rejected(operator):
    headers = [h for h in await sync_to_async(_session_headers)(operator) if h[0] != b"origin"]
    comm = WebsocketCommunicator(application, "/ws/events", headers=[*headers, (b"origin", b"http://evil.example")])
    connected, _ = await comm.connect()
    assert not connected


async def test_invalid_after_is_rejected_with_4400(operator):
    headers = await sync_to_async(_session_headers)(operator)
    comm = WebsocketCommunicator(application, "/ws/events?after=abc", headers=headers)
    connected, _ = await comm.connect()
    assert connected
    error = await comm.receive_json_from(timeout=2)
    assert error["type"] == "error" and error["code"] == "invalid_after"
    assert await comm.receive_output(timeout=2) == {"type": "websocket.close", "code": 4400}


@pytest.mark.parametrize("raw,expected", [(b"", None), (b"after=0", 0), (b"x=1&after=42", 42)])
def test_parse_after_accepts(raw, expected):
    assert parse_after(raw) == expected


@pytest.mark.parametrize("raw", [b"after=", b"after=-1", b"after=1.5", b"after=abc", b"after=" + b"9" * 30])
def test_parse_after_rejects(raw):
    with pytest.raises(ValueError):
        parse_after(raw)


async def test_live_event_reaches_an_authenticated_client(operator):
    headers = await sync_to_async(_session_headers)(operator)
    await sync_to_async(_publish_committed)(2)  # history: not sent without ?after=
    comm = WebsocketCommunicator(application, "/ws/events", headers=headers)
    connected, _ = await comm.connect()
    assert connected
    await asyncio.sleep(0.1)  # the consumer has joined the group
    (event_id,) = await sync_to_async(_publish_committed)(1, start=99)
    frame = await comm.receive_json_from(timeout=2)
    created_at = await sync_to_async(lambda: Event.objects.get(pk=event_id).created_at.isoformat())()
    assert frame == {"id": event_id, "type": "work_order_ready", "work_order_id": 99, "created_at": created_at}
    assert await comm.receive_nothing(timeout=0.2)
    await comm.disconnect()
    # The same event replayed from the outbox is the identical frame.
    replay = WebsocketCommunicator(application, f"/ws/events?after={event_id - 1}", headers=headers)
    assert (await replay.connect())[0]
    assert await replay.receive_json_from(timeout=2) == frame
    await replay.disconnect()


async def test_replay_seam_has_no_gap_and_no_duplicate(operator, monkeypatch, settings):
    """Events before connect are replayed; events published during the replay arrive exactly once, in order."""
    from core.events import fanout, stream

    settings.ARIA_EVENTS_TAIL_SECONDS = 0  # only the replay and the live path may deliver
    monkeypatch.setattr(stream, "REPLAY_BATCH", 3)  # several batches
    headers = await sync_to_async(_session_headers)(operator)
    before = await sync_to_async(_publish_committed)(7)
    published_during: list[int] = []
    original = fanout.stored_events_after

    def events_after_then_publish(after: int, limit: int) -> list[dict]:
        # After each table read (the first in the handshake's check, the rest in the socket's
        # pump; all in worker threads) a new event is committed and broadcast live while
        # replaying: the early ones are also read by a later batch (buffered and replayed), the
        # one after the final read exists only in the buffer.
        frames = original(after, limit)
        published_during.extend(_publish_committed(1, start=100 + len(published_during)))
        return frames

    monkeypatch.setattr(fanout, "stored_events_after", events_after_then_publish)
    comm = WebsocketCommunicator(application, f"/ws/events?after={before[1]}", headers=headers)
    connected, _ = await comm.connect()
    assert connected
    frames = await _receive_frames(comm, len(before) - 2 + 3)
    assert await comm.receive_nothing(timeout=0.3)
    assert len(published_during) == 3
    assert [f["id"] for f in frames] == before[2:] + published_during
    # From then on, live events keep arriving once.
    monkeypatch.setattr(fanout, "stored_events_after", original)
    (late,) = await sync_to_async(_publish_committed)(1, start=200)
    assert (await comm.receive_json_from(timeout=2))["id"] == late
    assert await comm.receive_nothing(timeout=0.3)
    await comm.disconnect()


async def test_duplicate_and_already_sent_live_frames_are_dropped(operator):
    headers = await sync_to_async(_session_headers)(operator)
    ids = await sync_to_async(_publish_committed)(3)
    comm = WebsocketCommunicator(application, f"/ws/events?after={ids[0] - 1}", headers=headers)
    await comm.connect()
    frames = await _receive_frames(comm, 3)
    assert [f["id"] for f in frames] == ids
    # The layer re-delivers a frame the client already has: it is not sent again.
    from channels.layers import get_channel_layer

    from core.events.transport import EVENTS_GROUP, event_message

    await get_channel_layer().group_send(EVENTS_GROUP, event_message(frames[1]))
    assert await comm.receive_nothing(timeout=0.3)
    await comm.disconnect()


async def test_tail_delivers_events_that_missed_the_fast_path(operator, settings):
    """An event written by another process (no broadcast reaches this layer) still arrives."""
    settings.ARIA_EVENTS_TAIL_SECONDS = 0.1
    headers = await sync_to_async(_session_headers)(operator)
    comm = WebsocketCommunicator(application, "/ws/events", headers=headers)
    await comm.connect()
    await asyncio.sleep(0.1)
    row = await sync_to_async(Event.objects.create)(type="work_order_ready", payload={"work_order_id": 5})
    frame = await comm.receive_json_from(timeout=2)
    assert frame == {
        "id": row.pk,
        "type": "work_order_ready",
        "work_order_id": 5,
        "created_at": row.created_at.isoformat(),
    }
    await comm.disconnect()


async def test_sockets_of_one_process_share_one_group_member(operator, make_user, monkeypatch):
    """Fan-out happens in the process: the layer carries each frame once, however many sockets."""
    from channels.layers import get_channel_layer

    from core.events.transport import EVENTS_GROUP

    layer = get_channel_layer()
    joined: list[str] = []
    left: list[str] = []
    group_add, group_discard = layer.group_add, layer.group_discard

    async def counting_add(group: str, channel: str) -> None:
        joined.append(group)
        await group_add(group, channel)

    async def counting_discard(group: str, channel: str) -> None:
        left.append(group)
        await group_discard(group, channel)

    monkeypatch.setattr(layer, "group_add", counting_add)
    monkeypatch.setattr(layer, "group_discard", counting_discard)
    other = await sync_to_async(make_user)("otto", "operator")
    comms = []
    for user in (operator, other, operator):
        comm = WebsocketCommunicator(application, "/ws/events", headers=await sync_to_async(_session_headers)(user))
        assert (await comm.connect())[0]
        comms.append(comm)
    # One events-group member for the process; each socket also joins its user's control group.
    assert [g for g in joined if not g.startswith("user.")] == [EVENTS_GROUP]
    assert sorted(g for g in joined if g.startswith("user.")) == sorted(
        [f"user.{operator.pk}", f"user.{other.pk}", f"user.{operator.pk}"]
    )
    (event_id,) = await sync_to_async(_publish_committed)(1, start=300)
    for comm in comms:
        assert (await comm.receive_json_from(timeout=2))["id"] == event_id
    for comm in comms:
        await comm.disconnect()
    assert [g for g in left if not g.startswith("user.")] == [EVENTS_GROUP]  # when the last socket closed


async def test_the_fanout_offers_each_event_once_though_fast_path_and_tail_both_bring_it(operator, settings):
    """The tail re-reads every event the fast path already carried; the fan-out offers it to the
    consumers once (before, each consumer was woken twice per event and dropped the second)."""
    from core.events.fanout import EventFanout

    settings.ARIA_EVENTS_TAIL_SECONDS = 0.1
    offered: list[int] = []

    class Sink:
        def offer_many(self, frames: list[tuple[dict, str]]) -> None:
            offered.extend(frame["id"] for frame, _ in frames)

    fanout, sink = EventFanout.current(), Sink()
    await fanout.subscribe(sink)
    try:
        ids = await sync_to_async(_publish_committed)(3, start=400)  # broadcast on commit, and in the outbox
        missed = await sync_to_async(Event.objects.create)(type="work_order_ready", payload={"work_order_id": 9})
        await asyncio.sleep(0.6)  # several tail passes over all four
    finally:
        await fanout.unsubscribe(sink)
    assert sorted(offered) == sorted([*ids, missed.pk])  # each once; the one without a broadcast too
