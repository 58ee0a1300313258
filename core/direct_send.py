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
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Generator
from typing import Any

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
