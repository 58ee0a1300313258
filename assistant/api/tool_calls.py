"""Held tool calls of build mode (tool_approval=ask): list a session's, confirm or reject one.

Only the session's owner sees and decides them; the confirm body carries no arguments (a client
that sends any is refused): what runs is the call as the model proposed it, stored server-side."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Router

from assistant import selectors
from assistant.api.schemas import PendingCallOut, ToolCallConfirmIn, ToolCallRejectIn
from assistant.models import PendingToolCall
from assistant.services.tool_calls import pending_call_get, pending_call_out, tool_call_confirm, tool_call_reject
from core.access import OPERATOR, require_scopes

router = Router(tags=["assistant"])


@router.get("/sessions/{session_id}/tool-calls", response=list[PendingCallOut])
def list_tool_calls(request: HttpRequest, session_id: int, status: str | None = None) -> list[dict[str, Any]]:
    require_scopes(request.user, OPERATOR)
    session = selectors.session_get(request.user, session_id)
    qs = PendingToolCall.objects.filter(session=session, session__owner=request.user)
    if status:
        qs = qs.filter(status=status)
    return [pending_call_out(c) for c in qs.order_by("id")[:200]]


@router.get("/tool-calls/{call_id}", response=PendingCallOut)
def get_tool_call(request: HttpRequest, call_id: int) -> dict[str, Any]:
    require_scopes(request.user, OPERATOR)
    return pending_call_out(pending_call_get(request.user, call_id))


@router.post("/tool-calls/{call_id}/confirm", response=PendingCallOut)
def confirm_tool_call(request: HttpRequest, call_id: int, payload: ToolCallConfirmIn) -> dict[str, Any]:
    require_scopes(request.user, OPERATOR)
    return pending_call_out(tool_call_confirm(user=request.user, call_id=call_id))


@router.post("/tool-calls/{call_id}/reject", response=PendingCallOut)
def reject_tool_call(request: HttpRequest, call_id: int, payload: ToolCallRejectIn) -> dict[str, Any]:
    require_scopes(request.user, OPERATOR)
    return pending_call_out(tool_call_reject(user=request.user, call_id=call_id, reason=payload.reason))
