"""Build mode's "ask, then run": a mutating call the model proposes in a session set to ask is held
(stored exactly as proposed), shown to the session's owner, and runs only when they confirm —
through the same capability dispatch, with their own scopes, as any other call. Rejecting it tells
the model (on its next turn) that it was declined.

Authority: only the session's owner decides (anyone else, admins included, gets a 404); the
arguments that run are the stored ones; a call runs at most once (a second confirm returns the
recorded outcome); an old proposal expires rather than runs against a changed plant."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Max
from django.utils import timezone
from pydantic import ValidationError

from assistant.choices import PendingCallStatus, Role
from assistant.models import PendingToolCall, Run, Session
from assistant.services.sessions import message_create
from core.access import has_scopes, user_scopes
from core.agents.correlation import correlation_scope
from core.audit import audit_record
from core.capabilities import Capability, CapabilityContext, CapabilityResult, Tier, dispatch, registry
from core.errors import Conflict, NotFound
from core.events import publish
from core.models import AgentStep

P = PendingCallStatus
PENDING_TTL = timedelta(hours=2)  # a proposal older than this is not run: the plant may have moved on
RUNNING_GRACE = timedelta(minutes=10)  # a confirmed call still `running` after this lost its process
PREVIEW_FIELDS = 8


def tool_call_hold(
    *, session: Session, run: Run, cap: Capability, args: dict[str, Any], ctx: CapabilityContext
) -> tuple[PendingToolCall | None, CapabilityResult]:
    """Store a proposed mutating call for the owner's confirmation; what the model is told.

    A call that could never run (bad input, a scope the user lacks) is an error now, so the model
    can correct it, rather than a card the user confirms in vain."""
    if not has_scopes(ctx.user, cap.scopes):
        missing = sorted(set(cap.scopes) - user_scopes(ctx.user))
        return None, CapabilityResult(
            cap.tool_name, is_error=True, message=f"Permission denied: requires scope {', '.join(missing)}."
        )
    try:
        cap.input.model_validate(args)
    except ValidationError as exc:
        problem = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'input'}: {e['msg']}" for e in exc.errors())
        return None, CapabilityResult(cap.tool_name, is_error=True, message=f"Invalid input: {problem}")
    call = PendingToolCall.objects.create(
        session=session,
        run=run,
        agent_run_id=ctx.extra.get("run_id"),
        capability=cap.name,
        tool_name=cap.tool_name,
        tier=cap.tier.label,
        args=args,
        description=cap.description[:1000],
        changes=_changes(cap, args, ctx.user),
    )
    told = (
        f"Not run yet: {cap.tool_name} is waiting for the user's confirmation (pending call #{call.pk}). "
        "Tell the user what it will change; do not call it again."
    )
    return call, CapabilityResult(
        cap.tool_name, content={"summary": f"awaiting confirmation (#{call.pk})", "note": told}
    )


def _current_record(args: dict[str, Any], user: AbstractBaseUser | None) -> tuple[str, dict[str, Any]] | None:
    """The record a call's `<thing>_id` argument names, read through the matching read capability
    (`work_order_id` → get_work_order) with the user's own scopes: (id key, fields), or None."""
    for key, value in args.items():
        if not key.endswith("_id") or isinstance(value, bool) or not isinstance(value, int):
            continue
        reader = registry.get(f"get_{key.removesuffix('_id')}")
        if reader is None or reader.tier != Tier.READ:
            continue
        current = dispatch(reader.name, {key: value}, ctx=CapabilityContext(user=user)).content
        return (key, current) if isinstance(current, dict) else None
    return None


def _changes(cap: Capability, args: dict[str, Any], user: AbstractBaseUser | None) -> list[dict[str, Any]]:
    """Before → after for the fields the call sets (the card shows them); [] when no read
    capability shows the record."""
    record = _current_record(args, user)
    if record is None:
        return []
    key, current = record
    changes = []
    for field, after in args.items():
        shown = field.removeprefix("to_")  # to_status changes status
        if field != key and shown in current and current[shown] != after:
            changes.append({"field": shown, "before": current[shown], "after": after})
    return changes[:PREVIEW_FIELDS]


