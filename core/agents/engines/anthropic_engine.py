"""The Anthropic engine: official SDK, streaming Messages API, tool use, extended thinking.

One process-wide `AsyncAnthropic` client lives on one background event-loop thread owned by
this module, so the async client (and its connection pool) never crosses event loops. The
synchronous `complete` submits a coroutine to that loop and drains a queue of deltas on the
caller's thread — `on_delta` therefore runs where the agent loop runs (it may touch the DB or
a channel layer), never on the background loop.

With thinking on, the signed `thinking` and `redacted_thinking` blocks are returned verbatim
and in order in `EngineTurn.content`; the loop sends that content back as the assistant turn
with the tool results, which is what the API requires for the continuation.
"""

from __future__ import annotations

import asyncio
import json
import queue
import threading
from concurrent.futures import Future
from typing import Any

from django.conf import settings

from core.agents.engines.base import Engine, model_for, register_engine
from core.agents.types import DeltaCallback, EngineError, EngineRequest, EngineTurn, Usage
from core.loops import daemon_loop

CLIENT_TIMEOUT = 60.0
CLIENT_MAX_RETRIES = 2
MIN_THINKING_BUDGET = 1024  # the API's minimum budget_tokens

_state_lock = threading.Lock()
_client: Any = None
_client_key: tuple[str, str | None] | None = None
_closing: set[asyncio.Task] = set()
_DONE = object()


def _background_loop() -> asyncio.AbstractEventLoop:
    """The engine's one event loop, running forever in a daemon thread."""
    return daemon_loop("anthropic-engine")


def _get_client() -> Any:
    """The process-wide AsyncAnthropic client; rebuilt only when the key or base URL changes.

    Called on the background loop, so the client is created and used on that loop only.
    """
    global _client, _client_key
    from anthropic import AsyncAnthropic  # lazy: the provider SDK loads only when this engine is used

    key = (settings.ANTHROPIC_API_KEY, settings.ANTHROPIC_BASE_URL)
    with _state_lock:
        if _client is None or _client_key != key:
            old = _client
            _client = AsyncAnthropic(
                api_key=key[0] or None,
                base_url=key[1] or None,
                timeout=CLIENT_TIMEOUT,
                max_retries=CLIENT_MAX_RETRIES,
            )
            _client_key = key
            if old is not None:  # settings changed: release the old connection pool
                task = asyncio.get_running_loop().create_task(old.close())
                _closing.add(task)
                task.add_done_callback(_closing.discard)
        return _client


def thinking_budget(max_tokens: int) -> int:
    """Thinking budget: ARIA_THINKING_BUDGET if set, else max_tokens, never below the API minimum."""
    budget = int(getattr(settings, "ARIA_THINKING_BUDGET", 0) or max_tokens)
    return max(MIN_THINKING_BUDGET, budget)


def build_params(request: EngineRequest) -> dict[str, Any]:
    """The Messages API parameters for one turn. Messages go through untouched (thinking blocks
    included), so a continuation carries them byte-for-byte."""
    params: dict[str, Any] = {
        "model": request.model if request.model and request.model != "fake" else model_for(request.use_case),
        "messages": request.messages,
        "max_tokens": request.max_tokens,
    }
    if request.system:
        params["system"] = request.system
    if request.tools:
        params["tools"] = request.tools
        # With thinking only auto/none are allowed; auto is what every agent wants anyway.
        params["tool_choice"] = {"type": "auto"}
    if request.thinking:
        budget = thinking_budget(request.max_tokens)
        params["thinking"] = {"type": "enabled", "budget_tokens": budget}
        params["max_tokens"] = request.max_tokens + budget  # must exceed the budget
    return params


