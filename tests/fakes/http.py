"""A small scriptable HTTP server for provider fakes.

It listens on a free 127.0.0.1 port in a daemon thread, records every request (path, headers,
raw body and parsed JSON) and answers each with the next scripted `Reply` — a status, headers
and a list of body chunks sent with chunked transfer encoding, so SDKs see a real stream.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    chunks: list[bytes] = field(default_factory=list)
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    pause_seconds: float = 0.0  # a stall between chunks (a provider that stops sending mid-stream)


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    raw: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.raw) if self.raw else None


def json_reply(status: int, body: Any, headers: dict[str, str] | None = None) -> Reply:
    return Reply(status=status, chunks=[json.dumps(body).encode()], headers=headers or {})


class FakeServer:
    """Answers requests from a queue of replies; with the queue empty it asks `responder` (a model
    stand-in that answers from the request), else answers 500."""

    def __init__(self, responder: Callable[[RecordedRequest], Reply] | None = None) -> None:
        self.requests: list[RecordedRequest] = []
        self._replies: list[Reply] = []
        self._responder = responder
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
                return

            def do_GET(self) -> None:
                self._handle()

            def do_POST(self) -> None:
                self._handle()

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                reply = server._record(
                    RecordedRequest(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, raw)
                )
                self.send_response(reply.status)
                self.send_header("Content-Type", reply.content_type)
                self.send_header("Transfer-Encoding", "chunked")
                self.send_header("Connection", "close")
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.close_connection = True
                try:
                    for index, chunk in enumerate(reply.chunks):
                        if index and reply.pause_seconds:
                            time.sleep(reply.pause_seconds)
                        self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                        self.wfile.flush()
                    self.wfile.write(b"0\r\n\r\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (a deadline)
                    return

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="fake-provider", daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FakeServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def push(self, *replies: Reply) -> None:
        with self._lock:
            self._replies.extend(replies)

    def bodies(self) -> list[Any]:
        return [r.json for r in self.requests]

    def _record(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            if self._replies:
                return self._replies.pop(0)
        if self._responder is not None:
            return self._responder(request)
        return json_reply(500, {"error": "fake server: no scripted reply left"})

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
