"""Intent workbench routes: intent/resolve → plans → plans/latest → plans/execute → operations/{id}.

The session-scoped twins (/sessions/{id}/…, the seed's paths) live in session_workbench.py and
call the same lookups below, with the session as an extra scope.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet
from django.http import HttpRequest
from ninja import Router, Schema, Status
from pydantic import Field, StrictBool

from assistant import selectors
from assistant.intents import INTENTS
from assistant.models import Operation, Session
from assistant.services.operations import intent_resolve, operation_execute, operation_plan
from core.access import OPERATOR, get_owned_or_404, require_scopes
from core.errors import NotFound
from core.json_types import BodyRowId

router = Router(tags=["assistant"])


class ResolveIn(Schema):
    text: str = Field(min_length=1, max_length=5000)


IntentName = Literal[tuple(INTENTS)]  # type: ignore[valid-type]  # documented as an enum in the schema


class PlanBody(Schema):
    intent: IntentName
    slots: dict[str, Any] = Field(default_factory=dict)
    text: str = Field(default="", max_length=5000)


class PlanIn(PlanBody):
    session_id: BodyRowId | None = None  # 7 or 7.0; JSON true/false or "7" is not a session id


class ExecuteIn(Schema):
    plan_id: BodyRowId
    confirm: StrictBool = False  # only JSON true confirms: "yes", "false" or 1 is a 422


class OperationOut(Schema):
    id: int
    session_id: int | None
    intent: str
    slots: dict[str, Any]
    preview: dict[str, Any]
    status: str
    result: dict[str, Any]
    error: str
    created: datetime
    executed_at: datetime | None


def _operations(session: Session | None) -> QuerySet[Operation]:
    """Every operation, or one session's; owner scoping is the caller's lookup."""
    qs = Operation.objects.all()
    return qs.filter(session=session) if session is not None else qs


def operation_get(user: AbstractBaseUser, operation_id: int, session: Session | None = None) -> Operation:
    """The caller's operation (admins: anyone's); another owner's, or another session's, is a 404."""
    return get_owned_or_404(_operations(session), user, pk=operation_id)


def operation_owned(user: AbstractBaseUser, operation_id: int, session: Session | None = None) -> Operation:
    """The caller's own operation, to execute: an admin reads anyone's, but acts only in their own."""
    operation = _operations(session).filter(pk=operation_id, owner_id=user.pk).first()
    if operation is None:
        raise NotFound("Operation not found.")
    return operation


def operation_latest(user: AbstractBaseUser, session: Session | None = None) -> Operation:
    """The newest operation still waiting for its confirmation; 404 when there is none."""
    operation = _operations(session).filter(owner=user, status=Operation.Status.PLANNED).first()
    if operation is None:
        raise NotFound("No planned operation.")
    return operation


def plan_operation(request: HttpRequest, payload: PlanBody, session: Session | None) -> Operation:
    return operation_plan(
        owner=request.user, intent=payload.intent, slots=payload.slots, text=payload.text, session=session
    )


@router.post("/intent/resolve")
def resolve(request: HttpRequest, payload: ResolveIn) -> dict:
    require_scopes(request.user, OPERATOR)
    return intent_resolve(text=payload.text)


@router.post("/plans", response={201: OperationOut})
def plan(request: HttpRequest, payload: PlanIn) -> Status:
    require_scopes(request.user, OPERATOR)
    # Planning in a session acts in it: its owner's alone, admins included (as /sessions/{id}/plans).
    session = selectors.session_owned(request.user, payload.session_id) if payload.session_id else None
    return Status(201, plan_operation(request, payload, session))


@router.get("/plans/latest", response=OperationOut)
def latest(request: HttpRequest) -> Operation:
    require_scopes(request.user, OPERATOR)
    return operation_latest(request.user)


@router.post("/plans/execute", response=OperationOut)
def execute(request: HttpRequest, payload: ExecuteIn) -> Operation:
    require_scopes(request.user, OPERATOR)
    operation = operation_owned(request.user, payload.plan_id)
    return operation_execute(operation=operation, actor=request.user, confirm=payload.confirm)


@router.get("/operations/{operation_id}", response=OperationOut)
def get_operation(request: HttpRequest, operation_id: int) -> Operation:
    require_scopes(request.user, OPERATOR)
    return operation_get(request.user, operation_id)