class _TurnBuilder:
    """Accumulates the raw stream events into Anthropic-shape content blocks."""

    def __init__(self, emit: DeltaCallback) -> None:
        self.emit = emit
        self.blocks: dict[int, dict[str, Any]] = {}
        self.json_parts: dict[int, list[str]] = {}
        self.stop_reason = "end_turn"
        self.usage = Usage()
        self.model = ""
        self.started = False
        self.stopped = False

    def feed(self, event: Any) -> None:
        kind = event.type
        if kind == "message_start":
            self.started = True
            self.model = event.message.model
            self.usage.input_tokens = event.message.usage.input_tokens or 0
            self.usage.output_tokens = event.message.usage.output_tokens or 0
        elif kind == "content_block_start":
            self.blocks[event.index] = _start_block(event.content_block)
        elif kind == "content_block_delta":
            self._delta(event.index, event.delta)
        elif kind == "content_block_stop":
            block = self.blocks.get(event.index)
            if block is not None and block["type"] == "tool_use":
                raw = "".join(self.json_parts.pop(event.index, []))
                block["input"] = _parse_input(raw, block["input"])
        elif kind == "message_delta":
            self.stop_reason = event.delta.stop_reason or self.stop_reason
            if event.usage.output_tokens is not None:
                self.usage.output_tokens = event.usage.output_tokens
            if getattr(event.usage, "input_tokens", None):
                self.usage.input_tokens = event.usage.input_tokens
        elif kind == "message_stop":
            self.stopped = True

    def _delta(self, index: int, delta: Any) -> None:
        block = self.blocks[index]
        if delta.type == "text_delta":
            block["text"] += delta.text
            self.emit("text", delta.text)
        elif delta.type == "thinking_delta":
            block["thinking"] += delta.thinking
            self.emit("thinking", delta.thinking)
        elif delta.type == "signature_delta":
            block["signature"] = delta.signature
        elif delta.type == "input_json_delta":
            self.json_parts.setdefault(index, []).append(delta.partial_json)
        # citations_delta and future delta types carry nothing the loop replays

    def turn(self) -> EngineTurn:
        if not self.started or not self.stopped:
            raise EngineError("Anthropic stream ended before message_stop; the response was incomplete.")
        content = [self.blocks[i] for i in sorted(self.blocks)]
        return EngineTurn(content=content, stop_reason=self.stop_reason, usage=self.usage, model=self.model)


def _start_block(block: Any) -> dict[str, Any]:
    kind = block.type
    if kind == "text":
        return {"type": "text", "text": block.text or ""}
    if kind == "thinking":
        return {"type": "thinking", "thinking": block.thinking or "", "signature": block.signature or ""}
    if kind == "redacted_thinking":
        return {"type": "redacted_thinking", "data": block.data}
    if kind == "tool_use":
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": dict(block.input or {})}
    return block.to_dict()  # server tool blocks etc.: replayed as the API sent them


def _parse_input(raw: str, default: dict[str, Any]) -> dict[str, Any]:
    if not raw.strip():
        return default
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise EngineError(f"Anthropic returned invalid tool input JSON: {exc}") from exc
    return value if isinstance(value, dict) else {"value": value}


def _engine_error(exc: Exception) -> EngineError:
    import anthropic  # lazy: the provider SDK loads only when this engine is used

    if isinstance(exc, EngineError):
        return exc
    if isinstance(exc, anthropic.APIStatusError):
        return EngineError(f"Anthropic API error {exc.status_code}: {_error_message(exc)}")
    if isinstance(exc, anthropic.APITimeoutError):
        return EngineError(f"Anthropic API timed out after {CLIENT_TIMEOUT:.0f}s.")
    if isinstance(exc, anthropic.APIConnectionError):
        return EngineError(f"Anthropic API unreachable ({settings.ANTHROPIC_BASE_URL or 'api.anthropic.com'}).")
    if isinstance(exc, anthropic.AnthropicError):
        return EngineError(f"Anthropic client error: {exc}")
    return EngineError(f"Anthropic returned an invalid response: {type(exc).__name__}: {exc}")


def _error_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and error.get("message"):
            return f"{error.get('type', 'error')}: {error['message']}"
    return str(getattr(exc, "message", exc))


class AnthropicEngine(Engine):
    name = "anthropic"
    provider = "anthropic"
    supports_thinking = True

    def complete(self, request: EngineRequest, *, on_delta: DeltaCallback | None = None) -> EngineTurn:
        deltas: queue.SimpleQueue = queue.SimpleQueue()
        loop = _background_loop()
        future: Future = asyncio.run_coroutine_threadsafe(
            asyncio.wait_for(self._stream(request, deltas), request.deadline_seconds), loop
        )
        while True:  # deliver deltas on the caller's thread as they arrive
            try:
                item = deltas.get(timeout=0.5)
            except queue.Empty:
                if future.done():  # cancelled before it could signal the end
                    break
                continue
            if item is _DONE:
                break
            if on_delta is not None:
                try:
                    on_delta(*item)
                except BaseException:
                    future.cancel()  # the caller is gone: stop streaming
                    raise
        if future.cancelled():
            raise EngineError("Anthropic request was cancelled before it finished.")
        try:
            return future.result()
        except TimeoutError as exc:
            raise EngineError(
                f"Anthropic call abandoned at the run's deadline ({request.deadline_seconds:.1f}s)."
            ) from exc
        except Exception as exc:
            raise _engine_error(exc) from exc

    async def _stream(self, request: EngineRequest, deltas: queue.SimpleQueue) -> EngineTurn:
        try:
            builder = _TurnBuilder(lambda kind, text: deltas.put((kind, text)))
            client = _get_client()
            stream = await client.messages.create(**build_params(request), stream=True)
            async with stream:
                async for event in stream:
                    builder.feed(event)
            return builder.turn()
        finally:
            deltas.put(_DONE)


@register_engine("anthropic")
def _build() -> Engine:
    return AnthropicEngine()