def _no_longer_holds(call: PendingToolCall, user: AbstractBaseUser) -> str:
    """What moved since the card was shown: each "before" the user saw that is no longer the
    current value, or "" if all still hold. Confirming approves the change the card showed, not
    whatever the call would now do to a record someone else changed (or closed) meanwhile."""
    if not call.changes:
        return ""
    record = _current_record(call.args, user)
    if record is None:
        return "the record it changes can no longer be read"
    current = record[1]
    moved = [
        f"{c['field']} was {c['before']!r} on the card, now {current.get(c['field'])!r}"
        for c in call.changes
        if current.get(c["field"]) != c["before"]
    ]
    return "; ".join(moved)


def pending_call_get(user: AbstractBaseUser, call_id: int) -> PendingToolCall:
    """Only the session's owner decides on its calls: anyone else (admins too) gets a 404."""
    call = PendingToolCall.objects.select_related("session").filter(pk=call_id, session__owner=user).first()
    if call is None:
        raise NotFound("Pending tool call not found.")
    return call


def _lock(user: AbstractBaseUser, call_id: int) -> PendingToolCall:
    call = PendingToolCall.objects.select_for_update(of=("self",)).filter(pk=call_id, session__owner=user).first()
    if call is None:
        raise NotFound("Pending tool call not found.")
    return call


def _decided(call: PendingToolCall, wanted: tuple[str, ...]) -> PendingToolCall | None:
    """A repeated decision returns the recorded outcome; the opposite one is a 409."""
    if call.status == P.PENDING:
        return None
    if call.status in wanted:
        return call
    raise Conflict(f"This call was already decided ({call.status}).", status=call.status, allowed=[])


def _expire(call: PendingToolCall, user: AbstractBaseUser, reason: str) -> bool:
    """Record the card as expired with why (refused once committed). Always True."""
    call.status, call.decided_by, call.decided_at = P.EXPIRED, user, timezone.now()
    call.error = reason[:500]
    call.save(update_fields=["status", "decided_by", "decided_at", "error"])
    return True


def _expired(call: PendingToolCall, user: AbstractBaseUser) -> bool:
    if call.created > timezone.now() - PENDING_TTL:
        return False
    return _expire(call, user, "expired: proposed more than two hours ago; ask again.")


def _stale(call: PendingToolCall, user: AbstractBaseUser) -> bool:
    moved = _no_longer_holds(call, user)
    return bool(moved) and _expire(call, user, f"no longer what the card showed: {moved}. Nothing was run; ask again.")


def tool_call_confirm(*, user: AbstractBaseUser, call_id: int) -> PendingToolCall:
    """pending → running → done | failed: dispatch the stored call with the owner's scopes, once."""
    with transaction.atomic():
        call = _lock(user, call_id)
        if (seen := _decided(call, (P.RUNNING, P.DONE, P.FAILED))) is not None:
            return seen
        expired = _expired(call, user) or _stale(call, user)  # recorded, then refused once committed
        if not expired:
            call.status, call.decided_by, call.decided_at = P.RUNNING, user, timezone.now()
            call.save(update_fields=["status", "decided_by", "decided_at"])
    if expired:
        raise Conflict(call.error, status=call.status, allowed=[])
    session = call.session
    ctx = CapabilityContext(
        user=user, agent="", extra={"session_id": session.pk, "pending_call_id": call.pk, "confirmed_by": user.pk}
    )
    with correlation_scope(session.correlation_id):
        result = dispatch(call.capability, call.args, ctx=ctx)
    call.status = P.FAILED if result.is_error else P.DONE
    call.result_summary = result.summary(500)
    call.error = result.message if result.is_error else ""
    with transaction.atomic():
        call.save(update_fields=["status", "result_summary", "error"])
        _record(call, user, "confirm", duration_ms=result.duration_ms)
    return call


