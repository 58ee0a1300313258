"""Sessions, turns, the one-shot prompt draft and runs."""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Router, Status

from assistant import selectors
from assistant.api.schemas import (
    MessageOut,
    PromptDraftIn,
    RunOut,
    SessionIn,
    SessionOut,
    SessionPatch,
    SessionTurnIn,
    TurnOut,
)
from assistant.choices import Mode
from assistant.engines import author_engine
from assistant.models import Run
from assistant.services.sessions import session_create, session_update
from assistant.services.turns import prompt_draft, session_turn
from core.access import OPERATOR, require_scopes
from core.agents.engines import get_engine
from core.json_types import RowId
from core.throttling import CHAT, COORDINATOR, UserRateLimit, rate_limit, token_budget_check

router = Router(tags=["assistant"])


def _session_out(session) -> dict:
    return {
        "id": session.pk,
        "owner_id": session.owner_id,
        "title": session.title,
        "mode": session.mode,
        "tool_approval": session.tool_approval,
        "archived": session.archived,
        "correlation_id": session.correlation_id,
        "created": session.created,
        "updated": session.updated,
    }


@router.get("/sessions", response=list[SessionOut])
def list_sessions(request: HttpRequest, owner_id: RowId | None = None, archived: bool | None = None) -> list[dict]:
    require_scopes(request.user, OPERATOR)
    return [
        _session_out(s) for s in selectors.sessions_visible(request.user, owner_id=owner_id, archived=archived)[:200]
    ]


@router.post("/sessions", response={201: SessionOut})
def create_session(request: HttpRequest, payload: SessionIn) -> Status:
    require_scopes(request.user, OPERATOR)
    return Status(201, _session_out(session_create(owner=request.user, title=payload.title, mode=payload.mode)))


@router.get("/sessions/{session_id}", response=SessionOut)
def get_session(request: HttpRequest, session_id: int) -> dict:
    require_scopes(request.user, OPERATOR)
    return _session_out(selectors.session_get(request.user, session_id))


@router.patch("/sessions/{session_id}", response=SessionOut)
def patch_session(request: HttpRequest, session_id: int, payload: SessionPatch) -> dict:
    require_scopes(request.user, OPERATOR)
    # The confirm gate (tool_approval) is the owner's own: an admin may read the session, not switch it.
    get = selectors.session_owned if payload.tool_approval is not None else selectors.session_get
    session = get(request.user, session_id)
    return _session_out(
        session_update(
            session=session,
            title=payload.title,
            archived=payload.archived,
            mode=payload.mode,
            tool_approval=payload.tool_approval,
        )
    )


@router.get("/sessions/{session_id}/messages", response=list[MessageOut])
def list_messages(request: HttpRequest, session_id: int) -> list:
    require_scopes(request.user, OPERATOR)
    return list(selectors.session_get(request.user, session_id).messages.all())


@router.post("/sessions/{session_id}/messages", response=TurnOut, throttle=UserRateLimit(CHAT))
def post_message(request: HttpRequest, session_id: int, payload: SessionTurnIn) -> dict:
    require_scopes(request.user, OPERATOR)
    # Only the owner speaks in a session: an admin's turn would show as the owner's own words and
    # could leave a confirm card (a held call) in it for the owner to run with their scopes.
    session = selectors.session_owned(request.user, session_id)
    if (payload.mode or session.mode) == Mode.COORDINATE:
        rate_limit(COORDINATOR, request.user)  # the same limit as the coordinator's own route
        token_budget_check(request.user, provider=get_engine().provider)
    else:
        token_budget_check(request.user, provider=author_engine().provider)
    outcome = session_turn(session=session, user=request.user, content=payload.content, mode=payload.mode)
    return {
        "message": outcome.message,
        "run_id": outcome.run.pk,
        "reply": outcome.reply,
        "questions": outcome.questions,
        "drafts": outcome.drafts,
        "delta_errors": outcome.delta_errors,
        "plan_card": outcome.plan_card,
        "tool_calls": outcome.tool_calls,
        "coordinator": outcome.coordinator,
        "pending_calls": outcome.pending_calls,
    }


@router.post("/prompt-draft", throttle=UserRateLimit(CHAT))
def post_prompt_draft(request: HttpRequest, payload: PromptDraftIn) -> dict:
    require_scopes(request.user, OPERATOR)
    token_budget_check(request.user, provider=author_engine().provider)
    return prompt_draft(user=request.user, content=payload.content, mode=payload.mode)


@router.get("/runs/{run_id}", response=RunOut)
def get_run(request: HttpRequest, run_id: int) -> Run:
    require_scopes(request.user, OPERATOR)
    return selectors.run_get(request.user, run_id)
