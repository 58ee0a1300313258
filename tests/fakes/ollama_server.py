"""A fake Ollama server: POST /api/chat answered with the real NDJSON stream.

    server.push(ollama_stream(text="Hello"))
    server.push(ollama_stream(tool_calls=[("lookup_part", {"part": "P-7"})]))

Each line is a chat response object; content arrives in fragments with done=false, tool calls
arrive whole in one message (Ollama does not split their arguments), and the last line has
done=true, done_reason and the token counts (prompt_eval_count, eval_count).
"""

from __future__ import annotations

import json
from typing import Any

from tests.fakes.http import FakeServer, Reply, json_reply

_CREATED = "2026-11-30T04:00:00.000000Z"


def _line(body: dict[str, Any]) -> bytes:
    return (json.dumps(body) + "\n").encode()


def ollama_stream(
    *,
    text: str = "",
    tool_calls: list[tuple[str, dict[str, Any]]] | None = None,
    model: str = "llama3.1",
    done_reason: str = "stop",
    prompt_eval_count: int = 26,
    eval_count: int = 9,
) -> Reply:
    lines = []
    for i in range(0, len(text), 5):
        message = {"role": "assistant", "content": text[i : i + 5]}
        lines.append(_line({"model": model, "created_at": _CREATED, "message": message, "done": False}))
    if tool_calls:
        calls = [{"function": {"name": name, "arguments": args}} for name, args in tool_calls]
        message = {"role": "assistant", "content": "", "tool_calls": calls}
        lines.append(_line({"model": model, "created_at": _CREATED, "message": message, "done": False}))
    final = {
        "model": model,
        "created_at": _CREATED,
        "message": {"role": "assistant", "content": ""},
        "done": True,
        "done_reason": done_reason,
        "total_duration": 1_000_000,
        "load_duration": 10_000,
        "prompt_eval_count": prompt_eval_count,
        "prompt_eval_duration": 100_000,
        "eval_count": eval_count,
        "eval_duration": 500_000,
    }
    lines.append(_line(final))
    return Reply(status=200, chunks=lines, content_type="application/x-ndjson")


def ollama_error(status: int, message: str) -> Reply:
    return json_reply(status, {"error": message})


def ollama_stream_error(message: str) -> Reply:
    """A stream whose line carries an `error`, as Ollama reports failures mid-stream."""
    return Reply(status=200, chunks=[_line({"error": message})], content_type="application/x-ndjson")


class OllamaFakeServer(FakeServer):
    def chat_bodies(self) -> list[dict[str, Any]]:
        return [r.json for r in self.requests if r.path == "/api/chat"]
