"""/ws/events under a real uvicorn (websockets-sansio, as production runs it), where a round's frames
are built once and written straight to each socket's transport (core.direct_send.frame_writer):
every event arrives once and in order, a private event only on its owner's sockets, a socket paused
for backpressure gets the rest through the server's send in order, and replay after reconnect."""

import asyncio
import json
import socket
from collections.abc import AsyncIterator

import pytest
import uvicorn
from asgiref.sync import sync_to_async
from django.db import transaction
from websockets.asyncio.client import ClientConnection, connect

from aria_project.asgi import application
from core import direct_send
from core.events import private_scope, publish
from core.events.fanout import EventFanout
from tests.conftest import session_cookie

pytestmark = pytest.mark.django_db(transaction=True)


def _publish(owners: list[int | None]) -> list[int]:
    """One committed agent_start per entry: public (None) or private to that user id."""
    ids = []
    for n, owner in enumerate(owners):
        with transaction.atomic(), private_scope(owner):
            ids.append(publish("agent_start", {"agent": "operator_qa", "turn_id": f"u{n}"}).pk)
    return ids


@pytest.fixture
async def base() -> AsyncIterator[str]:
    """uvicorn serving the application in this event loop (as `--ws websockets-sansio`)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(
        application,
        lifespan="off",
        ws="websockets-sansio",
        ws_per_message_deflate=False,
        log_level="warning",
    )
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        await asyncio.sleep(0.01)
    yield f"127.0.0.1:{sock.getsockname()[1]}"
    server.should_exit = True
    await asyncio.wait_for(serving, 30)


async def _open(base: str, user, query: str) -> ClientConnection:
    cookie = await sync_to_async(session_cookie)(user)
    return await connect(
        f"ws://{base}/ws/events{query}",
        additional_headers={"Cookie": cookie, "Origin": f"http://{base}"},
        compression=None,
    )


async def _events(ws: ClientConnection, count: int, timeout: float = 5.0) -> list[dict]:
    """Frames until `count` events arrived (an array counts each of its events)."""
    frames: list[dict] = []
    while len(frames) < count:
        message = json.loads(await asyncio.wait_for(ws.recv(), timeout))
        frames.extend(message if isinstance(message, list) else [message])
    return frames


async def _nothing_more(ws: ClientConnection, seconds: float = 0.5) -> bool:
    try:
        await asyncio.wait_for(ws.recv(), seconds)
    except TimeoutError:
        return True
    return False


def _writers() -> list[direct_send.FrameWriter | None]:
    return [getattr(sink, "_frame_writer", None) for sink in EventFanout.current().sinks]


async def test_rounds_reach_each_socket_once_in_order_and_private_ones_only_their_owner(base, operator, make_user):
    """Hostile case: public and private events interleaved, back to back, to batch and one-per-
    message sockets of the owner and of another user, with the prebuilt-frame writes in use."""
    other = await sync_to_async(make_user)("mallory_uv", "operator")
    mine, mine_single = await _open(base, operator, "?batch=1"), await _open(base, operator, "")
    theirs = await _open(base, other, "?batch=1")
    await asyncio.sleep(0.2)
    writers = _writers()
    assert len(writers) == 3 and all(isinstance(w, direct_send.FrameWriter) for w in writers)
    owners = [None, operator.pk, None, None, operator.pk, operator.pk, None, None]
    ids = await sync_to_async(_publish)(owners)
    public = [i for i, o in zip(ids, owners, strict=True) if o is None]
    assert [f["id"] for f in await _events(mine, len(ids))] == ids
    assert [f["id"] for f in await _events(mine_single, len(ids))] == ids
    theirs_frames = await _events(theirs, len(public))
    assert [f["id"] for f in theirs_frames] == public
    assert all("owner_id" not in f for f in theirs_frames)
    for ws in (mine, mine_single, theirs):  # the tail re-reads them all: nothing twice, nothing private
        assert await _nothing_more(ws)
        await ws.close()


async def test_a_socket_paused_for_backpressure_gets_the_rest_through_send_in_order(base, operator):
    """The server paused writing (the client's buffers full): the prebuilt write refuses, the send
    waits for the transport, and rounds offered meanwhile follow it in order once it resumes."""
    ws = await _open(base, operator, "?batch=1")
    await asyncio.sleep(0.2)
    (writer,) = _writers()
    assert writer is not None
    first = await sync_to_async(_publish)([None, None])
    assert [f["id"] for f in await _events(ws, 2)] == first
    writer.protocol.pause_writing()
    assert writer(b"\x81\x00") is False  # nothing written while paused
    paused = await sync_to_async(_publish)([None] * 5)
    assert await _nothing_more(ws, 0.3)
    writer.protocol.resume_writing()
    assert [f["id"] for f in await _events(ws, len(paused))] == paused
    assert await _nothing_more(ws)
    await ws.close()


async def test_a_socket_back_with_after_gets_what_it_missed_then_live(base, operator):
    ws = await _open(base, operator, "?batch=1")
    await asyncio.sleep(0.2)
    seen = await sync_to_async(_publish)([None, None])
    assert [f["id"] for f in await _events(ws, 2)] == seen
    await ws.close()
    missed = await sync_to_async(_publish)([None, operator.pk, None])
    back = await _open(base, operator, f"?after={seen[-1]}&batch=1")
    assert [f["id"] for f in await _events(back, len(missed))] == missed
    await asyncio.sleep(0.2)
    live = await sync_to_async(_publish)([None, operator.pk])
    assert [f["id"] for f in await _events(back, len(live))] == live
    assert await _nothing_more(back)
    await back.close()


async def test_other_servers_sends_get_no_frame_writer():
    """daphne, Channels' test communicator or any wrapper of uvicorn's send: no prebuilt writes
    (they go through the send, which may act on the message)."""

    async def send(message: dict) -> None:
        pass

    class Protocol:
        async def send(self, message: dict) -> None:
            pass

    assert direct_send.frame_writer(send) is None
    assert direct_send.frame_writer(Protocol().send) is None


def test_a_protocol_that_reads_differently_gets_send_not_a_write():
    """A uvicorn or websockets release whose protocol lacks what the writer reads: it refuses (the
    fan-out then uses `send`) rather than raising inside the fan-out or writing blind."""

    class Transport:
        writes: list[bytes] = []

        def write(self, data: bytes) -> None:
            self.writes.append(data)

    class Changed:  # handshake_complete and conn are gone
        transport = Transport()

    writer = direct_send.FrameWriter(Changed())
    assert writer(direct_send.text_frame("{}")) is False
    assert Transport.writes == []
