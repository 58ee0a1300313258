"""Management of change for a signal's alarm limits: lock, validate, write, audit, publish, re-evaluate.

`signal_limits_change` is the one write path for limits outside the admin; the admin's forms save
the row and record it with `signal_limits_edited` (the same audit record, event and re-evaluation).
`signal_limits_change` is called by the gated capability `sentinel.change_signal_limits` (a plan
step an approver must release), so it:

- locks the signal row and validates the NEW set against the limits it keeps
  (`sentinel.thresholds.limits_problem`) → `InvalidInput` naming the field;
- applies once per idempotency key (a plan step attempt): a retry with the same key answers the
  first application (`replayed=True`) from its audit record instead of applying again;
- writes one audit record `signal.limits_change` (requester, approver when known, before/after,
  reason, plan and step ids) and publishes `signal_limits_changed`;
- re-evaluates the signal's latest value against the new limits with the ordinary evaluation
  (`signals_evaluate`), so an open alarm now inside limit ± deadband clears and a value now beyond
  a limit raises — after its on-delay, like any other breach.

A request that changes nothing is a no-op: nothing written, no audit, no event.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from core.audit import audit_record
from core.errors import InvalidInput
from core.events import publish
from core.events.contract import _Payload, register_event_type
from core.models import AuditRecord
from sentinel.models import SignalDefinition
from sentinel.services.alarms import has_visible_character
from sentinel.services.evaluation import signals_evaluate
from sentinel.thresholds import Thresholds, limits_problem

LIMIT_FIELDS = ("low_alert", "alert", "high_alert", "trip", "deadband", "on_delay_seconds")
AUDIT_ACTION = "signal.limits_change"
AUDIT_TARGET = "sentinel.signal"
EVENT_TYPE = "signal_limits_changed"


class SignalLimitsChanged(_Payload):
    """Bus payload (docs/EVENTS.md): which signal, what changed (field → before/after), and why."""

    cell_id: int
    signal_def_id: int
    changes: dict[str, dict[str, float | int | None]]
    reason: str


def register_events() -> None:
    register_event_type(EVENT_TYPE, SignalLimitsChanged)


@dataclass
class LimitChange:
    signal_id: int
    cell_tag: str
    signal_key: str
    before: dict[str, Any]
    after: dict[str, Any]
    changed: list[str]
    alarms: dict[str, list[int]] = field(default_factory=lambda: {"raised": [], "escalated": [], "cleared": []})
    audit_id: int | None = None
    replayed: bool = False

    def summary(self) -> str:
        name = f"{self.cell_tag} {self.signal_key}"
        if not self.changed:
            return f"{name}: limits unchanged (already as requested)."
        moves = ", ".join(f"{f} {_fmt(self.before[f])} → {_fmt(self.after[f])}" for f in self.changed)
        alarms = "; ".join(f"{verb} alarm #{', #'.join(map(str, ids))}" for verb, ids in self.alarms.items() if ids)
        again = " (already applied by this step attempt)" if self.replayed else ""
        return f"{name}: {moves}{'; ' + alarms if alarms else ''}{again}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "signal_def_id": self.signal_id,
            "cell_tag": self.cell_tag,
            "signal_key": self.signal_key,
            "changed": self.changed,
            "before": self.before,
            "after": self.after,
            "alarms": self.alarms,
            "audit_id": self.audit_id,
            "replayed": self.replayed,
            "summary": self.summary(),
        }


def _fmt(value: Any) -> str:
    return "none" if value is None else f"{value:g}"


def _limits(signal: SignalDefinition) -> dict[str, Any]:
    return {name: getattr(signal, name) for name in LIMIT_FIELDS}


def _user_label(user: Any) -> str | None:
    if user is None:
        return None
    if isinstance(user, str):
        return user or None
    return user.get_username() if getattr(user, "is_authenticated", False) else None


def signal_for_change(
    *, signal_id: int | None = None, cell_tag: str | None = None, signal_key: str | None = None
) -> SignalDefinition:
    """The signal a limit change names: by id, or by cell tag + signal key. Unknown → InvalidInput
    naming the field that did not resolve."""
    if signal_id is not None:
        signal = SignalDefinition.objects.select_related("cell").filter(pk=signal_id).first()
        if signal is None:
            raise InvalidInput(f"signal_id: no signal {signal_id}.", field="signal_id")
        return signal
    if not cell_tag or not signal_key:
        raise InvalidInput("signal_id: give signal_id, or cell_tag and signal_key.", field="signal_id")
    signals = list(SignalDefinition.objects.select_related("cell").filter(cell__tag__iexact=cell_tag.strip()))
    if not signals:
        raise InvalidInput(f"cell_tag: no cell is tagged {cell_tag}.", field="cell_tag")
    signal = next((s for s in signals if s.key == signal_key.strip()), None)
    if signal is None:
        keys = ", ".join(sorted(s.key for s in signals))
        raise InvalidInput(f"signal_key: {cell_tag} has no signal {signal_key!r} (it has {keys}).", field="signal_key")
    return signal


def _replay(signal: SignalDefinition, idempotency_key: str) -> LimitChange | None:
    """The change this step attempt already applied, from its audit record."""
    if not idempotency_key:
        return None
    record = AuditRecord.objects.filter(
        action=AUDIT_ACTION,
        target_type=AUDIT_TARGET,
        target_id=str(signal.pk),
        details__idempotency_key=idempotency_key,
    ).first()
    if record is None:
        return None
    d = record.details
    return LimitChange(
        signal_id=signal.pk,
        cell_tag=signal.cell.tag,
        signal_key=signal.key,
        before=d["before"],
        after=d["after"],
        changed=d["changed"],
        audit_id=record.pk,
        replayed=True,
    )


def _validated(before: dict[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(changes) - set(LIMIT_FIELDS))
    if unknown:
        raise InvalidInput(f"{unknown[0]}: not a limit field (use {', '.join(LIMIT_FIELDS)}).", field=unknown[0])
    after = {**before, **{k: v for k, v in changes.items() if v is not None}}
    on_delay = after["on_delay_seconds"]
    if isinstance(on_delay, bool) or not isinstance(on_delay, int) or on_delay < 0:
        raise InvalidInput(
            f"on_delay_seconds: must be a whole number ≥ 0 (got {on_delay!r}).", field="on_delay_seconds"
        )
    changed = {k for k in changes if changes[k] is not None and changes[k] != before[k]}
    problem = limits_problem(Thresholds.of(after), changed=changed)
    if problem is not None:
        name, message = problem
        raise InvalidInput(message, field=name)
    return after


def signal_limits_change(
    *,
    signal: SignalDefinition | int,
    changes: Mapping[str, float | int | None],
    reason: str,
    actor: AbstractBaseUser | None,
    approved_by: AbstractBaseUser | str | None = None,
    idempotency_key: str = "",
    context: Mapping[str, Any] | None = None,
    now: datetime | None = None,
) -> LimitChange:
    """Change some of a signal's limits (None = keep). See the module docstring."""
    reason = _required_reason(reason)
    pk = signal.pk if isinstance(signal, SignalDefinition) else int(signal)
    with transaction.atomic():
        locked = _lock(pk)
        replayed = _replay(locked, idempotency_key)
        if replayed is not None:
            return replayed
        before = _limits(locked)
        after = _validated(before, changes)
        changed = [name for name in LIMIT_FIELDS if after[name] != before[name]]
        if changed:
            for name in changed:
                setattr(locked, name, after[name])
            locked.save(update_fields=changed)
        return _record(
            locked,
            before,
            after,
            reason=reason,
            actor=actor,
            approved_by=approved_by,
            idempotency_key=idempotency_key,
            context=context,
            now=now,
        )


