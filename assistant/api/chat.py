"""REST fallback of the operator chat: POST /api/v1/agent/chat."""

from __future__ import annotations

from typing import Any, Literal

from django.http import HttpRequest
from ninja import Router, Schema
from pydantic import Field

from assistant.engines import author_engine
from assistant.services.chat import chat_turn
from core.access import OPERATOR, require_scopes
from core.agents.engines.fake import FakeEngine
from core.errors import InvalidInput
from core.json_types import BodyRowId
from core.throttling import CHAT, UserRateLimit, token_budget_check

router = Router(tags=["assistant"])


class ChatMessageIn(Schema):
    role: Literal["user", "assistant"]
    content: str = Field(max_length=20_000)


class ChatIn(Schema):
    messages: list[ChatMessageIn] = Field(min_length=1, max_length=50)
    session_id: BodyRowId | None = None  # 7 or 7.0; JSON true/false or "7" is not a session id


class ToolCallOut(Schema):
    name: str
    args: dict[str, Any]
    result_summary: str


class ChatOut(Schema):
    response: str
    tool_calls: list[ToolCallOut]
    session_id: int
    error: str = ""
    engine: str  # the engine that answered
    offline: bool  # as on the session's messages: true when the offline demo engine answered, not a model


@router.post("/chat", response=ChatOut, throttle=UserRateLimit(CHAT))
def chat(request: HttpRequest, payload: ChatIn) -> dict:
    require_scopes(request.user, OPERATOR)
    if payload.messages[-1].role != "user":
        raise InvalidInput("The last message must be the user's.", field="messages")
    engine = author_engine()
    token_budget_check(request.user, provider=engine.provider)
    messages = [m.model_dump() for m in payload.messages]
    if payload.session_id is not None:
        messages = messages[-1:]  # the session already holds the earlier turns
    outcome = chat_turn(user=request.user, messages=messages, session_id=payload.session_id, engine=engine)
    return {
        "response": outcome.response,
        "tool_calls": outcome.tool_calls,
        "session_id": outcome.session.pk,
        "error": outcome.error,
        "engine": engine.name,
        "offline": engine.provider == FakeEngine.provider,  # the engine used, never the answer's wording
    }
