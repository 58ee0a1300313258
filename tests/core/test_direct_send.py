"""core.direct_send and the fan-out's direct writes: a round is written to a socket inside the
fan-out's call when the server's send does not suspend; when it does (backpressure), that socket
finishes the write in a task, queues what comes next behind it (in order, each id once), and the
other sockets are not held up."""

import asyncio
import json

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator

from aria_project.asgi import application
from core import direct_send
from tests.core.test_events_batch import _flat, _headers, _messages, _publish

pytestmark = pytest.mark.django_db(transaction=True)


async def test_start_completes_a_send_that_does_not_suspend():
    done = []

    async def write() -> None:
        done.append(1)

    assert direct_send.start(write()) is None
    assert done == [1]


async def test_start_hands_a_suspended_send_to_a_task_and_keeps_its_result_and_errors():
    gate = asyncio.get_running_loop().create_future()

    async def write() -> str:
        value = await gate
        if value == "boom":
            raise RuntimeError(value)
        return value

    task = direct_send.start(write())
    assert task is not None and not task.done()
    gate.set_result("ok")
    assert await task == "ok"

    gate = asyncio.get_running_loop().create_future()
    task = direct_send.start(write())
    gate.set_result("boom")
    with pytest.raises(RuntimeError):
        await task

    gate = asyncio.get_running_loop().create_future()
    task = direct_send.start(write())
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_start_raises_what_a_send_raises_before_suspending():
    async def write() -> None:
        raise ConnectionResetError

    with pytest.raises(ConnectionResetError):
        direct_send.start(write())


def _gated(gate: asyncio.Event):
    """The application behind a server whose send waits on `gate` for event frames (a socket
    paused for backpressure)."""

    async def app(scope, receive, send):
        async def slow_send(message):
            if message["type"] == "websocket.send":
                await gate.wait()
            await send(message)

        return await application(scope, receive, slow_send)

    return app


async def test_a_paused_socket_gets_every_event_in_order_and_does_not_hold_up_others(operator):
    gate = asyncio.Event()
    headers = await sync_to_async(_headers)(operator)
    slow = WebsocketCommunicator(_gated(gate), "/ws/events?batch=1", headers=headers)
    fast = WebsocketCommunicator(application, "/ws/events?batch=1", headers=headers)
    assert (await slow.connect())[0] and (await fast.connect())[0]
    await asyncio.sleep(0.1)

    first = await sync_to_async(_publish)([None])
    assert [f["id"] for f in _flat(await _messages(fast, 1))] == first
    rest = await sync_to_async(_publish)([None, None, None])
    assert [f["id"] for f in _flat(await _messages(fast, 3))] == rest
    assert await slow.receive_nothing(timeout=0.2)  # its first write is still waiting

    gate.set()
    got = [f["id"] for f in _flat(await _messages(slow, 4))]
    assert got == first + rest
    assert await slow.receive_nothing(timeout=0.3)
    await slow.disconnect()
    await fast.disconnect()


async def test_event_frames_bypass_the_session_wrapper_but_reach_the_server_send(operator, monkeypatch):
    from channels.sessions import InstanceSessionWrapper

    server, wrapper = [], []
    wrapped_send = InstanceSessionWrapper.send

    async def recording_wrapper_send(self, message):
        wrapper.append(message["type"])
        return await wrapped_send(self, message)

    monkeypatch.setattr(InstanceSessionWrapper, "send", recording_wrapper_send)

    async def app(scope, receive, send):
        async def recording_send(message):
            server.append(message["type"])
            await send(message)

        return await application(scope, receive, recording_send)

    comm = WebsocketCommunicator(app, "/ws/events", headers=await sync_to_async(_headers)(operator))
    assert (await comm.connect())[0]
    await asyncio.sleep(0.1)
    (event_id,) = await sync_to_async(_publish)([None])
    assert json.loads(await comm.receive_from(timeout=3))["id"] == event_id
    assert server == ["websocket.accept", "websocket.send"]
    assert wrapper == ["websocket.accept"]  # the event frame went below the session wrapper
    await comm.disconnect()
