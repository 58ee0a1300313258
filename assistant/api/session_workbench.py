"""The seed's session-scoped routes, beside the flat ones: /sessions/{id}/drafts and the intent
workbench under /sessions/{id}/… (intent/resolve, plans, plans/latest, plans/execute,
operations/{op}), so a client written against the seed's API keeps working.

Same services and lookups as workbench.py; the session is fetched owner-scoped first (another
user's session is a 404), and operations are narrowed to that session.
"""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Router, Status

from assistant import selectors
from assistant.api.schemas import DraftOut, with_status_reasons
from assistant.api.workbench import (
    ExecuteIn,
    OperationOut,
    PlanBody,
    ResolveIn,
    operation_get,
    operation_latest,
    operation_owned,
    plan_operation,
)
from assistant.choices import DraftStatus
from assistant.models import Operation, Session
from assistant.services.operations import intent_resolve, operation_execute
from core.access import OPERATOR, require_scopes

router = Router(tags=["assistant"])
BASE = "/sessions/{session_id}"


def _session(request: HttpRequest, session_id: int, *, acting: bool = False) -> Session:
    """Reading: the owner's session (an admin may look). Acting in it — resolving, planning,
    executing — is its owner's alone, admins included, like its messages and held tool calls."""
    require_scopes(request.user, OPERATOR)
    if acting:
        return selectors.session_owned(request.user, session_id)
    return selectors.session_get(request.user, session_id)


@router.get(f"{BASE}/drafts", response=list[DraftOut])
def list_session_drafts(request: HttpRequest, session_id: int, status: DraftStatus | None = None) -> list:
    session = _session(request, session_id)
    qs = selectors.drafts_visible(request.user).filter(session=session)
    if status:
        qs = qs.filter(status=status)
    return with_status_reasons(list(qs[:200]), request.user)


@router.post(f"{BASE}/intent/resolve")
def resolve_in_session(request: HttpRequest, session_id: int, payload: ResolveIn) -> dict:
    _session(request, session_id, acting=True)
    return intent_resolve(text=payload.text)


@router.post(f"{BASE}/plans", response={201: OperationOut})
def plan_in_session(request: HttpRequest, session_id: int, payload: PlanBody) -> Status:
    session = _session(request, session_id, acting=True)
    return Status(201, plan_operation(request, payload, session))


@router.get(f"{BASE}/plans/latest", response=OperationOut)
def latest_in_session(request: HttpRequest, session_id: int) -> Operation:
    return operation_latest(request.user, _session(request, session_id))


@router.post(f"{BASE}/plans/execute", response=OperationOut)
def execute_in_session(request: HttpRequest, session_id: int, payload: ExecuteIn) -> Operation:
    operation = operation_owned(request.user, payload.plan_id, _session(request, session_id, acting=True))
    return operation_execute(operation=operation, actor=request.user, confirm=payload.confirm)


@router.get(f"{BASE}/operations/{{operation_id}}", response=OperationOut)
def get_operation_in_session(request: HttpRequest, session_id: int, operation_id: int) -> Operation:
    return operation_get(request.user, operation_id, _session(request, session_id))
