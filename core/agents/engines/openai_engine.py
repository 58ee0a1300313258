"""The OpenAI engine: official `openai` SDK, streaming Chat Completions with tool calling.

Translates the Anthropic-shape history both ways: system → a system message; assistant text and
tool_use blocks → one assistant message with `tool_calls`; tool_result blocks → `role: "tool"`
messages (placed right after the assistant message that called them); thinking blocks are
dropped (OpenAI cannot verify Anthropic signatures). Tool-call deltas are accumulated by index.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from django.conf import settings

from core.agents.engines.base import Engine, past_deadline, register_engine
from core.agents.engines.catalog import block_text, blocks_of, function_tools, provider_model
from core.agents.types import DeltaCallback, EngineError, EngineRequest, EngineTurn, Usage

CLIENT_TIMEOUT = 60.0
CLIENT_MAX_RETRIES = 2
_FINISH = {"stop": "end_turn", "tool_calls": "tool_use", "function_call": "tool_use", "length": "max_tokens"}

_lock = threading.Lock()
_client: Any = None
_client_key: tuple[str, str | None] | None = None


def _get_client() -> Any:
    """The process-wide OpenAI client; rebuilt only when the key or base URL changes."""
    global _client, _client_key
    from openai import OpenAI  # lazy: the provider SDK loads only when this engine is used

    key = (settings.OPENAI_API_KEY, settings.OPENAI_BASE_URL)
    with _lock:
        if _client is None or _client_key != key:
            _client = OpenAI(
                api_key=key[0] or "unset",
                base_url=key[1] or None,
                timeout=CLIENT_TIMEOUT,
                max_retries=CLIENT_MAX_RETRIES,
            )
            _client_key = key
        return _client


def to_openai_messages(system: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Anthropic-shape history → Chat Completions messages."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for message in messages:
        blocks = blocks_of(message)
        if message["role"] == "assistant":
            text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
            calls = [
                {
                    "id": b["id"],
                    "type": "function",
                    "function": {"name": b["name"], "arguments": json.dumps(b.get("input") or {})},
                }
                for b in blocks
                if b.get("type") == "tool_use"
            ]
            assistant: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                assistant["tool_calls"] = calls
            out.append(assistant)
            continue
        for block in blocks:  # tool results first: they must follow the assistant's tool_calls
            if block.get("type") == "tool_result":
                content = block_text(block.get("content"))
                if block.get("is_error") and not content.startswith("ERROR"):
                    content = f"ERROR: {content}"
                out.append({"role": "tool", "tool_call_id": block["tool_use_id"], "content": content})
        text = "\n".join(b.get("text", "") for b in blocks if b.get("type") == "text")
        if text:
            out.append({"role": "user", "content": text})
    return out


def _parse_arguments(raw: str) -> dict[str, Any]:
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        # Let the capability's validation tell the model what was wrong, so it can repair the call.
        return {"_invalid_json_arguments": raw}
    return value if isinstance(value, dict) else {"value": value}


def _engine_error(exc: Exception) -> EngineError:
    import openai  # lazy: the provider SDK loads only when this engine is used

    if isinstance(exc, openai.APIStatusError):
        body = exc.body if isinstance(exc.body, dict) else {}
        error = body.get("error", body) if isinstance(body, dict) else {}
        message = error.get("message") if isinstance(error, dict) else None
        return EngineError(f"OpenAI API error {exc.status_code}: {message or exc.message}")
    if isinstance(exc, openai.APITimeoutError):
        return EngineError(f"OpenAI API timed out after {CLIENT_TIMEOUT:.0f}s.")
    if isinstance(exc, openai.APIConnectionError):
        return EngineError(f"OpenAI API unreachable ({settings.OPENAI_BASE_URL or 'api.openai.com'}).")
    if isinstance(exc, openai.OpenAIError):
        return EngineError(f"OpenAI client error: {exc}")
    return EngineError(f"OpenAI returned an invalid response: {type(exc).__name__}: {exc}")


class OpenAIEngine(Engine):
    name = "openai"
    provider = "openai"
    supports_thinking = False

    def complete(self, request: EngineRequest, *, on_delta: DeltaCallback | None = None) -> EngineTurn:
        model = provider_model("openai", request.use_case, request.model)
        params: dict[str, Any] = {
            "model": model,
            "messages": to_openai_messages(request.system, request.messages),
            "max_completion_tokens": request.max_tokens,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if request.tools:
            params["tools"] = function_tools(request.tools)
            params["tool_choice"] = "auto"
        if request.deadline_seconds is not None:
            params["timeout"] = min(CLIENT_TIMEOUT, request.deadline_seconds)
        try:
            return self._stream(params, model, on_delta, past_deadline(request))
        except EngineError:
            raise
        except Exception as exc:
            raise _engine_error(exc) from exc

    def _stream(
        self, params: dict[str, Any], model: str, on_delta: DeltaCallback | None, late: Callable[[], bool]
    ) -> EngineTurn:
        text: list[str] = []
        calls: dict[int, dict[str, Any]] = {}
        finish: str | None = None
        usage = Usage()
        seen = False
        stream = _get_client().chat.completions.create(**params)
        with stream:
            for chunk in stream:
                if late():
                    raise EngineError("OpenAI call abandoned at the run's deadline.")
                seen = True
                model = chunk.model or model
                if chunk.usage is not None:
                    usage = Usage(chunk.usage.prompt_tokens or 0, chunk.usage.completion_tokens or 0)
                for choice in chunk.choices:
                    delta = choice.delta
                    if delta is not None and delta.content:
                        text.append(delta.content)
                        if on_delta is not None:
                            on_delta("text", delta.content)
                    for call in (delta.tool_calls if delta is not None else None) or []:
                        slot = calls.setdefault(call.index, {"id": "", "name": "", "arguments": []})
                        if call.id:
                            slot["id"] = call.id
                        if call.function is not None:
                            slot["name"] += call.function.name or ""
                            slot["arguments"].append(call.function.arguments or "")
                    if choice.finish_reason:
                        finish = choice.finish_reason
        if not seen or finish is None:
            raise EngineError("OpenAI stream ended without a finish_reason; the response was incomplete.")
        content: list[dict[str, Any]] = [{"type": "text", "text": "".join(text)}] if text else []
        for index in sorted(calls):
            slot = calls[index]
            content.append(
                {
                    "type": "tool_use",
                    "id": slot["id"] or f"call_{index}",
                    "name": slot["name"],
                    "input": _parse_arguments("".join(slot["arguments"])),
                }
            )
        stop = "tool_use" if calls else _FINISH.get(finish, "end_turn")
        return EngineTurn(content=content, stop_reason=stop, usage=usage, model=model)


@register_engine("openai")
def _build() -> Engine:
    return OpenAIEngine()
