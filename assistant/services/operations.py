"""Intent workbench: resolve → plan (a previewed operation) → execute on confirmation."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from assistant.conf import get_config
from assistant.intents import INTENTS, draft_for, resolve_intent
from assistant.models import Operation, Session
from assistant.services.drafts import draft_create, draft_name_checked
from core.audit import audit_record
from core.errors import Conflict, DomainError, InvalidInput

PLANNED_KEPT = 50  # unexecuted previews kept per owner (the newest)


def intent_resolve(*, text: str) -> dict[str, Any]:
    resolved = resolve_intent(text)
    resolved["disabled"] = resolved["intent"] in get_config().disabled_intents
    return resolved


def operation_plan(
    *, owner: AbstractBaseUser, intent: str, slots: dict[str, Any], text: str = "", session: Session | None = None
) -> Operation:
    if intent not in INTENTS:
        raise InvalidInput(f"Unknown intent {intent!r}; choose one of {sorted(INTENTS)}.", field="intent")
    if intent in get_config().disabled_intents:
        raise InvalidInput(f"{intent} is disabled.", field="intent")
    preview = draft_for(intent, slots, text)
    # The preview shows the name the draft will have: one too long is refused now, naming where it
    # came from, rather than planned and then cut (or failed) at execution.
    preview["name"] = draft_name_checked(str(preview["name"]), field="slots.name" if slots.get("name") else "text")
    with transaction.atomic():
        operation = Operation.objects.create(owner=owner, session=session, intent=intent, slots=slots, preview=preview)
        # A preview is disposable: an owner keeps the newest PLANNED_KEPT unexecuted ones, so
        # planning in a loop cannot grow the table without bound (an older one then answers 404).
        older = list(
            Operation.objects.filter(owner_id=owner.pk, status=Operation.Status.PLANNED)
            .order_by("-id")
            .values_list("id", flat=True)[PLANNED_KEPT:]
        )
        if older:
            Operation.objects.filter(pk__in=older, status=Operation.Status.PLANNED).delete()
    return operation


def operation_execute(*, operation: Operation, actor: AbstractBaseUser, confirm: bool) -> Operation:
    """The one mutation: create the previewed draft. Nothing is approved or published here."""
    if not confirm:
        raise InvalidInput("Executing an operation needs confirm=true.", field="confirm")
    with transaction.atomic():
        operation = Operation.objects.select_for_update().get(pk=operation.pk)
        if operation.status != Operation.Status.PLANNED:
            raise Conflict(f"Operation is {operation.status}.", allowed=[])
        if operation.intent in get_config().disabled_intents:
            raise InvalidInput(f"{operation.intent} is disabled.", field="intent")
        try:
            draft = draft_create(owner=actor, session=operation.session, **operation.preview)
        except DomainError as exc:
            operation.status, operation.error = Operation.Status.FAILED, exc.message
        else:
            operation.status, operation.result = Operation.Status.EXECUTED, {"draft_id": draft.pk}
        operation.executed_at = timezone.now()
        operation.save()
        audit_record(
            actor=actor,
            action="assistant.operation_execute",
            target_type="assistant.operation",
            target_id=operation.pk,
            details={"intent": operation.intent, "status": operation.status, "result": operation.result},
        )
    return operation
