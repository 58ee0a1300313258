"""A lean WebSocket client for benchmarks: hundreds of sockets in one process, cheaply.

`open_lean(url, headers, on_text)` does the RFC 6455 handshake over a plain asyncio protocol and
calls `on_text(text, received_at)` for every text message, from `data_received`, with the
wall-clock time the bytes arrived — no task, queue or wake-up per message, so a client process
serving 500 sockets adds little of its own time to the latencies it measures. It handles what an
ASGI server sends a client: unfragmented text/binary frames (fragments are joined), ping (answered
with pong) and close. Not a general client: no TLS, no extensions, no subprotocols.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
import struct
import time
from collections.abc import Callable
from urllib.parse import urlsplit

_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
OnText = Callable[[str, float], None]


class HandshakeRefused(OSError):
    """The server answered the upgrade with something other than 101 (e.g. 403 when busy)."""


def _masked(opcode: int, payload: bytes) -> bytes:
    """A client frame (clients must mask): FIN + opcode, short payloads only (control frames)."""
    mask = os.urandom(4)
    body = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return bytes([0x80 | opcode, 0x80 | len(payload)]) + mask + body


class LeanConnection(asyncio.Protocol):
    def __init__(self, key: bytes, on_text: OnText) -> None:
        self.on_text: OnText | None = on_text
        self.accept = base64.b64encode(hashlib.sha1(key + _GUID).digest())
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.fragments: list[bytes] = []
        self.loop = asyncio.get_running_loop()
        self.opened: asyncio.Future[None] = self.loop.create_future()
        self.closed: asyncio.Future[None] = self.loop.create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.opened.done():
            self.opened.set_exception(exc or ConnectionError("closed during the handshake"))
        if not self.closed.done():
            self.closed.set_result(None)

    def data_received(self, data: bytes) -> None:
        received = time.time()
        self.buffer += data
        if not self.opened.done():
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = bytes(self.buffer[:end]).decode("latin-1").split("\r\n")
            del self.buffer[: end + 4]
            fields = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in head[1:])}
            if head[0].split(" ")[1:2] != ["101"] or fields.get("sec-websocket-accept", "").encode() != self.accept:
                self.opened.set_exception(HandshakeRefused(head[0]))
                assert self.transport is not None
                self.transport.close()
                return
            self.opened.set_result(None)
        self._frames(received)

    def _frames(self, received: float) -> None:
        buffer, pos = self.buffer, 0
        while len(buffer) - pos >= 2:
            first, length = buffer[pos], buffer[pos + 1] & 0x7F
            head = 2
            if length == 126:
                if len(buffer) - pos < 4:
                    break
                (length,), head = struct.unpack_from("!H", buffer, pos + 2), 4
            elif length == 127:
                if len(buffer) - pos < 10:
                    break
                (length,), head = struct.unpack_from("!Q", buffer, pos + 2), 10
            if len(buffer) - pos < head + length:
                break
            payload = bytes(buffer[pos + head : pos + head + length])
            pos += head + length
            self._frame(first & 0x0F, bool(first & 0x80), payload, received)
        del buffer[:pos]

    def _frame(self, opcode: int, fin: bool, payload: bytes, received: float) -> None:
        assert self.transport is not None
        if opcode in (0, 1, 2):  # continuation, text, binary
            self.fragments.append(payload)
            if fin:
                message, self.fragments = b"".join(self.fragments), []
                if self.on_text is not None:
                    self.on_text(message.decode(), received)
        elif opcode == 9:  # ping
            self.transport.write(_masked(0xA, payload))
        elif opcode == 8:  # close: answer it, the server closes the TCP connection
            if not self.transport.is_closing():
                self.transport.write(_masked(0x8, payload[:2]))
            self.on_text = None

    async def close(self) -> None:
        """Stop recording, send a close frame and wait (up to 5 s) for the server to end it."""
        self.on_text = None
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(_masked(0x8, struct.pack("!H", 1000)))
            try:
                await asyncio.wait_for(asyncio.shield(self.closed), 5)
            except TimeoutError:
                self.transport.close()


async def open_lean(url: str, headers: dict[str, str], on_text: OnText, timeout: float = 30) -> LeanConnection:
    """Connect to ws://host:port/path?query; raises HandshakeRefused, OSError or TimeoutError."""
    parts = urlsplit(url)
    key = base64.b64encode(os.urandom(16))
    loop = asyncio.get_running_loop()
    _, conn = await asyncio.wait_for(
        loop.create_connection(lambda: LeanConnection(key, on_text), parts.hostname, parts.port or 80), timeout
    )
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    lines = [
        f"GET {target} HTTP/1.1",
        f"Host: {parts.netloc}",
        "Upgrade: websocket",
        "Connection: Upgrade",
        f"Sec-WebSocket-Key: {key.decode()}",
        "Sec-WebSocket-Version: 13",
        *(f"{name}: {value}" for name, value in headers.items()),
    ]
    assert conn.transport is not None
    conn.transport.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
    try:
        await asyncio.wait_for(asyncio.shield(conn.opened), timeout)
    except BaseException:
        conn.transport.close()
        raise
    return conn
