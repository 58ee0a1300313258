"""A fake OpenAI Chat Completions API: POST /v1/chat/completions answered with chunk SSE.

    server.push(openai_stream(text="Hello"))
    server.push(openai_stream(tool_calls=[("call_1", "lookup_part", {"part": "P-7"})]))

Streams `chat.completion.chunk` objects as the API does: a role chunk, content deltas, tool call
deltas (id/name first, then the arguments JSON in pieces, keyed by index), a finish chunk, a usage
chunk (stream_options.include_usage) and `data: [DONE]`.
"""

from __future__ import annotations

import json
from typing import Any

from tests.fakes.http import FakeServer, Reply, json_reply


def _chunk(delta: dict[str, Any] | None, finish_reason: str | None = None, usage: dict | None = None) -> bytes:
    body: dict[str, Any] = {
        "id": "chatcmpl-fake01",
        "object": "chat.completion.chunk",
        "created": 1_764_000_000,
        "model": "gpt-4.1-mini",
        "system_fingerprint": "fp_fake",
        "choices": []
        if delta is None
        else [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}],
    }
    if usage is not None:
        body["usage"] = usage
    return f"data: {json.dumps(body)}\n\n".encode()


def openai_stream(
    *,
    text: str = "",
    tool_calls: list[tuple[str, str, dict[str, Any]]] | None = None,
    finish_reason: str | None = None,
    prompt_tokens: int = 30,
    completion_tokens: int = 12,
) -> Reply:
    chunks = [_chunk({"role": "assistant", "content": "", "refusal": None})]
    for i in range(0, len(text), 6):
        chunks.append(_chunk({"content": text[i : i + 6]}))
    for index, (call_id, name, args) in enumerate(tool_calls or []):
        head = {"index": index, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
        chunks.append(_chunk({"tool_calls": [head]}))
        raw = json.dumps(args)
        for i in range(0, len(raw), 4):
            chunks.append(_chunk({"tool_calls": [{"index": index, "function": {"arguments": raw[i : i + 4]}}]}))
    chunks.append(_chunk({}, finish_reason or ("tool_calls" if tool_calls else "stop")))
    usage = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    chunks.append(_chunk(None, usage=usage))
    chunks.append(b"data: [DONE]\n\n")
    return Reply(status=200, chunks=chunks, content_type="text/event-stream")


def openai_error(status: int, message: str, kind: str = "server_error") -> Reply:
    body = {"error": {"message": message, "type": kind, "param": None, "code": None}}
    return json_reply(status, body, headers={"retry-after-ms": "5"})


class OpenAIFakeServer(FakeServer):
    def chat_bodies(self) -> list[dict[str, Any]]:
        return [r.json for r in self.requests if r.path.endswith("/chat/completions")]