def signal_limits_edited(
    *,
    signal: SignalDefinition | int,
    before: Mapping[str, float | int | None],
    reason: str,
    actor: AbstractBaseUser | None,
    now: datetime | None = None,
) -> LimitChange:
    """Record limits an admin form already saved (the change page, a changelist row, the cell's
    signal inline): `before` holds the values of the fields it changed as the form read them. The
    same audit record, `signal_limits_changed` event and re-evaluation as `signal_limits_change`, so
    the Control Room and every client see a limit change from either path; a form that saved the
    same values records nothing. The forms check the limits with the same rule (`limits_problem`)."""
    reason = _required_reason(reason)
    unknown = sorted(set(before) - set(LIMIT_FIELDS))
    if unknown:
        raise InvalidInput(f"{unknown[0]}: not a limit field (use {', '.join(LIMIT_FIELDS)}).", field=unknown[0])
    pk = signal.pk if isinstance(signal, SignalDefinition) else int(signal)
    with transaction.atomic():
        locked = _lock(pk)
        after = _limits(locked)
        return _record(locked, {**after, **before}, after, reason=reason, actor=actor, now=now)


def _required_reason(reason: str) -> str:
    reason = (reason or "").strip()
    if not has_visible_character(reason):  # zero-width characters read as no reason at all
        raise InvalidInput("reason: a limit change needs a reason (management of change).", field="reason")
    return reason


def _lock(pk: int) -> SignalDefinition:
    # `of=self`: lock the signal row only, not its cell.
    return SignalDefinition.objects.select_for_update(of=("self",)).select_related("cell").get(pk=pk)


def _record(
    locked: SignalDefinition,
    before: dict[str, Any],
    after: dict[str, Any],
    *,
    reason: str,
    actor: AbstractBaseUser | None,
    approved_by: AbstractBaseUser | str | None = None,
    idempotency_key: str = "",
    context: Mapping[str, Any] | None = None,
    now: datetime | None = None,
) -> LimitChange:
    """The limits written (`before` → `after`, under the row lock): the audit record, the event and
    the re-evaluation of the signal's latest value. Nothing when no limit differs."""
    changed = [name for name in LIMIT_FIELDS if after[name] != before[name]]
    change = LimitChange(locked.pk, locked.cell.tag, locked.key, before, after, changed)
    if not changed:
        return change
    context = dict(context or {})
    # The change is recorded before its consequences: the alarm transitions follow it in the chain.
    record = audit_record(
        actor=actor,
        action=AUDIT_ACTION,
        target_type=AUDIT_TARGET,
        target_id=locked.pk,
        details={
            "cell_tag": locked.cell.tag,
            "signal_key": locked.key,
            "before": before,
            "after": after,
            "changed": changed,
            "reason": reason,
            "requested_by": _user_label(actor),
            "approved_by": _user_label(approved_by),
            "plan_id": context.get("plan_id"),
            "step_id": context.get("step_id"),
            "idempotency_key": idempotency_key,
        },
    )
    change.audit_id = record.pk
    publish(
        EVENT_TYPE,
        {
            "cell_id": locked.cell_id,
            "signal_def_id": locked.pk,
            "changes": {name: {"before": before[name], "after": after[name]} for name in changed},
            "reason": reason,
        },
    )
    evaluation = signals_evaluate(signal_ids=[locked.pk], now=now or timezone.now())
    change.alarms = {"raised": evaluation.raised, "escalated": evaluation.escalated, "cleared": evaluation.cleared}
    return change
