"""Writing a WebSocket message without a task per write, for the event fan-out.

Two pieces, both for `/ws/events` (core.events.stream.EventsConsumer), which writes every event to
hundreds of sockets:

- `keep_server_send(app)`: an ASGI middleware, outside the session middleware, that puts the
  server's own `send` callable in the scope (`aria.server_send`). Channels' session wrapper
  around `send` only acts on HTTP responses but looks the session up lazily on every message
  (≈ 17 % of a delivered frame's server CPU at 500 sockets); a `websocket.send` of an event
  frame needs none of it. Accept, close and error frames keep going through the consumer's
  ordinary `send`.
- `start(coro)`: runs a send coroutine up to its first suspension, now. The ASGI servers we run
  (uvicorn, daphne, Channels' test communicator) write a text frame to the transport without
  suspending unless the socket is paused for backpressure, so a write normally completes inside
  the call, with no task and no loop turn; when it does suspend, the rest runs in a task that is
  returned (the caller waits for it before writing again, so order holds).
- `frame_writer(send)`: on uvicorn's websockets-sansio protocol (its default WebSocket
  implementation), a writer of prebuilt WebSocket frames straight to the socket's transport. The
  fan-out frames a round's message once and writes the same bytes to every socket that takes the
  whole round; through `send` each socket encoded the text, built and serialised its own frame and
  went through the ASGI send coroutine (≈ 2.4 µs a socket besides the system call). It writes only
  when `send` would write at once and in order (handshake done, open, not paused for backpressure,
  nothing of the connection's own waiting, no compression extension); otherwise it refuses and
  the caller uses `send`. Other servers (daphne, Channels' test communicator) get None.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Generator
from typing import Any

from websockets.frames import Frame, Opcode
from websockets.protocol import State

SERVER_SEND = "aria.server_send"

ASGIApp = Callable[[dict[str, Any], Callable[..., Awaitable[Any]], Callable[..., Awaitable[Any]]], Awaitable[Any]]


def keep_server_send(app: ASGIApp) -> ASGIApp:
    """Wrap a WebSocket application so the scope carries the server's `send` (SERVER_SEND)."""

    async def middleware(scope: dict[str, Any], receive: Any, send: Any) -> Any:
        return await app(dict(scope, **{SERVER_SEND: send}), receive, send)

    return middleware


class _Rest:
    """Awaitable that finishes a coroutine which already yielded `pending` to its driver."""

    def __init__(self, coro: Coroutine[Any, Any, Any], pending: Any) -> None:
        self.coro, self.pending = coro, pending

    def __await__(self) -> Generator[Any, Any, Any]:
        coro, pending = self.coro, self.pending
        while True:
            try:
                value = yield pending
            except GeneratorExit:
                coro.close()
                raise
            except BaseException as exc:  # cancellation or an error thrown in by the task
                try:
                    pending = coro.throw(exc)
                except StopIteration as stop:
                    return stop.value
            else:
                try:
                    pending = coro.send(value)
                except StopIteration as stop:
                    return stop.value


async def _finish(coro: Coroutine[Any, Any, Any], pending: Any) -> Any:
    return await _Rest(coro, pending)


def start(coro: Coroutine[Any, Any, Any]) -> asyncio.Task | None:
    """Run `coro` until it completes or first suspends: None when it completed (an exception it
    raised propagates), else the task running the rest (its exception is marked retrieved)."""
    try:
        pending = coro.send(None)
    except StopIteration:
        return None
    task = asyncio.ensure_future(_finish(coro, pending))
    task.add_done_callback(_retrieve)
    return task


def _retrieve(task: asyncio.Task) -> None:
    if not task.cancelled():
        task.exception()


def text_frame(text: str) -> bytes:
    """A server's WebSocket text frame carrying `text`: unmasked, uncompressed, unfragmented."""
    return Frame(Opcode.TEXT, text.encode()).serialize(mask=False)


class FrameWriter:
    """Writes prebuilt frames to one uvicorn websockets-sansio socket, when `send` would write."""

    __slots__ = ("protocol",)

    def __init__(self, protocol: Any) -> None:
        self.protocol = protocol

    def __call__(self, data: bytes) -> bool:
        """Write `data` (a whole frame) now and return True, or write nothing and return False
        when the socket's `send` would not write it at once (the caller then uses `send`)."""
        protocol = self.protocol
        try:
            conn = protocol.conn
            ready = (
                protocol.handshake_complete
                and not protocol.close_sent
                and not protocol.disconnected
                and protocol.initial_response is None
                and protocol.writable.is_set()
                and conn.state is State.OPEN
                and not conn.extensions
                and not conn.writes
                and not conn.expect_continuation_frame
                and not protocol.transport.is_closing()
            )
        except AttributeError:  # a uvicorn or websockets release that reads differently: use `send`
            return False
        if ready:
            protocol.transport.write(data)
            return True
        return False


def frame_writer(send: Callable[..., Awaitable[Any]]) -> FrameWriter | None:
    """A FrameWriter when `send` is uvicorn's websockets-sansio socket's own send, else None."""
    try:
        from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
    except ImportError:  # pragma: no cover - uvicorn is a dependency
        return None
    protocol = getattr(send, "__self__", None)
    if (
        isinstance(protocol, WebSocketsSansIOProtocol)
        and getattr(send, "__func__", None) is WebSocketsSansIOProtocol.send
    ):
        return FrameWriter(protocol)
    return None