def tool_call_reject(*, user: AbstractBaseUser, call_id: int, reason: str = "") -> PendingToolCall:
    """pending → rejected; the model is told on its next turn. Nothing runs."""
    with transaction.atomic():
        call = _lock(user, call_id)
        if (seen := _decided(call, (P.REJECTED, P.EXPIRED))) is not None:
            return seen
        call.status, call.decided_by, call.decided_at = P.REJECTED, user, timezone.now()
        call.error = reason.strip()[:500]
        call.save(update_fields=["status", "decided_by", "decided_at", "error"])
        _record(call, user, "reject")
    return call


def _record(call: PendingToolCall, user: AbstractBaseUser, decision: str, duration_ms: int = 0) -> None:
    """The audit row, the bus event (other tabs update the card), the step on the run that
    proposed it, and the note the model reads next turn."""
    audit_record(
        actor=user,
        action=f"assistant.tool_call.{decision}",
        target_type="assistant.pending_tool_call",
        target_id=call.pk,
        details={
            "session_id": call.session_id,
            "capability": call.capability,
            "args": call.args,
            "status": call.status,
            "result": call.result_summary or call.error,
        },
    )
    publish(
        "tool_call_decided",
        {"owner_id": call.session.owner_id, "call_id": call.pk, "session_id": call.session_id, "status": call.status},
    )
    if call.agent_run_id:
        index = (AgentStep.objects.filter(run_id=call.agent_run_id).aggregate(m=Max("index"))["m"] or 0) + 1
        AgentStep.objects.create(
            run_id=call.agent_run_id,
            index=index,
            kind="confirmed" if decision == "confirm" else "declined",
            tool=call.tool_name,
            args=call.args,
            result_summary=call.result_summary,
            is_error=call.status == P.FAILED,
            error=call.error,
            duration_ms=duration_ms,
        )
    message_create(
        session=call.session,
        role=Role.SYSTEM,
        content=decision_note(call),
        metadata={"tool_decision": {"id": call.pk, "tool": call.tool_name, "status": call.status}},
    )


def tool_calls_expire_stale() -> int:
    """The watchdog's share (assistant.expire_stale_runs): proposals past their TTL expire, and a
    confirmed call whose process died mid-run is closed as failed with that reason (never re-run:
    whether it changed anything is for the user to check). Returns how many were closed."""
    now = timezone.now()
    expired = PendingToolCall.objects.filter(status=P.PENDING, created__lt=now - PENDING_TTL).update(
        status=P.EXPIRED, decided_at=now, error="expired: proposed more than two hours ago; ask again."
    )
    lost = PendingToolCall.objects.filter(status=P.RUNNING, decided_at__lt=now - RUNNING_GRACE).update(
        status=P.FAILED, error="interrupted: the process running it stopped; check the target before asking again."
    )
    return expired + lost


def decision_note(call: PendingToolCall) -> str:
    """What the model reads about the user's decision on its next turn."""
    if call.status == P.DONE:
        return f"The user confirmed {call.tool_name} (call #{call.pk}); it ran: {call.result_summary}"
    if call.status == P.FAILED:
        return f"The user confirmed {call.tool_name} (call #{call.pk}) but it failed: {call.error}"
    why = f" Reason: {call.error}" if call.error else ""
    return f"The user declined {call.tool_name} (call #{call.pk}); it did not run.{why}"


def pending_call_out(call: PendingToolCall) -> dict[str, Any]:
    return {
        "id": call.pk,
        "session_id": call.session_id,
        "run_id": call.run_id,
        "tool": call.tool_name,
        "capability": call.capability,
        "tier": call.tier,
        "description": call.description,
        "args": call.args,
        "changes": call.changes,
        "status": call.status,
        "result_summary": call.result_summary,
        "error": call.error,
        "decided_at": call.decided_at,
        "created": call.created,
    }
