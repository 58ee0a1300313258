"""The Ollama engine: official `ollama` client, streaming /api/chat with tool calling.

The whole conversation goes to the model as chat messages — system, user, assistant (with its
`tool_calls`) and `role: "tool"` results named after the tool — so a local model sees the same
multi-turn history a hosted one does. Ollama tool calls carry no id; the engine generates one
per call and maps each tool_result back to its tool's name on the next request.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from typing import Any

from django.conf import settings

from core.agents.engines.base import Engine, past_deadline, register_engine
from core.agents.engines.catalog import block_text, blocks_of, function_tools, provider_model
from core.agents.types import DeltaCallback, EngineError, EngineRequest, EngineTurn, Usage

CLIENT_TIMEOUT = 60.0
DEFAULT_HOST = "http://127.0.0.1:11434"
_DONE_REASON = {"stop": "end_turn", "length": "max_tokens"}

_lock = threading.Lock()
_client: Any = None
_client_host: str | None = None


def _get_client() -> Any:
    """The process-wide Ollama client; rebuilt only when OLLAMA_HOST changes."""
    global _client, _client_host
    from ollama import Client  # lazy: the provider SDK loads only when this engine is used

    host = settings.OLLAMA_HOST or DEFAULT_HOST
    with _lock:
        if _client is None or _client_host != host:
            _client = Client(host=host, timeout=CLIENT_TIMEOUT)
            _client_host = host
        return _client


def to_ollama_messages(system: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Anthropic-shape history → Ollama chat messages (tool results named after their tool)."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    tool_names: dict[str, str] = {}
    for message in messages:
        blocks = blocks_of(message)
        if message["role"] == "assistant":
            text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
            calls = []
            for block in blocks:
                if block.get("type") == "tool_use":
                    tool_names[block["id"]] = block["name"]
                    calls.append({"function": {"name": block["name"], "arguments": block.get("input") or {}}})
            assistant: dict[str, Any] = {"role": "assistant", "content": text}
            if calls:
                assistant["tool_calls"] = calls
            out.append(assistant)
            continue
        for block in blocks:
            if block.get("type") == "tool_result":
                content = block_text(block.get("content"))
                if block.get("is_error") and not content.startswith("ERROR"):
                    content = f"ERROR: {content}"
                tool = {"role": "tool", "content": content}
                if block.get("tool_use_id") in tool_names:
                    tool["tool_name"] = tool_names[block["tool_use_id"]]
                out.append(tool)
        text = "\n".join(b.get("text", "") for b in blocks if b.get("type") == "text")
        if text:
            out.append({"role": "user", "content": text})
    return out


def _engine_error(exc: Exception) -> EngineError:
    import httpx  # lazy: the provider SDK loads only when this engine is used
    import ollama

    if isinstance(exc, ollama.ResponseError):
        status = f" {exc.status_code}" if exc.status_code and exc.status_code > 0 else ""
        return EngineError(f"Ollama error{status}: {exc.error}")
    if isinstance(exc, ConnectionError | httpx.ConnectError):
        return EngineError(f"Ollama unreachable at {settings.OLLAMA_HOST or DEFAULT_HOST}.")
    if isinstance(exc, httpx.TimeoutException):
        return EngineError(f"Ollama timed out after {CLIENT_TIMEOUT:.0f}s.")
    if isinstance(exc, httpx.HTTPError):
        return EngineError(f"Ollama request failed: {exc}")
    return EngineError(f"Ollama returned an invalid response: {type(exc).__name__}: {exc}")


class OllamaEngine(Engine):
    name = "ollama"
    provider = "ollama"
    supports_thinking = False

    def complete(self, request: EngineRequest, *, on_delta: DeltaCallback | None = None) -> EngineTurn:
        model = provider_model("ollama", request.use_case, request.model)
        kwargs: dict[str, Any] = {
            "model": model,
            "messages": to_ollama_messages(request.system, request.messages),
            "stream": True,
            "options": {"num_predict": request.max_tokens},
        }
        if request.tools:
            kwargs["tools"] = function_tools(request.tools)
        try:
            return self._stream(kwargs, model, on_delta, past_deadline(request))
        except EngineError:
            raise
        except Exception as exc:
            raise _engine_error(exc) from exc

    def _stream(
        self, kwargs: dict[str, Any], model: str, on_delta: DeltaCallback | None, late: Callable[[], bool]
    ) -> EngineTurn:
        text: list[str] = []
        content: list[dict[str, Any]] = []
        usage = Usage()
        done_reason: str | None = None
        for part in _get_client().chat(**kwargs):
            if late():
                raise EngineError("Ollama call abandoned at the run's deadline.")
            message = part.message
            if message.thinking and on_delta is not None:  # shown live, not replayed (unsigned)
                on_delta("thinking", message.thinking)
            if message.content:
                text.append(message.content)
                if on_delta is not None:
                    on_delta("text", message.content)
            for call in message.tool_calls or []:
                content.append(
                    {
                        "type": "tool_use",
                        "id": f"ollama_{uuid.uuid4().hex[:16]}",
                        "name": call.function.name,
                        "input": dict(call.function.arguments or {}),
                    }
                )
            if part.done:
                done_reason = part.done_reason or "stop"
                usage = Usage(part.prompt_eval_count or 0, part.eval_count or 0)
                model = part.model or model
        if done_reason is None:
            raise EngineError("Ollama stream ended without a done message; the response was incomplete.")
        if text:
            content.insert(0, {"type": "text", "text": "".join(text)})
        has_calls = any(b["type"] == "tool_use" for b in content)
        stop = "tool_use" if has_calls else _DONE_REASON.get(done_reason, "end_turn")
        return EngineTurn(content=content, stop_reason=stop, usage=usage, model=model)


@register_engine("ollama")
def _build() -> Engine:
    return OllamaEngine()
