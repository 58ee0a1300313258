"""A fake Anthropic Messages API: POST /v1/messages answered with the real SSE event stream.

    server = AnthropicFakeServer().start()
    server.push(anthropic_stream([thinking("Let me look.", "sig-1"), redacted("b64=="),
                                  tool_use("toolu_1", "lookup_part", {"part": "P-7"})], stop_reason="tool_use"))

Each block is streamed as the API does: content_block_start, deltas (text_delta, thinking_delta +
signature_delta, input_json_delta in pieces; redacted_thinking carries its data in the start
event), content_block_stop; then message_delta (stop_reason, usage) and message_stop.
"""

from __future__ import annotations

import json
from typing import Any

from tests.fakes.http import FakeServer, Reply, json_reply


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def thinking(value: str, signature: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": value, "signature": signature}


def redacted(data: str) -> dict[str, Any]:
    return {"type": "redacted_thinking", "data": data}


def tool_use(id: str, name: str, input: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": id, "name": name, "input": input}


def _event(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


def _pieces(value: str, size: int) -> list[str]:
    return [value[i : i + size] for i in range(0, len(value), size)] or [""]


def _block_events(index: int, block: dict[str, Any]) -> list[bytes]:
    kind = block["type"]
    events: list[bytes] = []
    if kind == "text":
        start = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": p} for p in _pieces(block["text"], 7)]
    elif kind == "thinking":
        start = {"type": "thinking", "thinking": "", "signature": ""}
        deltas = [{"type": "thinking_delta", "thinking": p} for p in _pieces(block["thinking"], 9)]
        deltas.append({"type": "signature_delta", "signature": block["signature"]})
    elif kind == "redacted_thinking":
        start, deltas = {"type": "redacted_thinking", "data": block["data"]}, []
    elif kind == "tool_use":
        start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in _pieces(json.dumps(block["input"]), 5)]
    else:
        raise ValueError(f"unknown block type {kind!r}")
    events.append(
        _event("content_block_start", {"type": "content_block_start", "index": index, "content_block": start})
    )
    for delta in deltas:
        events.append(_event("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}))
    events.append(_event("content_block_stop", {"type": "content_block_stop", "index": index}))
    return events


def anthropic_stream(
    blocks: list[dict[str, Any]],
    *,
    stop_reason: str = "end_turn",
    model: str = "claude-sonnet-4-6",
    input_tokens: int = 42,
    output_tokens: int = 17,
) -> Reply:
    start = {
        "type": "message_start",
        "message": {
            "id": "msg_fake01",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": 1},
        },
    }
    chunks = [_event("message_start", start), _event("ping", {"type": "ping"})]
    for index, block in enumerate(blocks):
        chunks.extend(_block_events(index, block))
    chunks.append(
        _event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": output_tokens},
            },
        )
    )
    chunks.append(_event("message_stop", {"type": "message_stop"}))
    return Reply(status=200, chunks=chunks, content_type="text/event-stream", headers={"request-id": "req_fake"})


def anthropic_error(status: int, message: str, kind: str = "api_error") -> Reply:
    """An error response; retry-after-ms keeps the SDK's retries fast in tests."""
    return json_reply(
        status, {"type": "error", "error": {"type": kind, "message": message}}, headers={"retry-after-ms": "5"}
    )


def anthropic_stream_error(message: str = "Overloaded") -> Reply:
    """A stream that starts and then fails with an `error` event, as the API does when overloaded."""
    chunks = [
        _event(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "msg_fake02",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-sonnet-4-6",
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 1, "output_tokens": 1},
                },
            },
        ),
        _event("error", {"type": "error", "error": {"type": "overloaded_error", "message": message}}),
    ]
    return Reply(status=200, chunks=chunks, content_type="text/event-stream")


class AnthropicFakeServer(FakeServer):
    """Records POST /v1/messages bodies; `message_bodies()` are what the SDK actually sent."""

    def message_bodies(self) -> list[dict[str, Any]]:
        return [r.json for r in self.requests if r.path.startswith("/v1/messages")]
